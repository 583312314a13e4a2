package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// promRulesFile is the shipped rules file, from test/e2e.
func promRulesFile(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(e2eDir(t), "..", "..", "deploy", "prometheus", "mcpgw-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("shipped rules: %v", err)
	}
	return p
}

// Prometheus is a prometheus server started by startPrometheus.
type Prometheus struct {
	*Proc
	Base string
}

// startPrometheus runs Debian's prometheus (make peers) with its TSDB in a temp dir on a
// loopback port, scraping target (host:port) every second under job "mcpgw" and loading
// rules. It is stopped by pid at cleanup (startProcess).
// startPrometheus scrapes target with the bearer token in credentials (docs/metrics.md: a
// Prometheus that is not the gateway's own user is admitted by an admin credential).
func startPrometheus(t testing.TB, target, credentials, rules string) *Prometheus {
	t.Helper()
	bin := peers.Command(t, "prometheus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	// evaluation_interval 1s: the rule groups are evaluated (and report health) within a
	// second of loading.
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: mcpgw
    authorization:
      credentials_file: %q
    static_configs:
      - targets: [%q]
`, rules, credentials, target)), 0o600); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		port := freePort(t)
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p := startProcess(t, "prometheus", bin, []string{
			"--config.file=" + cfg,
			"--storage.tsdb.path=" + filepath.Join(dir, fmt.Sprintf("data-%d", attempt)),
			"--web.listen-address=" + addr,
			"--web.enable-lifecycle",
		}, nil)
		lastErr = waitHTTP(p, "http://"+addr+"/-/ready", http.StatusOK, readyTimeout)
		if lastErr == nil {
			return &Prometheus{Proc: p, Base: "http://" + addr}
		}
		if !addrInUse(p) {
			break
		}
		t.Logf("prometheus: port %d was taken, retrying", port)
	}
	t.Fatalf("prometheus did not become ready: %v", lastErr)
	return nil
}

// promSample is one element of an instant vector from /api/v1/query.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (s promSample) float() float64 {
	v, _ := s.Value[1].(string)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return -1
	}
	return f
}

// promGet GETs path from Prometheus's HTTP API and decodes data into out.
func (p *Prometheus) get(path string, q url.Values, out any) error {
	c := &http.Client{Timeout: 5 * time.Second}
	u := p.Base + path
	if q != nil {
		u += "?" + q.Encode()
	}
	resp, err := c.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return fmt.Errorf("GET %s: %s: %v", path, resp.Status, err)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %s: %s", path, env.Status, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// query runs an instant PromQL query and returns its vector.
func (p *Prometheus) query(expr string) ([]promSample, error) {
	var data struct {
		ResultType string       `json:"resultType"`
		Result     []promSample `json:"result"`
	}
	if err := p.get("/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("%s: result type %s, want vector", expr, data.ResultType)
	}
	return data.Result, nil
}

// waitQuery polls expr (bounded by timeout) until ok accepts its result.
func (p *Prometheus) waitQuery(t testing.TB, expr string, timeout time.Duration, ok func([]promSample) bool) []promSample {
	t.Helper()
	var last []promSample
	var lastErr error
	if _, done := waitFor(timeout, func() (bool, string) {
		last, lastErr = p.query(expr)
		return lastErr == nil && ok(last), ""
	}); !done {
		t.Fatalf("Prometheus query %s: no acceptable answer within %s (last: %v, error %v)", expr, timeout, last, lastErr)
	}
	return last
}

// TestPrometheusScrapesGateway: a real Prometheus (Debian's, own temp dir, loopback port)
// scrapes bin/mcpgw every second with the shipped rules loaded. After a go-sdk client's
// calls as agent a1 (full lists) and a list as agent a2 (thin lists), Prometheus's HTTP API
// answers the call counter for that agent and tool, a p99 from the duration histogram and
// the list token series of each agent and form and the tokens thin lists saved, sessions by
// agent, and lists the shipped rule groups, healthy.
func TestPrometheusScrapesGateway(t *testing.T) {
	needGatewayBin(t)
	peers.Command(t, "prometheus")
	everythingServer(t)
	rules := promRulesFile(t)
	g := startGateway(t, `
log: {level: info, format: text}
servers:
  everything: {type: stdio, command: {{everything_server}}}
agents:
  a1: {servers: [everything], handshake: full}
  a2: {servers: [everything], handshake: thin}
`)
	prom := startPrometheus(t, g.Addr, filepath.Join(g.StateDir, "local-token"), rules)

	const calls = 3
	a1 := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL, HTTPClient: httpClientWith(map[string]string{"X-Agent-ID": "a1"})})
	if names := a1.toolNames(t); len(names) == 0 {
		t.Fatal("a1 lists no tools")
	}
	for i := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		r, err := a1.CallTool(ctx, &mcp.CallToolParams{Name: "everything__test_simple_text"})
		cancel()
		if err != nil || r.IsError {
			t.Fatalf("call %d: %v (result %+v)", i, err, r)
		}
	}
	a2 := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL, HTTPClient: httpClientWith(map[string]string{"X-Agent-ID": "a2"})})
	if names := a2.toolNames(t); len(names) == 0 {
		t.Fatal("a2 lists no tools")
	}

	const wait = 30 * time.Second
	// The counter for that agent and tool, at the number of calls made.
	calledExpr := `mcpgw_tool_calls_total{job="mcpgw",agent="a1",server="everything",tool="test_simple_text",outcome="ok"}`
	got := prom.waitQuery(t, calledExpr, wait, func(r []promSample) bool { return len(r) == 1 && r[0].float() == calls })
	if got[0].Metric["instance"] != g.Addr {
		t.Errorf("scraped instance %q, want the gateway %s", got[0].Metric["instance"], g.Addr)
	}
	// A latency quantile from the histogram: finite and positive (the calls took some time,
	// less than the histogram's top bucket).
	p99Expr := `histogram_quantile(0.99, sum by (le) (mcpgw_tool_call_duration_seconds_bucket{job="mcpgw",server="everything",tool="test_simple_text"}))`
	got = prom.waitQuery(t, p99Expr, wait, func(r []promSample) bool { return len(r) == 1 && r[0].float() > 0 })
	if v := got[0].float(); v > 60 {
		t.Errorf("p99 = %v s, want a finite quantile under the top bucket", v)
	}
	// The list token series per agent and form: a1's full list costs more tokens than a2's
	// thin one, a2's thin list saved tokens, and a1's full one saved none.
	tokenOf := func(agent, form string) float64 {
		expr := fmt.Sprintf(`mcpgw_tools_list_estimated_tokens_total{job="mcpgw",agent=%q,form=%q}`, agent, form)
		return prom.waitQuery(t, expr, wait, func(r []promSample) bool { return len(r) == 1 && r[0].float() > 0 })[0].float()
	}
	full, thin := tokenOf("a1", "full"), tokenOf("a2", "thin")
	if thin >= full {
		t.Errorf("a2's thin list cost %v tokens, a1's full one %v: want thin smaller", thin, full)
	}
	saved := prom.waitQuery(t, `mcpgw_tools_list_tokens_saved_total{job="mcpgw",agent="a2"}`, wait,
		func(r []promSample) bool { return len(r) == 1 })[0].float()
	if saved <= 0 || saved > full {
		t.Errorf("a2's thin list saved %v tokens, want more than 0 and at most the full list's %v", saved, full)
	}
	if r, err := prom.query(`mcpgw_tools_list_tokens_saved_total{job="mcpgw",agent="a1"}`); err != nil || len(r) != 0 {
		t.Errorf("a1 (full lists) has saved-token series %v (error %v), want none", r, err)
	}
	// Live sessions by agent and transport: one each.
	for _, agent := range []string{"a1", "a2"} {
		prom.waitQuery(t, fmt.Sprintf(`mcpgw_sessions_active{job="mcpgw",agent=%q,transport="streamable"}`, agent), wait,
			func(r []promSample) bool { return len(r) == 1 && r[0].float() == 1 })
	}

	// The shipped rules are loaded, and every rule has been evaluated without error.
	want := map[string]bool{"mcpgw.recording": false, "mcpgw.alerts": false}
	var lastRules string
	if _, ok := waitFor(wait, func() (bool, string) {
		var data struct {
			Groups []struct {
				Name  string `json:"name"`
				File  string `json:"file"`
				Rules []struct {
					Name   string `json:"name"`
					Health string `json:"health"`
					Error  string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		}
		if err := prom.get("/api/v1/rules", nil, &data); err != nil {
			lastRules = err.Error()
			return false, ""
		}
		var b strings.Builder
		healthy := 0
		for _, grp := range data.Groups {
			ok := grp.File == rules && len(grp.Rules) > 0
			for _, r := range grp.Rules {
				fmt.Fprintf(&b, "%s/%s: %s %s; ", grp.Name, r.Name, r.Health, r.Error)
				ok = ok && r.Health == "ok"
			}
			if _, known := want[grp.Name]; known && ok {
				healthy++
			}
		}
		lastRules = b.String()
		return healthy == len(want), ""
	}); !ok {
		t.Fatalf("/api/v1/rules: want groups %v from %s, every rule health ok; got %s", want, rules, lastRules)
	}
	// A recording rule evaluated over the scraped series: the per-agent call rate exists.
	prom.waitQuery(t, `mcpgw:tool_calls:rate5m{agent="a1",tool="test_simple_text"}`, wait, func(r []promSample) bool { return len(r) == 1 })
	// The store is up, so its alert's series says 1.
	prom.waitQuery(t, `mcpgw_store_up{job="mcpgw"}`, wait, func(r []promSample) bool { return len(r) == 1 && r[0].float() == 1 })
}
