package e2e

// Accountability and change: the audit log and metrics count each call and denial once,
// explain agrees with the admin API and with what a session sees, and a config reload
// tells only the sessions whose view changed (docs/auth.md).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuditAndMetricsOnce: a permitted call and a call of a tool hidden by tools.deny each
// appear exactly once in the audit log and in /metrics.
func TestAuditAndMetricsOnce(t *testing.T) {
	needGatewayBin(t)
	nodeBinPath := node(t)
	everything := serverEverythingScript(t)
	g := startGateway(t, `
log: {level: info, format: text}
servers:
  everything:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(everything)+`]
agents:
  a1:
    servers: [everything]
    tools: {deny: ["everything__get-sum"]}
`)
	auditPath := filepath.Join(g.StateDir, "audit.jsonl")
	s := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Conversation-ID": "conv-e2e"})
	names := s.tools(t)
	if slices.Contains(names, "everything__get-sum") || !slices.Contains(names, "everything__echo") {
		t.Fatalf("a1's tools: %v", names)
	}
	ok := s.callTool(t, "everything__echo", map[string]any{"message": "audited"})
	if ok.Reply == nil || ok.Reply.Error != nil {
		t.Fatalf("echo: %s", ok)
	}
	if text, isErr := toolResultText(ok.Reply.Result); isErr || !strings.Contains(text, "audited") {
		t.Fatalf("echo answered %q (isError %v)", text, isErr)
	}
	denied := s.callTool(t, "everything__get-sum", map[string]any{"a": 1, "b": 2})
	if denied.Reply == nil || denied.Reply.Error == nil || denied.Reply.Error.Code != -32602 {
		t.Fatalf("hidden get-sum: %s, want -32602", denied)
	}

	// The writer flushes every 200 ms: wait for both lines, then a little longer to see
	// that nothing is written twice.
	isCall := func(l auditLine) bool { return l.Kind == "call" && l.Tool == "everything__echo" }
	isDenial := func(l auditLine) bool { return l.Kind == "denial" && l.Tool == "everything__get-sum" }
	desc, found := waitFor(10*time.Second, func() (bool, string) {
		lines := readAudit(t, auditPath)
		return countAudit(lines, isCall) >= 1 && countAudit(lines, isDenial) >= 1, fmt.Sprintf("%d lines: %+v", len(lines), lines)
	})
	if !found {
		t.Fatalf("audit log lacks the call or the denial: %s", desc)
	}
	m, err := getMetrics(g) // counted as the requests were handled: no wait needed
	if err != nil {
		t.Fatal(err)
	}
	lines := auditWhenStopped(t, g, auditPath)
	if len(lines) != 2 || countAudit(lines, isCall) != 1 || countAudit(lines, isDenial) != 1 {
		t.Errorf("audit log: want exactly one call and one denial, got %d lines: %+v", len(lines), lines)
	}
	for _, l := range lines {
		if l.Agent != "a1" || l.Conversation != "conv-e2e" || l.Session != s.ID || l.Time.IsZero() || l.DurationMS == nil {
			t.Errorf("audit line lacks agent a1, conversation conv-e2e, session %s, time or duration: %+v", s.ID, l)
		}
		switch {
		case isCall(l):
			if l.Upstream != "everything" || l.Outcome != "ok" {
				t.Errorf("call line: %+v", l)
			}
		case isDenial(l):
			if l.Outcome == "ok" || !strings.Contains(l.Rule, "tools.deny") || !strings.Contains(l.Rule, "everything__get-sum") {
				t.Errorf("denial line should name the deny rule: %+v", l)
			}
		}
	}

	if v, ok := metricValue(m, "mcpgw_tool_calls_total", map[string]string{"agent": "a1", "server": "everything", "tool": "echo", "outcome": "ok"}); !ok || v != 1 {
		t.Errorf(`mcpgw_tool_calls_total{agent="a1",server="everything",tool="echo",outcome="ok"} = %v (found %v), want 1`, v, ok)
	}
	if v, ok := metricValue(m, "mcpgw_denials_total", map[string]string{"agent": "a1", "reason": "hidden_tool"}); !ok || v != 1 {
		t.Errorf(`mcpgw_denials_total{agent="a1",reason="hidden_tool"} = %v (found %v), want 1`, v, ok)
	}
	total := func(name string) float64 {
		sum := 0.0
		for _, line := range strings.Split(m, "\n") {
			if strings.HasPrefix(line, name+"{") || strings.HasPrefix(line, name+" ") {
				var v float64
				if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v); err == nil {
					sum += v
				}
			}
		}
		return sum
	}
	if n := total("mcpgw_tool_calls_total"); n != 1 {
		t.Errorf("mcpgw_tool_calls_total sums to %v over all series, want 1 (the denied call must not count as a call)", n)
	}
	if n := total("mcpgw_denials_total"); n != 1 {
		t.Errorf("mcpgw_denials_total sums to %v over all series, want 1", n)
	}
	if t.Failed() {
		for _, line := range strings.Split(m, "\n") {
			if strings.HasPrefix(line, "mcpgw_tool_calls_total") || strings.HasPrefix(line, "mcpgw_denials_total") {
				t.Log(line)
			}
		}
	}
}

// agentView is the JSON of `mcpgw explain --json` and GET /api/agents/{id}/view.
type agentView struct {
	Agent    string         `json:"agent"`
	Task     string         `json:"task"`
	Servers  []string       `json:"servers"`
	Warnings []string       `json:"warnings"`
	Tools    []toolDecision `json:"tools"`
	Admitted int            `json:"admitted"`
	Hidden   int            `json:"hidden"`
}

type toolDecision struct {
	Tool     string `json:"tool"`
	Server   string `json:"server"`
	Admitted bool   `json:"admitted"`
	Rule     string `json:"rule"`
}

func (v *agentView) byTool() map[string]toolDecision {
	m := map[string]toolDecision{}
	for _, d := range v.Tools {
		m[d.Tool] = d
	}
	return m
}

// TestExplain: `mcpgw explain --json` for agent a1 in task-a lists every tool of every
// server, admitted or hidden with the rule (servers outside the task; a deny glob, named),
// and the admin API's view gives the same decisions, which a real session then shows.
func TestExplain(t *testing.T) {
	needGatewayBin(t)
	nodeBinPath := node(t)
	everything := serverEverythingScript(t)
	fsScript := npmServerScript(t, "server-filesystem")
	memScript := npmServerScript(t, "server-memory")
	work := t.TempDir()
	allowed := filepath.Join(work, "allowed")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, `
log: {level: info, format: text}
servers:
  everything:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(everything)+`]
  filesystem:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(fsScript)+`, `+yamlQuote(allowed)+`]
  memory:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(memScript)+`]
    env: {MEMORY_FILE_PATH: `+yamlQuote(filepath.Join(work, "memory.jsonl"))+`}
agents:
  a1:
    servers: [everything, filesystem, memory]
    tools: {deny: ["*get-sum"]}
tasks:
  task-a: {enabled_mcp_servers: [everything]}
`)
	rz, err := getReadyz(g)
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runMcpgw(t, 90*time.Second, "explain", "--agent", "a1", "--task", "task-a", "--config", g.Config, "--json")
	if code != 0 {
		t.Fatalf("mcpgw explain: exit %d: %s", code, errOut)
	}
	var cli agentView
	if err := json.Unmarshal([]byte(out), &cli); err != nil {
		t.Fatalf("mcpgw explain --json: %v: %s", err, out)
	}
	if cli.Agent != "a1" || cli.Task != "task-a" || !slices.Equal(cli.Servers, []string{"everything"}) {
		t.Errorf("explain: agent %q task %q servers %v", cli.Agent, cli.Task, cli.Servers)
	}
	perServer := map[string]int{}
	admitted := 0
	for _, d := range cli.Tools {
		perServer[d.Server]++
		if d.Admitted {
			admitted++
		}
		if d.Rule == "" {
			t.Errorf("explain: %s has no rule", d.Tool)
		}
		switch {
		case d.Tool == "*":
			t.Errorf("explain: server %s has no catalogue: %s", d.Server, d.Rule)
		case d.Server == "filesystem" || d.Server == "memory":
			if d.Admitted || !strings.Contains(d.Rule, "task-a") || !strings.Contains(d.Rule, d.Server) {
				t.Errorf("explain: %s (outside task-a) should be hidden by a rule naming the task: %+v", d.Tool, d)
			}
		case d.Tool == "everything__get-sum":
			if d.Admitted || !strings.Contains(d.Rule, "*get-sum") {
				t.Errorf("explain: everything__get-sum should be hidden by the deny glob *get-sum: %+v", d)
			}
		case d.Server == "everything":
			if !d.Admitted {
				t.Errorf("explain: %s should be admitted: %+v", d.Tool, d)
			}
		default:
			t.Errorf("explain: a tool of unknown server: %+v", d)
		}
	}
	for _, name := range []string{"everything", "filesystem", "memory"} {
		u := rz.upstream(name)
		if u == nil || perServer[name] == 0 || perServer[name] != u.Tools {
			t.Errorf("explain lists %d tools of %s, /readyz says %+v", perServer[name], name, u)
		}
	}
	if cli.Admitted != admitted || cli.Hidden != len(cli.Tools)-admitted || admitted == 0 {
		t.Errorf("explain: admitted %d hidden %d, counted %d of %d", cli.Admitted, cli.Hidden, admitted, len(cli.Tools))
	}
	if _, ok := cli.byTool()["everything__get-sum"]; !ok {
		t.Errorf("explain does not list the hidden everything__get-sum")
	}

	// The admin API: the same decisions.
	a := rawRequest(t, http.MethodGet, g.Base+"/api/agents/a1/view?task=task-a", nil, "")
	if a.Status != http.StatusOK {
		t.Fatalf("GET /api/agents/a1/view: %s", a)
	}
	var api agentView
	if err := json.Unmarshal(a.Body, &api); err != nil {
		t.Fatalf("view JSON: %v: %s", err, a.Body)
	}
	cm, am := cli.byTool(), api.byTool()
	for _, tool := range sortedKeys(cm) {
		if am[tool] != cm[tool] {
			t.Errorf("explain and the admin API disagree on %s: CLI %+v, API %+v", tool, cm[tool], am[tool])
		}
	}
	for _, tool := range sortedKeys(am) {
		if _, ok := cm[tool]; !ok {
			t.Errorf("the admin API lists %s, explain does not: %+v", tool, am[tool])
		}
	}
	if api.Admitted != cli.Admitted || api.Hidden != cli.Hidden || !slices.Equal(api.Servers, cli.Servers) {
		t.Errorf("counts: CLI %d/%d %v, API %d/%d %v", cli.Admitted, cli.Hidden, cli.Servers, api.Admitted, api.Hidden, api.Servers)
	}
	if a := rawRequest(t, http.MethodGet, g.Base+"/api/agents/a1/view?task=task-zzz", nil, ""); a.Status != http.StatusNotFound || !strings.Contains(string(a.Body), "task-zzz") {
		t.Errorf("view for an unknown task: %s, want 404 naming it", a)
	}

	// A session of a1 in task-a lists exactly the admitted tools, but for the ones the npm
	// everything server registers only for a client that declares roots, sampling or
	// elicitation: this raw session declares none, and its first list is what its own
	// per_session instance serves; explain, which has no client, shows the catalogue the
	// gateway's probe (declaring all three) read.
	var want []string
	for _, d := range api.Tools {
		if d.Admitted && !slices.Contains(capGated, strings.Replace(d.Tool, "everything__", "ev__", 1)) {
			want = append(want, d.Tool)
		}
	}
	s := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "task-a"})
	got := sortedCopy(slices.DeleteFunc(s.tools(t), gatewayOwnTool)) // auto may serve thin: its describe tool is the gateway's
	if !slices.Equal(got, sortedCopy(want)) {
		t.Errorf("a1 in task-a lists %v; explain admits %v", got, sortedCopy(want))
	}
}

