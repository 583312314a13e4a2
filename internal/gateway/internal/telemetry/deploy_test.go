package telemetry_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/peers"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/statedir"
	"github.com/mcpgw/mcpgw/internal/store"
)

// The operator's files under deploy/: the Grafana dashboard's queries must name series the
// gateway serves (or recording rules the shipped rules define) and parse as PromQL, and the
// Kubernetes scrape settings must point at the port and path the gateway serves /metrics on.

const (
	dashboardFile      = "../../../../deploy/grafana/mcpgw-dashboard.json"
	k8sFile            = "../../../../deploy/kubernetes/mcpgw.yaml"
	serviceMonitorFile = "../../../../deploy/kubernetes/mcpgw-servicemonitor.yaml"
)

// dashboardQuery is one query of a dashboard: a panel target's PromQL or a template
// variable's label_values(…).
type dashboardQuery struct {
	where string // panel title and refId, or variable name
	expr  string
	vars  bool // a variable query (Grafana's label_values syntax), not PromQL
}

// dashboardQueries walks a dashboard's panels (rows' nested panels too) and variables.
func dashboardQueries(b []byte) ([]dashboardQuery, error) {
	type target struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	}
	type panel struct {
		Title   string   `json:"title"`
		Type    string   `json:"type"`
		Targets []target `json:"targets"`
		Panels  []panel  `json:"panels"`
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	var out []dashboardQuery
	var walk func([]panel) error
	walk = func(ps []panel) error {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				return fmt.Errorf("panel %q has no queries", p.Title)
			}
			for _, t := range p.Targets {
				if strings.TrimSpace(t.Expr) == "" {
					return fmt.Errorf("panel %q target %s has no expr", p.Title, t.RefID)
				}
				out = append(out, dashboardQuery{where: p.Title + "/" + t.RefID, expr: t.Expr})
			}
			if err := walk(p.Panels); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(d.Panels); err != nil {
		return nil, err
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &q) != nil {
			_ = json.Unmarshal(v.Query, &q.Query) // older dashboards: a plain string
		}
		out = append(out, dashboardQuery{where: "variable " + v.Name, expr: q.Query, vars: true})
	}
	return out, nil
}

// servedLabels is each mcpgw_ series the gateway registers with its labels.
func servedLabels(t *testing.T) map[string][]string {
	t.Helper()
	descRE := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)
	out := map[string][]string{}
	ch := make(chan *prometheus.Desc, 64)
	for _, c := range telemetry.NewMetrics("all").Collectors() {
		go func() { c.Describe(ch); ch <- nil }()
		for d := <-ch; d != nil; d = <-ch {
			m := descRE.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("cannot read descriptor %s", d)
			}
			var labels []string
			if m[2] != "" {
				labels = strings.Split(m[2], ",")
			}
			out[m[1]] = labels
		}
	}
	return out
}

var (
	grafanaVarRE   = regexp.MustCompile(`\$(__rate_interval|__interval|__range)\b`)
	grafanaQuoted  = regexp.MustCompile(`"[^"]*\$[^"]*"`)
	labelValuesRE  = regexp.MustCompile(`^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)
	stripQuotedRE  = regexp.MustCompile(`"[^"]*"`)
	grafanaAnyVar  = regexp.MustCompile(`\$\{?[a-zA-Z_]`)
	promqlRuleName = "dashboard:query_"
)

// toPromQL makes a panel query plain PromQL: Grafana's interval variables become 5m and
// label matchers holding a variable match anything.
func toPromQL(expr string) string {
	expr = grafanaVarRE.ReplaceAllString(expr, "5m")
	return grafanaQuoted.ReplaceAllString(expr, `".*"`)
}

