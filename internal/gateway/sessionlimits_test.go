package gateway_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

const limitsConfig = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
http: {max_sessions: 6, max_sessions_per_agent: 3}
servers:
  everything:
    type: streamable_http
    url: {{everything}}
`

// sessionAnswers reports whether a session still answers a ping as agent ("": no agent
// header): 200; a refusal (404 ended, 401/403 the identity refused) is false.
func sessionAnswers(t *testing.T, g *gatewaytest.GW, sid, agent string) bool {
	t.Helper()
	h := gatewaytest.SessionHeaders(sid, "2025-11-25")
	if agent != "" {
		h["X-Agent-ID"] = agent
	}
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":9,"method":"ping"}`, Header: h})
	switch r.Status {
	case http.StatusOK:
		return true
	case http.StatusNotFound, http.StatusUnauthorized, http.StatusForbidden:
		return false
	}
	t.Fatalf("ping: HTTP %d %s", r.Status, r.Body)
	return false
}

// TestSessionLimits: one agent opening many sessions keeps only its newest
// max_sessions_per_agent (the older are evicted, 404 after); a modest agent's sessions
// survive it and the total cap, which evicts from the agent holding the most; every
// eviction is counted by reason.
func TestSessionLimits(t *testing.T) {
	g := gatewaytest.Start(t, limitsConfig)
	modest := []string{g.InitializeAs(t, "modest"), g.InitializeAs(t, "modest")}
	var greedy []string
	for range 10 {
		greedy = append(greedy, g.InitializeAs(t, "greedy"))
	}
	if n := g.MetricValue(t, `mcpgw_sessions_active{agent="greedy",transport="streamable"}`); n != 3 {
		t.Errorf("greedy agent holds %v sessions, want its cap of 3", n)
	}
	for i, sid := range greedy {
		if want := i >= 7; sessionAnswers(t, g, sid, "greedy") != want {
			t.Errorf("greedy session %d answers: %v, want %v (only the newest 3 stay)", i, !want, want)
		}
	}
	if v := g.MetricValue(t, `mcpgw_sessions_evicted_total{reason="agent_limit"}`); v != 7 {
		t.Errorf("agent_limit evictions %v, want 7", v)
	}
	// Total cap 6: modest 2 + greedy 3 + a third agent's first = 6; its second goes past
	// the total, and the greedy agent (the largest holder) gives way.
	third := []string{g.InitializeAs(t, "third"), g.InitializeAs(t, "third")}
	for i, sid := range append(modest, third...) {
		if agent := []string{"modest", "third"}[i/2]; !sessionAnswers(t, g, sid, agent) {
			t.Errorf("session %d of %s was evicted", i%2, agent)
		}
	}
	if n := g.MetricValue(t, `mcpgw_sessions_active{agent="greedy",transport="streamable"}`); n != 2 {
		t.Errorf("greedy agent holds %v sessions after the total cap, want 2", n)
	}
	if v := g.MetricValue(t, `mcpgw_sessions_evicted_total{reason="total_limit"}`); v != 1 {
		t.Errorf("total_limit evictions %v, want 1", v)
	}
}

// TestStatelessConversationVariantsBounded: a stateless caller varying X-Conversation-ID
// on every request does not mint a gateway-side session per request: conversations are
// variants of one caller, bounded like capability sets.
func TestStatelessConversationVariantsBounded(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	for i := range 50 {
		gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/list", "{"+gatewaytest.StatelessMeta+"}", map[string]string{"X-Conversation-ID": "c" + strconv.Itoa(i)})))
	}
	if n := g.MetricValue(t, `mcpgw_sessions_active{agent="default",transport="stateless"}`); n < 1 || n > 8 {
		t.Errorf("one caller with 50 conversations holds %v gateway-side sessions, want 1 to 8", n)
	}
	if v := g.MetricValue(t, `mcpgw_sessions_evicted_total{reason="stateless_variants"}`); v < 42 {
		t.Errorf("stateless_variants evictions %v, want at least 42", v)
	}
}