// TestReloadNotifiesOnlyChangedSessions: sessions of a1 and a2, each with a GET stream
// (go-sdk clients); the config file gains a deny glob for a1 only. a1 hears
// tools/list_changed and loses the tool; a2 hears nothing and keeps its list.
func TestReloadNotifiesOnlyChangedSessions(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	const a1Line = "  a1: {servers: [everything]}\n"
	g := startGateway(t, `
log: {level: info, format: text}
servers:
  everything: {type: stdio, command: {{everything_server}}}
agents:
`+a1Line+`  a2: {servers: [everything]}
`)
	const hiddenTool = "everything__test_simple_text"
	connect := func(agent string) *goClient {
		return connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL, HTTPClient: httpClientWith(map[string]string{"X-Agent-ID": agent})})
	}
	c1, c2 := connect("a1"), connect("a2")
	// A session is told list_changed only once it has listed.
	before1, before2 := c1.toolNames(t), c2.toolNames(t)
	if !slices.Contains(before1, hiddenTool) || !slices.Equal(sortedCopy(before1), sortedCopy(before2)) {
		t.Fatalf("before: a1 %v, a2 %v", before1, before2)
	}
	// Wait until both go-sdk clients' GET streams are open (a notification sent before
	// would wait in the session's buffer, which is not what this test is about).
	if msg, ok := waitFor(10*time.Second, func() (bool, string) {
		a := rawRequest(t, http.MethodGet, g.Base+"/api/sessions", nil, "")
		var rows []struct {
			Agent  string
			Stream bool `json:"stream"`
		}
		if a.Status != http.StatusOK || json.Unmarshal(a.Body, &rows) != nil {
			return false, a.String()
		}
		open := 0
		for _, r := range rows {
			if r.Stream && (r.Agent == "a1" || r.Agent == "a2") {
				open++
			}
		}
		return open == 2, fmt.Sprintf("%d of 2 GET streams open", open)
	}); !ok {
		t.Fatalf("the clients' GET streams did not open: %s", msg)
	}
	m0, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	sent0, _ := metricValue(m0, "mcpgw_list_changed_sent_total", nil)

	cfg, err := os.ReadFile(g.Config)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), a1Line) {
		t.Fatalf("config has no line %q:\n%s", a1Line, cfg)
	}
	next := strings.Replace(string(cfg), a1Line, `  a1: {servers: [everything], tools: {deny: ["`+hiddenTool+`"]}}`+"\n", 1)
	changed := time.Now()
	writeFileAtomic(t, g.Config, []byte(next))

	// The gateway polls the file every 2 s.
	if !c1.waitListChanged(1, 15*time.Second) {
		t.Fatalf("a1 got no tools/list_changed within 15 s of the config change\ngateway log:\n%s", g.Tail(3000))
	}
	t.Logf("a1 notified %s after the change", time.Since(changed).Round(time.Millisecond))
	after1 := c1.toolNames(t)
	if slices.Contains(after1, hiddenTool) || len(after1) != len(before1)-1 {
		t.Errorf("a1 after the reload lists %d tools (before %d), %s present: %v", len(after1), len(before1), hiddenTool, slices.Contains(after1, hiddenTool))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if res, err := c1.CallTool(ctx, &mcp.CallToolParams{Name: hiddenTool, Arguments: map[string]any{}}); err == nil {
		t.Errorf("a1 called the newly denied %s: %q", hiddenTool, resultText(res))
	}

	// a2: the reload is complete once "config reloaded" is logged (every session's
	// notification, if any, was sent before), and exactly one was sent in all: a1's. So
	// a2 was sent none, without waiting and hoping.
	if msg, ok := waitFor(10*time.Second, func() (bool, string) {
		return strings.Contains(g.Log(), "config reloaded"), "no \"config reloaded\" in the log"
	}); !ok {
		t.Fatal(msg)
	}
	if m, err := getMetrics(g); err != nil {
		t.Fatal(err)
	} else if sent, _ := metricValue(m, "mcpgw_list_changed_sent_total", nil); sent-sent0 != 1 {
		t.Errorf("mcpgw_list_changed_sent_total went from %v to %v after the reload, want one notification (a1's)", sent0, sent)
	}
	if n := c2.listChanged.Load(); n != 0 {
		t.Errorf("a2 got %d tools/list_changed although its view did not change", n)
	}
	if after2 := c2.toolNames(t); !slices.Equal(sortedCopy(after2), sortedCopy(before2)) {
		t.Errorf("a2's list changed: %v, before %v", after2, before2)
	}
	res, err := c2.CallTool(ctx, &mcp.CallToolParams{Name: hiddenTool, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Errorf("a2 calling %s: %v %q", hiddenTool, err, resultText(res))
	}
	if n := c1.listChanged.Load(); n != 1 {
		t.Errorf("a1 got %d tools/list_changed, want 1", n)
	}
	m1, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	if sent1, _ := metricValue(m1, "mcpgw_list_changed_sent_total", nil); sent1-sent0 != 1 {
		t.Errorf("mcpgw_list_changed_sent_total went from %v to %v, want one notification", sent0, sent1)
	}
	if !strings.Contains(g.Log(), "config reloaded") {
		t.Errorf("the gateway log does not say the config was reloaded")
	}
}

// TestMetricsAgentLabelUnknownAgents: with auth.metrics.agent_label top:N, the N label
// slots belong to agents ("the first N agents seen get their own label"). A refused,
// unknown agent name (any unauthenticated caller can send one) must not take a slot and
// push a configured agent into "other".
func TestMetricsAgentLabelUnknownAgents(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	g := startGateway(t, `
log: {level: info, format: text}
auth:
  metrics: {agent_label: "top:1"}
servers:
  everything: {type: stdio, command: {{everything_server}}}
agents:
  a1: {servers: [everything]}
`)
	if a := rawInitialize(t, g.URL, map[string]string{"X-Agent-ID": "ghost-from-outside"}); a.Status != http.StatusUnauthorized {
		t.Fatalf("unknown agent: %s, want 401", a)
	}
	s := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1"})
	if r := s.callTool(t, "everything__test_simple_text", nil); r.Reply == nil || r.Reply.Error != nil {
		t.Fatalf("a1's call: %s", r)
	}
	m, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := metricValue(m, "mcpgw_tool_calls_total", map[string]string{"agent": "a1", "tool": "test_simple_text", "outcome": "ok"}); !ok || v != 1 {
		var lines []string
		for _, line := range strings.Split(m, "\n") {
			if strings.HasPrefix(line, "mcpgw_tool_calls_total") || strings.HasPrefix(line, "mcpgw_denials_total") {
				lines = append(lines, line)
			}
		}
		t.Errorf("a1's call is not counted under agent=\"a1\" (a refused unknown agent took the top:1 label slot):\n%s", strings.Join(lines, "\n"))
	}
}