// checkDashboard returns what is wrong with a dashboard's queries: a series the gateway
// does not serve, a recording rule the shipped rules do not define, a label_values label
// its series does not carry, a variable left in a query. PromQL syntax is checked apart
// (promtoolCheck), on the queries it returns.
func checkDashboard(t *testing.T, b []byte, served map[string]bool, labels map[string][]string, recorded map[string]bool) (problems []string, promql []string) {
	t.Helper()
	qs, err := dashboardQueries(b)
	if err != nil {
		return []string{err.Error()}, nil
	}
	if len(qs) == 0 {
		return []string{"the dashboard has no queries"}, nil
	}
	for _, q := range qs {
		expr := q.expr
		if q.vars {
			m := labelValuesRE.FindStringSubmatch(strings.TrimSpace(expr))
			if m == nil {
				problems = append(problems, fmt.Sprintf("%s: %q is not label_values(series, label)", q.where, expr))
				continue
			}
			expr = m[1]
			name := seriesRE.FindString(stripQuotedRE.ReplaceAllString(expr, `""`))
			if l, ok := labels[name]; ok && !slices.Contains(l, m[2]) && m[2] != "job" && m[2] != "instance" {
				problems = append(problems, fmt.Sprintf("%s: %s has no label %s (it has %v)", q.where, name, m[2], l))
			}
		}
		pq := toPromQL(expr)
		if grafanaAnyVar.MatchString(stripQuotedRE.ReplaceAllString(pq, `""`)) {
			problems = append(problems, fmt.Sprintf("%s: a Grafana variable outside a label matcher: %s", q.where, q.expr))
			continue
		}
		bare := stripQuotedRE.ReplaceAllString(pq, `""`)
		names := append(seriesRE.FindAllString(bare, -1), recordRE.FindAllString(bare, -1)...)
		if len(names) == 0 {
			problems = append(problems, fmt.Sprintf("%s: names no series: %s", q.where, q.expr))
		}
		for _, n := range names {
			switch {
			case strings.Contains(n, ":"):
				if !recorded[n] {
					problems = append(problems, fmt.Sprintf("%s: %s is no recording rule of %s", q.where, n, rulesFile))
				}
			case !served[n]:
				problems = append(problems, fmt.Sprintf("%s: %s is not served on /metrics", q.where, n))
			}
		}
		promql = append(promql, pq)
	}
	return problems, promql
}

// promtoolCheck parses exprs with Prometheus's own parser: promtool check rules on a rules
// file with each as a recording rule. It returns promtool's complaint, if any.
func promtoolCheck(t *testing.T, exprs []string) string {
	t.Helper()
	bin := peers.Command(t, "promtool")
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	for i, e := range exprs {
		rules = append(rules, rule{promqlRuleName + strconv.Itoa(i), e})
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "check", "rules", f).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("promtool check rules: %v\n%s", err, out)
	}
	return ""
}

func rulesRecorded(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	_, recorded := rulesSeries(t, b)
	return recorded
}

// TestDashboardNamesRealSeries: every query of the shipped Grafana dashboard parses as
// PromQL (promtool) and names only series the gateway serves or recording rules the shipped
// rules define; its variables' label_values name labels their series carry.
func TestDashboardNamesRealSeries(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	problems, exprs := checkDashboard(t, b, servedNames(t), servedLabels(t), rulesRecorded(t))
	for _, p := range problems {
		t.Error(p)
	}
	if len(exprs) < 10 {
		t.Fatalf("only %d queries found in %s", len(exprs), dashboardFile)
	}
	if msg := promtoolCheck(t, exprs); msg != "" {
		t.Error(msg)
	}
	// The dashboard shows what it is meant to: each of these series is queried.
	all := strings.Join(exprs, "\n")
	for _, want := range []string{"mcpgw_tool_calls_total", "mcpgw_tool_call_duration_seconds_bucket",
		"mcpgw_tools_list_estimated_tokens_total", "mcpgw_tools_list_tokens_saved_total", "mcpgw_sessions_active",
		"mcpgw_upstream_up", "mcpgw_upstream_queue_depth", "mcpgw_upstream_queue_wait_seconds_bucket"} {
		if !strings.Contains(all, want) {
			t.Errorf("the dashboard does not query %s", want)
		}
	}
}

// TestDashboardCheckCatchesMistakes: the checks above fail on a renamed series, an
// undefined recording rule, a label a series lacks, and a query that is not PromQL.
func TestDashboardCheckCatchesMistakes(t *testing.T) {
	bad := []byte(`{"panels":[{"type":"row","title":"r","panels":[
	  {"type":"timeseries","title":"p","targets":[
	    {"refId":"A","expr":"sum(rate(mcpgw_tool_calls{agent=~\"$agent\"}[$__rate_interval]))"},
	    {"refId":"B","expr":"mcpgw:not_recorded"}]}]},
	  {"type":"timeseries","title":"q","targets":[{"refId":"A","expr":"sum by (agent (mcpgw_sessions_active)"}]}],
	 "templating":{"list":[{"name":"v","type":"query","query":{"query":"label_values(mcpgw_upstream_up, agent)"}}]}}`)
	problems, exprs := checkDashboard(t, bad, servedNames(t), servedLabels(t), rulesRecorded(t))
	joined := strings.Join(problems, "\n")
	for _, want := range []string{"mcpgw_tool_calls is not served", "mcpgw:not_recorded is no recording rule", "mcpgw_upstream_up has no label agent"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems %q do not say %q", joined, want)
		}
	}
	if msg := promtoolCheck(t, exprs); !strings.Contains(msg, `"dashboard:query_2": could not parse`) {
		t.Errorf("promtool accepted a query with an unclosed by (…): %q", msg)
	}
}

// k8sDocs decodes every document of a multi-document YAML file.
func k8sDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var d map[string]any
		if err := dec.Decode(&d); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("%s: %v", path, err)
		}
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

