package gateway_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// POST /api/mcp-config?agent= takes the per-agent document orchestrators keep: a server
// given with fields is created, one given as {"mode": …} is referenced; GET gives the
// same shape back; the agent's sessions get exactly those servers.
func TestAdminMCPConfig(t *testing.T) {
	g := startGateway(t, adminYAML)
	doc := `{"agent_id":"kanban","enabled":true,"meta":{"board":"b1"},"servers":{
		"everything":{"mode":"per_session"},
		"docs":{"type":"streamable-http","url":"` + everythingURL + `","meta":{"title":"Docs"}}}}`
	a := g.api(t, http.MethodPost, "/api/mcp-config?agent=kanban", doc, nil)
	if a.status != http.StatusOK {
		t.Fatalf("POST /api/mcp-config: %s", a)
	}
	var got struct {
		AgentID string                    `json:"agent_id"`
		Enabled bool                      `json:"enabled"`
		Meta    map[string]any            `json:"meta"`
		Servers map[string]map[string]any `json:"servers"`
	}
	a = g.api(t, http.MethodGet, "/api/mcp-config?agent=kanban", "", nil)
	if err := json.Unmarshal(a.raw, &got); err != nil || a.status != http.StatusOK {
		t.Fatalf("GET: %s", a)
	}
	if got.AgentID != "kanban" || !got.Enabled || got.Meta["board"] != "b1" || len(got.Servers) != 2 ||
		got.Servers["everything"]["mode"] != "per_session" || got.Servers["everything"]["source"] != "file" ||
		got.Servers["docs"]["type"] != "streamable_http" || got.Servers["docs"]["source"] != "api" {
		t.Errorf("GET /api/mcp-config: %s", a.raw)
	}
	if s := g.api(t, http.MethodGet, "/api/servers/docs", "", nil); s.status != http.StatusOK || s.obj["source"] != "api" {
		t.Errorf("the defined server: %s", s)
	}
	// The agent's session lists both servers' tools (the docs server is the same upstream).
	sid := g.initializeAs(t, "kanban")
	var names []string
	for i := 0; i < 200; i++ { // docs starts in the background: bounded wait
		if names = g.toolNames(t, sid); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "docs__") }) {
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
		a := g.api(t, http.MethodPost, tc.path, tc.body, nil)
		if a.status != tc.status || !strings.Contains(string(a.raw)+strings.Join(a.fieldErrors(), "; "), tc.want) {
			t.Errorf("POST %s %s: %s, want %d with %q", tc.path, tc.body, a, tc.status, tc.want)
		}
	}
	// A refused document changed nothing.
	if s := g.api(t, http.MethodGet, "/api/servers/s", "", nil); s.status != http.StatusNotFound {
		t.Errorf("a refused document left server s behind: %s", s)
	}
	// An agent without a config is answered as it would start (TestMCPConfigOfNewAgentIsDefaults).
	if a := g.api(t, http.MethodGet, "/api/mcp-config?agent=nobody", "", nil); a.status != http.StatusOK || a.obj["enabled"] != true {
		t.Errorf("GET for an agent without a config: %s", a)
	}
}

// initializeAs opens a session as agent (X-Agent-ID) and returns its id.
func (g *testGW) initializeAs(t *testing.T, agent string) string {
	t.Helper()
	r := g.do(t, req{body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		header: map[string]string{"X-Agent-ID": agent}})
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize as %s: HTTP %d %s", agent, r.status, r.body)
	}
	return sid
}

// Attacks on the per-agent document: odd names, duplicate members, a huge number of
// servers, a body that is not an object. Each gets a clear 4xx and changes nothing.
func TestAdminMCPConfigAttacks(t *testing.T) {
	g := startGateway(t, adminYAML)
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
		a := g.api(t, http.MethodPost, tc.path, tc.body, nil)
		if a.status != tc.status {
			t.Errorf("POST %s %q: %s, want %d", tc.path, tc.body, a, tc.status)
		}
	}
	// Only the document with the last "servers" member (empty) was applied: no server s.
	if a := g.api(t, http.MethodGet, "/api/servers/s", "", nil); a.status != http.StatusNotFound {
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
	if a := g.api(t, http.MethodPost, "/api/mcp-config?agent=a", b.String(), nil); a.status != http.StatusBadRequest {
		t.Errorf("2000 references to missing servers: %d", a.status)
	}
}
