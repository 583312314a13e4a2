package admin_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// An agent's server list has three states: absent (or null) means the servers enabled by
// default, a list names its servers, and an empty list means none. The empty list must
// survive the agents API, /api/mcp-config ({} there) and the config file, and a session
// of such an agent must list no tool at all.
func TestAgentEmptyServerListMeansNone(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+`
agents:
  all: {}
  filenone: {servers: []}
`)
	gatewaytest.WaitLive(t, g, "everything", "up")
	// The control: an agent without a list gets the default server's tools.
	if names := gatewaytest.WaitToolsOf(t, g, g.InitializeAs(t, "all")); len(names) == 0 {
		t.Fatal("agent all (no list) has no tools: the control is broken")
	}
	if a := g.API(t, http.MethodPut, "/api/agents/apinone", `{"servers":[]}`, nil); a.Status != http.StatusCreated {
		t.Fatalf("PUT /api/agents/apinone: %s", a)
	}
	if a := g.API(t, http.MethodGet, "/api/agents/apinone", "", nil); string(mustJSON(t, a.Obj["servers"])) != "[]" {
		t.Errorf("GET /api/agents/apinone answers servers %s, want []: %s", mustJSON(t, a.Obj["servers"]), a)
	}
	if a := g.API(t, http.MethodPost, "/api/mcp-config?agent=docnone", `{"agent_id":"docnone","enabled":true,"servers":{}}`, nil); a.Status != http.StatusOK {
		t.Fatalf("POST /api/mcp-config: %s", a)
	}
	if a := g.API(t, http.MethodGet, "/api/mcp-config?agent=docnone", "", nil); string(mustJSON(t, a.Obj["servers"])) != "{}" {
		t.Errorf("GET /api/mcp-config?agent=docnone answers servers %s, want {}", mustJSON(t, a.Obj["servers"]))
	}
	// PATCH with null gives the defaults back.
	if a := g.API(t, http.MethodPut, "/api/agents/back", `{"servers":[]}`, nil); a.Status != http.StatusCreated {
		t.Fatalf("PUT /api/agents/back: %s", a)
	}
	if a := g.API(t, http.MethodPatch, "/api/agents/back", `{"servers":null}`, nil); a.Status != http.StatusOK || a.Obj["servers"] != nil {
		t.Fatalf("PATCH servers null: %s", a)
	}
	if names := gatewaytest.WaitToolsOf(t, g, g.InitializeAs(t, "back")); len(names) == 0 {
		t.Error("agent back (list removed by PATCH null) has no tools, want the defaults")
	}
	for _, agent := range []string{"filenone", "apinone", "docnone"} {
		if names := g.ToolNames(t, g.InitializeAs(t, agent)); len(names) != 0 {
			t.Errorf("agent %s (empty server list) lists %d tools: %v", agent, len(names), names)
		}
		a := g.API(t, http.MethodGet, "/api/resolve?agent="+agent, "", nil)
		var res struct{ Servers []any }
		if err := json.Unmarshal(a.Raw, &res); err != nil || a.Status != http.StatusOK || len(res.Servers) != 0 {
			t.Errorf("GET /api/resolve?agent=%s: %s", agent, a)
		}
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
