package admin_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// A task's enabled_mcp_servers is the set its sessions get: a server that is off by
// default (default_enabled: false) is switched on for the task that names it, for tasks
// from the API and from the file alike. A name that no server has any more is a warning
// of the resolution (the log and /api/resolve), not a silent drop.
func TestTaskEnablesServerOffByDefault(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+`
  fs:
    type: streamable_http
    url: {{everything}}
    default_enabled: false
tasks:
  filetask: {enabled_mcp_servers: [fs]}
`)
	gatewaytest.WaitLive(t, g, "fs", "up")
	if a := g.API(t, http.MethodPost, "/api/tasks", `{"id":"t1","enabled_mcp_servers":["fs"]}`, nil); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/tasks: %s", a)
	}
	for _, task := range []string{"t1", "filetask"} {
		sid := g.InitializeWith(t, map[string]string{"X-Agent-ID": "default", "X-Task-ID": task})
		names := gatewaytest.WaitToolsOf(t, g, sid)
		if len(names) == 0 || !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "fs__") }) ||
			slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "everything__") }) {
			t.Errorf("task %s (enabled_mcp_servers [fs], fs off by default) lists %v, want fs's tools only", task, names)
		}
	}
	// A session without a task still does not get fs.
	if names := gatewaytest.WaitToolsOf(t, g, g.InitializeAs(t, "default")); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "fs__") }) {
		t.Errorf("a session without a task lists fs: %v", names)
	}

	// A task naming a server that is deleted later: its sessions are warned.
	if a := g.API(t, http.MethodPost, "/api/servers", `{"name":"gone","type":"streamable_http","url":"`+gatewaytest.EverythingURL()+`"}`, nil); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/servers: %s", a)
	}
	if a := g.API(t, http.MethodPost, "/api/tasks", `{"id":"t2","enabled_mcp_servers":["fs","gone"]}`, nil); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/tasks t2: %s", a)
	}
	if a := g.API(t, http.MethodDelete, "/api/servers/gone", "", nil); a.Status != http.StatusNoContent {
		t.Fatalf("DELETE /api/servers/gone: %s", a)
	}
	// Quoted as JSON and as slog's text handler quote it.
	want := `task \"t2\" names server \"gone\", which does not exist`
	if a := g.API(t, http.MethodGet, "/api/resolve?task=t2", "", nil); a.Status != http.StatusOK || !strings.Contains(string(a.Raw), want) {
		t.Errorf("GET /api/resolve?task=t2 does not warn %q: %s", want, a)
	}
	g.InitializeWith(t, map[string]string{"X-Agent-ID": "default", "X-Task-ID": "t2"})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(g.Log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not warn %q", want)
		}
		waitBriefly()
	}
}
