package admin_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// POST /api/mcp-config?agent= takes the per-agent document orchestrators keep: a server
// given with fields is created, one given as {"mode": …} is referenced; GET gives the
// same shape back; the agent's sessions get exactly those servers.
func TestAdminMCPConfig(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	doc := `{"agent_id":"kanban","enabled":true,"meta":{"board":"b1"},"servers":{
		"everything":{"mode":"per_session"},
		"docs":{"type":"streamable-http","url":"` + gatewaytest.EverythingURL() + `","meta":{"title":"Docs"}}}}`
	a := g.API(t, http.MethodPost, "/api/mcp-config?agent=kanban", doc, nil)
	if a.Status != http.StatusOK {
		t.Fatalf("POST /api/mcp-config: %s", a)
	}
	var got struct {
		AgentID string                    `json:"agent_id"`
		Enabled bool                      `json:"enabled"`
		Meta    map[string]any            `json:"meta"`
		Servers map[string]map[string]any `json:"servers"`
	}
	a = g.API(t, http.MethodGet, "/api/mcp-config?agent=kanban", "", nil)
	if err := json.Unmarshal(a.Raw, &got); err != nil || a.Status != http.StatusOK {
		t.Fatalf("GET: %s", a)
	}
	if got.AgentID != "kanban" || !got.Enabled || got.Meta["board"] != "b1" || len(got.Servers) != 2 ||
		got.Servers["everything"]["mode"] != "per_session" || got.Servers["everything"]["source"] != "file" ||
		got.Servers["docs"]["type"] != "streamable_http" || got.Servers["docs"]["source"] != "api" {
		t.Errorf("GET /api/mcp-config: %s", a.Raw)
	}
	if s := g.API(t, http.MethodGet, "/api/servers/docs", "", nil); s.Status != http.StatusOK || s.Obj["source"] != "api" {
		t.Errorf("the defined server: %s", s)
	}
	// The agent's session lists both servers' tools (the docs server is the same upstream).
	sid := g.InitializeAs(t, "kanban")
	var names []string
	for i := 0; i < 200; i++ { // docs starts in the background: bounded wait
		if names = g.ToolNames(t, sid); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "docs__") }) {
			break
		}
		waitBriefly()
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "docs__") }) ||
		!slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "everything__") }) {
		t.Errorf("kanban's session lists %v", names)
	}

	for _, tc := range []struct {
		path, body string
		status     int
		want       string
	}{
		{"/api/mcp-config?agent=kanban", `{"servers":{"nope":{}}}`, 400, "servers.nope"},
		{"/api/mcp-config?agent=kanban", `{"agent_id":"other","servers":{}}`, 400, "agent_id"},
		{"/api/mcp-config?agent=kanban", `{"servers":{},"colour":1}`, 400, "colour"},
		{"/api/mcp-config?agent=kanban", `{"servers":{"x":{"type":"stdio","command":"/bin/true","colour":1}}}`, 400, "servers.x.colour"},
		{"/api/mcp-config?agent=kanban", `{"servers":{"everything":{"type":"sse","url":"http://127.0.0.1:1/sse"}}}`, 409, "file"},
		{"/api/mcp-config?agent=kanban", `{"servers":{"s":{"type":"stdio","command":"/bin/true","mode":"shared"}}}`, 400, `mcp server "s": shared mode requires HTTP/SSE/streamable HTTP transport (stdio is per-session only)`},
		{"/api/mcp-config", `{"servers":{}}`, 400, "agent_id"},
	} {
		a := g.API(t, http.MethodPost, tc.path, tc.body, nil)
		if a.Status != tc.status || !strings.Contains(string(a.Raw)+strings.Join(a.FieldErrors(), "; "), tc.want) {
			t.Errorf("POST %s %s: %s, want %d with %q", tc.path, tc.body, a, tc.status, tc.want)
		}
	}
	// A refused document changed nothing.
	if s := g.API(t, http.MethodGet, "/api/servers/s", "", nil); s.Status != http.StatusNotFound {
		t.Errorf("a refused document left server s behind: %s", s)
	}
	// An agent without a config is answered as it would start (TestMCPConfigOfNewAgentIsDefaults).
	if a := g.API(t, http.MethodGet, "/api/mcp-config?agent=nobody", "", nil); a.Status != http.StatusOK || a.Obj["enabled"] != true {
		t.Errorf("GET for an agent without a config: %s", a)
	}
}

// Attacks on the per-agent document: odd names, duplicate members, a huge number of
// servers, a body that is not an object. Each gets a clear 4xx and changes nothing.
func TestAdminMCPConfigAttacks(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	for _, tc := range []struct {
		path, body string
		status     int
	}{
		{"/api/mcp-config?agent=a", `{"servers":{"bad name":{"type":"stdio","command":"/bin/true"}}}`, 400},
		{"/api/mcp-config?agent=a", `{"servers":{"x\ny":{"type":"stdio","command":"/bin/true"}}}`, 400},
		{"/api/mcp-config?agent=a", `{"servers":{"s":{"type":"stdio","command":"/bin/true","env":{"A":"1"},"env":{"B":"2"}}},"servers":{}}`, 200},
		{"/api/mcp-config?agent=a", `[]`, 400},
		{"/api/mcp-config?agent=a", `{"servers":{"s":[]}}`, 400},
		{"/api/mcp-config?agent=a", `{"servers":{"s":{"type":"stdio","command":"/bin/true","mode":5}}}`, 400},
		{"/api/mcp-config?agent=a", `{"servers":{"s":{"type":"streamable_http","url":"file:///etc/passwd"}}}`, 400},
	} {
		a := g.API(t, http.MethodPost, tc.path, tc.body, nil)
		if a.Status != tc.status {
			t.Errorf("POST %s %q: %s, want %d", tc.path, tc.body, a, tc.status)
		}
	}
	// Only the document with the last "servers" member (empty) was applied: no server s.
	if a := g.API(t, http.MethodGet, "/api/servers/s", "", nil); a.Status != http.StatusNotFound {
		t.Errorf("server s after the attacks: %s", a)
	}
	// Many servers in one document: refused or applied whole, never half.
	var b strings.Builder
	b.WriteString(`{"servers":{`)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"n` + strconv.Itoa(i) + `":{}`)
	}
	b.WriteString(`}}`)
	if a := g.API(t, http.MethodPost, "/api/mcp-config?agent=a", b.String(), nil); a.Status != http.StatusBadRequest {
		t.Errorf("2000 references to missing servers: %d", a.Status)
	}
}
