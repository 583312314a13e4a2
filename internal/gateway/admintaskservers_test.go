package gateway_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// A task's enabled_mcp_servers is the set its sessions get: a server that is off by
// default (default_enabled: false) is switched on for the task that names it, for tasks
// from the API and from the file alike. A name that no server has any more is a warning
// of the resolution (the log and /api/resolve), not a silent drop.
func TestTaskEnablesServerOffByDefault(t *testing.T) {
	g := startGateway(t, adminYAML+`
  fs:
    type: streamable_http
    url: {{everything}}
    default_enabled: false
tasks:
  filetask: {enabled_mcp_servers: [fs]}
`)
	waitLive(t, g, "fs", "up")
	if a := g.api(t, http.MethodPost, "/api/tasks", `{"id":"t1","enabled_mcp_servers":["fs"]}`, nil); a.status != http.StatusCreated {
		t.Fatalf("POST /api/tasks: %s", a)
	}
	for _, task := range []string{"t1", "filetask"} {
		sid := g.initializeWith(t, map[string]string{"X-Agent-ID": "default", "X-Task-ID": task})
		names := waitToolsOf(t, g, sid)
		if len(names) == 0 || !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "fs__") }) ||
			slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "everything__") }) {
			t.Errorf("task %s (enabled_mcp_servers [fs], fs off by default) lists %v, want fs's tools only", task, names)
		}
	}
	// A session without a task still does not get fs.
	if names := waitToolsOf(t, g, g.initializeAs(t, "default")); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "fs__") }) {
		t.Errorf("a session without a task lists fs: %v", names)
	}

	// A task naming a server that is deleted later: its sessions are warned.
	if a := g.api(t, http.MethodPost, "/api/servers", `{"name":"gone","type":"streamable_http","url":"`+everythingURL+`"}`, nil); a.status != http.StatusCreated {
		t.Fatalf("POST /api/servers: %s", a)
	}
	if a := g.api(t, http.MethodPost, "/api/tasks", `{"id":"t2","enabled_mcp_servers":["fs","gone"]}`, nil); a.status != http.StatusCreated {
		t.Fatalf("POST /api/tasks t2: %s", a)
	}
	if a := g.api(t, http.MethodDelete, "/api/servers/gone", "", nil); a.status != http.StatusNoContent {
		t.Fatalf("DELETE /api/servers/gone: %s", a)
	}
	// Quoted as JSON and as slog's text handler quote it.
	want := `task \"t2\" names server \"gone\", which does not exist`
	if a := g.api(t, http.MethodGet, "/api/resolve?task=t2", "", nil); a.status != http.StatusOK || !strings.Contains(string(a.raw), want) {
		t.Errorf("GET /api/resolve?task=t2 does not warn %q: %s", want, a)
	}
	g.initializeWith(t, map[string]string{"X-Agent-ID": "default", "X-Task-ID": "t2"})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(g.log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not warn %q", want)
		}
		waitBriefly()
	}
}

// initializeWith opens a session with the given headers and returns its id.
func (g *testGW) initializeWith(t *testing.T, hdr map[string]string) string {
	t.Helper()
	r := g.do(t, req{body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		header: hdr})
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize with %v: HTTP %d %s", hdr, r.status, r.body)
	}
	return sid
}