// identityAgents are the agents a reload defines in TestSessionFollowsItsAgent.
const identityAgents = `
servers:
  everything: {type: streamable_http, url: "http://127.0.0.1:1/mcp"}
agents:
  keeper: {servers: [everything]}
`

// TestSessionFollowsItsAgent: a session ends (404 on its next request, with or without the
// agent header) when its agent is deleted or disabled through the admin API or a reload;
// a session made as "default" before agents were defined ends when they are.
func TestSessionFollowsItsAgent(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	dflt := g.Initialize(t, "2025-11-25", "")
	file := *g.Gateway.FileConfig()
	cfg, ps, err := config.Parse([]byte(identityAgents))
	if err != nil {
		t.Fatal(ps)
	}
	file.Agents = cfg.Agents
	if err := g.Gateway.ReloadFile(&file); err != nil {
		t.Fatal(err)
	}
	if sessionAnswers(t, g, dflt, "") {
		t.Error(`a session of "default" still answers after agents were defined without it`)
	}
	keeper := g.InitializeAs(t, "keeper")

	for _, step := range []struct{ name, method, body string }{
		{"deleted", http.MethodDelete, ""},
		{"disabled", http.MethodPatch, `{"enabled": false}`},
	} {
		if a := g.API(t, http.MethodPut, "/api/agents/temp", `{"servers": ["everything"]}`, nil); a.Status/100 != 2 {
			t.Fatalf("PUT agent: %s", a)
		}
		sid := g.InitializeAs(t, "temp")
		if !sessionAnswers(t, g, sid, "") {
			t.Fatalf("the new session of temp does not answer")
		}
		if a := g.API(t, step.method, "/api/agents/temp", step.body, nil); a.Status/100 != 2 {
			t.Fatalf("%s agent: %s", step.method, a)
		}
		// Without the agent header (mode none continues as the session's agent) and with.
		if sessionAnswers(t, g, sid, "") || sessionAnswers(t, g, sid, "temp") {
			t.Errorf("the session of an agent %s still answers", step.name)
		}
		if step.method == http.MethodPatch {
			_ = g.API(t, http.MethodDelete, "/api/agents/temp", "", nil)
		}
	}
	if !sessionAnswers(t, g, keeper, "keeper") {
		t.Error("another agent's session ended with temp's")
	}
	if v := g.MetricValue(t, `mcpgw_sessions_evicted_total{reason="identity"}`); v != 3 {
		t.Errorf("identity evictions %v, want 3", v)
	}
}

// TestAdminServerShares: the admin API takes and shows a server's per-agent shares, and
// refuses a negative one naming the field.
func TestAdminServerShares(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	a := g.API(t, http.MethodPost, "/api/servers", `{"name":"shared1","type":"streamable_http","url":"http://127.0.0.1:1/mcp",
	  "max_instances_per_agent":3,"queue":{"max":8,"max_per_agent":2}}`, nil)
	if a.Status/100 != 2 {
		t.Fatalf("PUT: %s", a)
	}
	a = g.API(t, http.MethodGet, "/api/servers/shared1", "", nil)
	q, _ := a.Obj["queue"].(map[string]any)
	if a.Obj["max_instances_per_agent"] != float64(3) || q["max_per_agent"] != float64(2) {
		t.Fatalf("GET does not show the shares: %s", a)
	}
	a = g.API(t, http.MethodPost, "/api/servers", `{"name":"shared2","type":"streamable_http","url":"http://127.0.0.1:1/mcp","max_instances_per_agent":-1}`, nil)
	if a.Status != http.StatusBadRequest || !strings.Contains(string(a.Raw), "max_instances_per_agent") {
		t.Fatalf("a negative share: %s, want 400 naming max_instances_per_agent", a)
	}
}
