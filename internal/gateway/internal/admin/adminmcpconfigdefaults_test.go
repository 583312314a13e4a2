package admin_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// GET /api/mcp-config for an agent that has no config yet answers what it would get: its
// document with the servers enabled by default. This holds once other agents exist too
// (an orchestrator reads before it writes).
func TestMCPConfigOfNewAgentIsDefaults(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+`
  off:
    type: streamable_http
    url: {{everything}}
    default_enabled: false
agents:
  other: {servers: [off]}
`)
	a := g.API(t, http.MethodGet, "/api/mcp-config?agent=fresh", "", nil)
	var doc struct {
		AgentID string                     `json:"agent_id"`
		Enabled bool                       `json:"enabled"`
		Servers map[string]json.RawMessage `json:"servers"`
	}
	if a.Status != http.StatusOK || json.Unmarshal(a.Raw, &doc) != nil {
		t.Fatalf("GET /api/mcp-config?agent=fresh: %s, want 200 with the defaults", a)
	}
	if doc.AgentID != "fresh" || !doc.Enabled || len(doc.Servers) != 1 || doc.Servers["everything"] == nil {
		t.Errorf("GET /api/mcp-config?agent=fresh: %s, want enabled with server everything only", a.Raw)
	}
	// The answer sent back creates the agent (the file server it shows is a reference).
	if p := g.API(t, http.MethodPost, "/api/mcp-config?agent=fresh", string(a.Raw), nil); p.Status != http.StatusOK {
		t.Errorf("POST of the GET answer: %s", p)
	}
}
