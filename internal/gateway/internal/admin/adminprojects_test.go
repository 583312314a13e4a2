package admin_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// projectsYAML has two servers (both the everything server under two names) and a third
// off by default, a file project and a file task in it.
const projectsYAML = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
servers:
  one: {type: streamable_http, url: {{everything}}}
  two: {type: streamable_http, url: {{everything}}}
  off: {type: streamable_http, url: {{everything}}, default_enabled: false}
projects:
  filep: {name: File project, overrides: {two: false, off: true}}
tasks:
  file-task: {enabled_mcp_servers: [one, two, off], project: filep}
`

// taskTools opens a session as agent for task (X-Agent-ID, X-Task-ID: the session's
// principal) and lists its tools in one page.
func taskTools(t *testing.T, g *gatewaytest.GW, agent, task string) []string {
	t.Helper()
	h := map[string]string{"X-Agent-ID": agent, "X-Task-ID": task}
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"projects_test","version":"1"}}}`, Header: h})
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize as %s for %s: HTTP %d %s", agent, task, r.Status, r.Body)
	}
	h["Mcp-Session-Id"], h["MCP-Protocol-Version"] = sid, "2025-11-25"
	g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Header: h})
	l := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, Header: h})
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	if m := l.Message(t); l.Status != http.StatusOK || m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.NextCursor != "" {
		t.Fatalf("tools/list as %s for %s: HTTP %d %s", agent, task, l.Status, l.Body)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// serversOf are the server prefixes of exposed tool names (one__x -> one), sorted, once.
// serversOf is the upstream servers of a session's tool names (the gateway's own tools,
// such as a thin list's describe_tools, are not a server's).
func serversOf(names []string) []string {
	var out []string
	for _, n := range names {
		if s, _, ok := strings.Cut(n, "__"); ok && s != "mcpgw" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// A session of a task in a project lists only the tools of the servers the project
// enables (global -> project -> task): the file project turns two off and off on, and the
// task, which names all three, gets one and off; /api/resolve says the same.
func TestProjectSessionListsProjectServers(t *testing.T) {
	g := gatewaytest.Start(t, projectsYAML)
	gatewaytest.WaitLive(t, g, "off", "up")
	gatewaytest.WaitLive(t, g, "two", "up")
	if got := serversOf(g.ToolNames(t, g.Initialize(t, "2025-11-25", ""))); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("a session without a task lists %v, want [one two] (off is off by default)", got)
	}
	if got := serversOf(taskTools(t, g, "dev", "file-task")); !slices.Equal(got, []string{"off", "one"}) {
		t.Fatalf("a session of file-task in filep lists %v, want [off one]", got)
	}
	a := g.API(t, "GET", "/api/resolve?agent=dev&task=file-task", "", nil)
	var res struct {
		Project string
		Servers []struct{ Name string }
	}
	if err := json.Unmarshal(a.Raw, &res); err != nil || res.Project != "filep" || len(res.Servers) != 2 || res.Servers[0].Name != "off" || res.Servers[1].Name != "one" {
		t.Errorf("resolve of file-task: %s", a)
	}
}

// Projects through the admin API: POST creates (409 for an id that exists), GET lists file
// and API ones, PUT and PATCH change an API project, unknown servers and projects are 400s
// naming their path, a file project is read-only (409), a project with tasks cannot be
// deleted (409), and a session of an API task in an API project sees the project's
// servers only.
func TestAdminProjectsLifecycle(t *testing.T) {
	g := gatewaytest.Start(t, projectsYAML)
	gatewaytest.WaitLive(t, g, "two", "up")

	a := g.API(t, "POST", "/api/projects", `{"id":"p","name":"Project P","servers":["two"]}`, nil)
	if a.Status != http.StatusCreated || a.Obj["id"] != "p" || a.Obj["source"] != "api" || a.Obj["name"] != "Project P" {
		t.Fatalf("POST /api/projects: %s", a)
	}
	if a := g.API(t, "POST", "/api/projects", `{"id":"p","servers":["one"]}`, nil); a.Status != http.StatusConflict {
		t.Errorf("POST of an existing id: %s", a)
	}
	if a := g.API(t, "POST", "/api/projects", `{"name":"no id"}`, nil); a.Status != http.StatusCreated || !strings.HasPrefix(a.Obj["id"].(string), "proj-") {
		t.Errorf("POST without an id: %s", a)
	} else if d := g.API(t, "DELETE", "/api/projects/"+a.Obj["id"].(string), "", nil); d.Status != http.StatusNoContent {
		t.Errorf("DELETE: %s", d)
	}
	list := g.API(t, "GET", "/api/projects", "", nil)
	var rows []struct{ ID, Source string }
	if err := json.Unmarshal(list.Raw, &rows); err != nil || list.Status != http.StatusOK || len(rows) != 2 ||
		rows[0] != (struct{ ID, Source string }{"filep", "file"}) || rows[1] != (struct{ ID, Source string }{"p", "api"}) {
		t.Fatalf("GET /api/projects: %s", list)
	}

	a = g.API(t, "PUT", "/api/projects/p", `{"name":"P","servers":["two","nope"]}`, nil)
	if a.Status != http.StatusBadRequest || !slices.Contains(a.FieldErrors(), `projects.p.servers[1]: unknown server "nope" (no server or plugin has that name)`) {
		t.Errorf("PUT with an unknown server: %s", a)
	}
	if a := g.API(t, "PATCH", "/api/projects/p", `{"overrides":{"ghost":true}}`, nil); a.Status != http.StatusBadRequest ||
		!slices.Contains(a.FieldErrors(), `projects.p.overrides.ghost: unknown server "ghost" (no server or plugin has that name)`) {
		t.Errorf("PATCH with an unknown override: %s", a)
	}
	if a := g.API(t, "PATCH", "/api/projects/filep", `{"name":"x"}`, nil); a.Status != http.StatusConflict {
		t.Errorf("PATCH of a file project: %s", a)
	}
	if a := g.API(t, "PATCH", "/api/projects/p", `{"servers":["one","two"],"overrides":{"one":false}}`, nil); a.Status != http.StatusOK || a.Obj["name"] != "Project P" {
		t.Errorf("PATCH: %s", a)
	}

	if a := g.API(t, "POST", "/api/tasks", `{"id":"t1","project":"missing"}`, nil); a.Status != http.StatusBadRequest ||
		!slices.Contains(a.FieldErrors(), "project: unknown project missing") {
		t.Errorf("a task in an unknown project: %s", a)
	}
	a = g.API(t, "POST", "/api/tasks", `{"id":"t1","project":"p"}`, nil)
	if a.Status != http.StatusCreated || a.Obj["project"] != "p" {
		t.Fatalf("POST /api/tasks in p: %s", a)
	}
	if got := serversOf(taskTools(t, g, "dev", "t1")); !slices.Equal(got, []string{"two"}) {
		t.Errorf("a session of t1 in p lists %v, want [two]", got)
	}

	if a := g.API(t, "DELETE", "/api/projects/p", "", nil); a.Status != http.StatusConflict || !strings.Contains(string(a.Raw), "t1") {
		t.Errorf("DELETE of a project with a task: %s", a)
	}
	if a := g.API(t, "DELETE", "/api/tasks/t1", "", nil); a.Status != http.StatusNoContent {
		t.Fatalf("DELETE task: %s", a)
	}
	if a := g.API(t, "DELETE", "/api/projects/p", "", nil); a.Status != http.StatusNoContent {
		t.Errorf("DELETE of a project without tasks: %s", a)
	}
	if a := g.API(t, "GET", "/api/projects/p", "", nil); a.Status != http.StatusNotFound {
		t.Errorf("GET after DELETE: %s", a)
	}
}
