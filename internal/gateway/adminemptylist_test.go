package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// An agent's server list has three states: absent (or null) means the servers enabled by
// default, a list names its servers, and an empty list means none. The empty list must
// survive the agents API, /api/mcp-config ({} there) and the config file, and a session
// of such an agent must list no tool at all.
func TestAgentEmptyServerListMeansNone(t *testing.T) {
	g := startGateway(t, adminYAML+`
agents:
  all: {}
  filenone: {servers: []}
`)
	waitLive(t, g, "everything", "up")
	// The control: an agent without a list gets the default server's tools.
	if names := waitToolsOf(t, g, g.initializeAs(t, "all")); len(names) == 0 {
		t.Fatal("agent all (no list) has no tools: the control is broken")
	}
	if a := g.api(t, http.MethodPut, "/api/agents/apinone", `{"servers":[]}`, nil); a.status != http.StatusCreated {
		t.Fatalf("PUT /api/agents/apinone: %s", a)
	}
	if a := g.api(t, http.MethodGet, "/api/agents/apinone", "", nil); string(mustJSON(t, a.obj["servers"])) != "[]" {
		t.Errorf("GET /api/agents/apinone answers servers %s, want []: %s", mustJSON(t, a.obj["servers"]), a)
	}
	if a := g.api(t, http.MethodPost, "/api/mcp-config?agent=docnone", `{"agent_id":"docnone","enabled":true,"servers":{}}`, nil); a.status != http.StatusOK {
		t.Fatalf("POST /api/mcp-config: %s", a)
	}
	if a := g.api(t, http.MethodGet, "/api/mcp-config?agent=docnone", "", nil); string(mustJSON(t, a.obj["servers"])) != "{}" {
		t.Errorf("GET /api/mcp-config?agent=docnone answers servers %s, want {}", mustJSON(t, a.obj["servers"]))
	}
	// PATCH with null gives the defaults back.
	if a := g.api(t, http.MethodPut, "/api/agents/back", `{"servers":[]}`, nil); a.status != http.StatusCreated {
		t.Fatalf("PUT /api/agents/back: %s", a)
	}
	if a := g.api(t, http.MethodPatch, "/api/agents/back", `{"servers":null}`, nil); a.status != http.StatusOK || a.obj["servers"] != nil {
		t.Fatalf("PATCH servers null: %s", a)
	}
	if names := waitToolsOf(t, g, g.initializeAs(t, "back")); len(names) == 0 {
		t.Error("agent back (list removed by PATCH null) has no tools, want the defaults")
	}
	for _, agent := range []string{"filenone", "apinone", "docnone"} {
		if names := g.toolNames(t, g.initializeAs(t, agent)); len(names) != 0 {
			t.Errorf("agent %s (empty server list) lists %d tools: %v", agent, len(names), names)
		}
		a := g.api(t, http.MethodGet, "/api/resolve?agent="+agent, "", nil)
		var res struct{ Servers []any }
		if err := json.Unmarshal(a.raw, &res); err != nil || a.status != http.StatusOK || len(res.Servers) != 0 {
			t.Errorf("GET /api/resolve?agent=%s: %s", agent, a)
		}
	}
}

// waitToolsOf lists a session's tools until there is one (bounded: the view's servers
// start in the background), and returns the last list.
func waitToolsOf(t *testing.T, g *testGW, sid string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		names := g.toolNames(t, sid)
		if len(names) > 0 || time.Now().After(deadline) {
			return names
		}
		waitBriefly()
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
