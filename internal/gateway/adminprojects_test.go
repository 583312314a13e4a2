package gateway_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
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
func taskTools(t *testing.T, g *testGW, agent, task string) []string {
	t.Helper()
	h := map[string]string{"X-Agent-ID": agent, "X-Task-ID": task}
	r := g.do(t, req{body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"projects_test","version":"1"}}}`, header: h})
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize as %s for %s: HTTP %d %s", agent, task, r.status, r.body)
	}
	h["Mcp-Session-Id"], h["MCP-Protocol-Version"] = sid, "2025-11-25"
	g.do(t, req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header: h})
	l := g.do(t, req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: h})
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	if m := l.message(t); l.status != http.StatusOK || m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.NextCursor != "" {
		t.Fatalf("tools/list as %s for %s: HTTP %d %s", agent, task, l.status, l.body)
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
	g := startGateway(t, projectsYAML)
	waitLive(t, g, "off", "up")
	waitLive(t, g, "two", "up")
	if got := serversOf(g.toolNames(t, g.initialize(t, "2025-11-25", ""))); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("a session without a task lists %v, want [one two] (off is off by default)", got)
	}
	if got := serversOf(taskTools(t, g, "dev", "file-task")); !slices.Equal(got, []string{"off", "one"}) {
		t.Fatalf("a session of file-task in filep lists %v, want [off one]", got)
	}
	a := g.api(t, "GET", "/api/resolve?agent=dev&task=file-task", "", nil)
	var res struct {
		Project string
		Servers []struct{ Name string }
	}
	if err := json.Unmarshal(a.raw, &res); err != nil || res.Project != "filep" || len(res.Servers) != 2 || res.Servers[0].Name != "off" || res.Servers[1].Name != "one" {
		t.Errorf("resolve of file-task: %s", a)
	}
}

// Projects through the admin API: POST creates (409 for an id that exists), GET lists file
// and API ones, PUT and PATCH change an API project, unknown servers and projects are 400s
// naming their path, a file project is read-only (409), a project with tasks cannot be
// deleted (409), and a session of an API task in an API project sees the project's
// servers only.
func TestAdminProjectsLifecycle(t *testing.T) {
	g := startGateway(t, projectsYAML)
	waitLive(t, g, "two", "up")

	a := g.api(t, "POST", "/api/projects", `{"id":"p","name":"Project P","servers":["two"]}`, nil)
	if a.status != http.StatusCreated || a.obj["id"] != "p" || a.obj["source"] != "api" || a.obj["name"] != "Project P" {
		t.Fatalf("POST /api/projects: %s", a)
	}
	if a := g.api(t, "POST", "/api/projects", `{"id":"p","servers":["one"]}`, nil); a.status != http.StatusConflict {
		t.Errorf("POST of an existing id: %s", a)
	}
	if a := g.api(t, "POST", "/api/projects", `{"name":"no id"}`, nil); a.status != http.StatusCreated || !strings.HasPrefix(a.obj["id"].(string), "proj-") {
		t.Errorf("POST without an id: %s", a)
	} else if d := g.api(t, "DELETE", "/api/projects/"+a.obj["id"].(string), "", nil); d.status != http.StatusNoContent {
		t.Errorf("DELETE: %s", d)
	}
	list := g.api(t, "GET", "/api/projects", "", nil)
	var rows []struct{ ID, Source string }
	if err := json.Unmarshal(list.raw, &rows); err != nil || list.status != http.StatusOK || len(rows) != 2 ||
		rows[0] != (struct{ ID, Source string }{"filep", "file"}) || rows[1] != (struct{ ID, Source string }{"p", "api"}) {
		t.Fatalf("GET /api/projects: %s", list)
	}

	a = g.api(t, "PUT", "/api/projects/p", `{"name":"P","servers":["two","nope"]}`, nil)
	if a.status != http.StatusBadRequest || !slices.Contains(a.fieldErrors(), `projects.p.servers[1]: unknown server "nope" (no server or plugin has that name)`) {
		t.Errorf("PUT with an unknown server: %s", a)
	}
	if a := g.api(t, "PATCH", "/api/projects/p", `{"overrides":{"ghost":true}}`, nil); a.status != http.StatusBadRequest ||
		!slices.Contains(a.fieldErrors(), `projects.p.overrides.ghost: unknown server "ghost" (no server or plugin has that name)`) {
		t.Errorf("PATCH with an unknown override: %s", a)
	}
	if a := g.api(t, "PATCH", "/api/projects/filep", `{"name":"x"}`, nil); a.status != http.StatusConflict {
		t.Errorf("PATCH of a file project: %s", a)
	}
	if a := g.api(t, "PATCH", "/api/projects/p", `{"servers":["one","two"],"overrides":{"one":false}}`, nil); a.status != http.StatusOK || a.obj["name"] != "Project P" {
		t.Errorf("PATCH: %s", a)
	}

	if a := g.api(t, "POST", "/api/tasks", `{"id":"t1","project":"missing"}`, nil); a.status != http.StatusBadRequest ||
		!slices.Contains(a.fieldErrors(), "project: unknown project missing") {
		t.Errorf("a task in an unknown project: %s", a)
	}
	a = g.api(t, "POST", "/api/tasks", `{"id":"t1","project":"p"}`, nil)
	if a.status != http.StatusCreated || a.obj["project"] != "p" {
		t.Fatalf("POST /api/tasks in p: %s", a)
	}
	if got := serversOf(taskTools(t, g, "dev", "t1")); !slices.Equal(got, []string{"two"}) {
		t.Errorf("a session of t1 in p lists %v, want [two]", got)
	}

	if a := g.api(t, "DELETE", "/api/projects/p", "", nil); a.status != http.StatusConflict || !strings.Contains(string(a.raw), "t1") {
		t.Errorf("DELETE of a project with a task: %s", a)
	}
	if a := g.api(t, "DELETE", "/api/tasks/t1", "", nil); a.status != http.StatusNoContent {
		t.Fatalf("DELETE task: %s", a)
	}
	if a := g.api(t, "DELETE", "/api/projects/p", "", nil); a.status != http.StatusNoContent {
		t.Errorf("DELETE of a project without tasks: %s", a)
	}
	if a := g.api(t, "GET", "/api/projects/p", "", nil); a.status != http.StatusNotFound {
		t.Errorf("GET after DELETE: %s", a)
	}
}