// dig follows keys (strings for maps, ints for lists) through decoded YAML.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func find(docs []map[string]any, kind, name string) map[string]any {
	for _, d := range docs {
		if d["kind"] == kind && dig(d, "metadata", "name") == name {
			return d
		}
	}
	return nil
}

// metricsPathServed asserts that a gateway's handler answers Prometheus text on path.
func metricsPathServed(t *testing.T, path string) {
	t.Helper()
	dir := t.TempDir()
	cfg, _, err := config.Parse([]byte("listen: 127.0.0.1:1\nstate_dir: " + dir + "\nauth: {audit: {path: \"off\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := registry.New(cfg, log)
	defer reg.Close()
	g, err := gateway.New(cfg, reg, store.NewMemory(), log)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	rec := httptest.NewRecorder()
	// In mode none a scraper that is not the owner sends the local token (docs/metrics.md).
	tok, err := statedir.ReadToken(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	g.Handler().ServeHTTP(rec, r)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "# TYPE mcpgw_store_up gauge") {
		t.Errorf("GET %s: HTTP %d, not the gateway's metrics", path, rec.Code)
	}
}

// TestKubernetesScrapeSettings: the manifest's prometheus.io annotations and the
// ServiceMonitor point at the container port the ConfigMap's listen address uses and at
// the path the gateway serves /metrics on.
func TestKubernetesScrapeSettings(t *testing.T) {
	docs := k8sDocs(t, k8sFile)
	cm, dep, svc := find(docs, "ConfigMap", "mcpgw"), find(docs, "Deployment", "mcpgw"), find(docs, "Service", "mcpgw")
	if cm == nil || dep == nil || svc == nil {
		t.Fatalf("%s: want ConfigMap, Deployment and Service named mcpgw", k8sFile)
	}
	var gwCfg struct {
		Listen string `yaml:"listen"`
	}
	cfgText, _ := dig(cm, "data", "mcpgw.yaml").(string)
	if err := yaml.Unmarshal([]byte(cfgText), &gwCfg); err != nil || gwCfg.Listen == "" {
		t.Fatalf("ConfigMap mcpgw.yaml has no listen address (%v)", err)
	}
	_, listenPort, _ := strings.Cut(gwCfg.Listen, ":")
	container := dig(dep, "spec", "template", "spec", "containers", 0)
	var portName string
	for _, p := range dig(container, "ports").([]any) {
		if fmt.Sprint(dig(p, "containerPort")) == listenPort {
			portName, _ = dig(p, "name").(string)
		}
	}
	if portName == "" {
		t.Fatalf("no named container port is the listen port %s", listenPort)
	}

	ann, _ := dig(dep, "spec", "template", "metadata", "annotations").(map[string]any)
	if ann["prometheus.io/scrape"] != "true" {
		t.Errorf("pod annotation prometheus.io/scrape = %v, want \"true\"", ann["prometheus.io/scrape"])
	}
	if got := fmt.Sprint(ann["prometheus.io/port"]); got != listenPort {
		t.Errorf("pod annotation prometheus.io/port = %s, want the listen port %s", got, listenPort)
	}
	path, _ := ann["prometheus.io/path"].(string)
	if path != "/metrics" {
		t.Errorf("pod annotation prometheus.io/path = %q, want /metrics", path)
	}
	metricsPathServed(t, path)

	// ServiceMonitor: selects the Service by its labels, names the Service's port that
	// targets the container's listen port, and the metrics path.
	sms := k8sDocs(t, serviceMonitorFile)
	if len(sms) != 1 || sms[0]["kind"] != "ServiceMonitor" || sms[0]["apiVersion"] != "monitoring.coreos.com/v1" {
		t.Fatalf("%s: want one monitoring.coreos.com/v1 ServiceMonitor", serviceMonitorFile)
	}
	sm := sms[0]
	sel, _ := dig(sm, "spec", "selector", "matchLabels").(map[string]any)
	svcLabels, _ := dig(svc, "metadata", "labels").(map[string]any)
	if len(sel) == 0 {
		t.Fatal("ServiceMonitor selects no labels")
	}
	for k, v := range sel {
		if svcLabels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%v; the Service's labels are %v", k, v, svcLabels)
		}
	}
	ep := dig(sm, "spec", "endpoints", 0)
	epPort, _ := dig(ep, "port").(string)
	found := false
	for _, p := range dig(svc, "spec", "ports").([]any) {
		if dig(p, "name") == epPort && dig(p, "targetPort") == portName {
			found = true
		}
	}
	if !found {
		t.Errorf("ServiceMonitor endpoint port %q is no Service port targeting the container port %q", epPort, portName)
	}
	smPath, _ := dig(ep, "path").(string)
	if smPath != "/metrics" {
		t.Errorf("ServiceMonitor path = %q, want /metrics", smPath)
	}
	metricsPathServed(t, smPath)
}
