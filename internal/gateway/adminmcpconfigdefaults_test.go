package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// GET /api/mcp-config for an agent that has no config yet answers what it would get: its
// document with the servers enabled by default. This holds once other agents exist too
// (an orchestrator reads before it writes).
func TestMCPConfigOfNewAgentIsDefaults(t *testing.T) {
	g := startGateway(t, adminYAML+`
  off:
    type: streamable_http
    url: {{everything}}
    default_enabled: false
agents:
  other: {servers: [off]}
`)
	a := g.api(t, http.MethodGet, "/api/mcp-config?agent=fresh", "", nil)
	var doc struct {
		AgentID string                     `json:"agent_id"`
		Enabled bool                       `json:"enabled"`
		Servers map[string]json.RawMessage `json:"servers"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.raw, &doc) != nil {
		t.Fatalf("GET /api/mcp-config?agent=fresh: %s, want 200 with the defaults", a)
	}
	if doc.AgentID != "fresh" || !doc.Enabled || len(doc.Servers) != 1 || doc.Servers["everything"] == nil {
		t.Errorf("GET /api/mcp-config?agent=fresh: %s, want enabled with server everything only", a.raw)
	}
	// The answer sent back creates the agent (the file server it shows is a reference).
	if p := g.api(t, http.MethodPost, "/api/mcp-config?agent=fresh", string(a.raw), nil); p.status != http.StatusOK {
		t.Errorf("POST of the GET answer: %s", p)
	}
}
