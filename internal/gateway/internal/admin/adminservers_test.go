package admin_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// withFilePath applies the gateway's file config again with a path, as if read from it.
func withFilePath(t *testing.T, g *gatewaytest.GW, path string) {
	t.Helper()
	file := *g.Gateway.FileConfig()
	file.Path = path
	if err := g.Gateway.ReloadFile(&file); err != nil {
		t.Fatal(err)
	}
}

// TestAdminServerLifecycle: a server created through the API starts live and sessions
// list its tools; reads redact its secrets; PATCH and PUT need the current ETag when they
// send one; DELETE stops it for new views; a file reload keeps API servers; every write is
// an audit line.
func TestAdminServerLifecycle(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	withFilePath(t, g, "/etc/mcpgw/test.yaml")

	sid := g.Initialize(t, "2025-11-25", "")
	if names := g.ToolNames(t, sid); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "web__") }) {
		t.Fatalf("web tools before web exists: %v", names)
	}

	body := `{"name":"web","type":"streamable-http","url":"` + gatewaytest.EverythingURL() + `","headers":{"Authorization":"Bearer s3cret"},
	          "timeouts":{"connect":"5s"},"max_concurrency":2,"queue":{"max":5,"timeout":"1s"},"meta":{"title":"Web","description":"the everything server again"}}`
	a := g.API(t, "POST", "/api/servers", body, nil)
	if a.Status != http.StatusCreated {
		t.Fatalf("POST /api/servers: %s", a)
	}
	if strings.Contains(string(a.Raw), "s3cret") {
		t.Errorf("the answer echoes a header value: %s", a.Raw)
	}
	if a.Obj["source"] != "api" || a.Obj["type"] != "streamable_http" || a.Obj["version"] != float64(1) || a.Header.Get("ETag") == "" ||
		a.Header.Get("Location") != "/api/servers/web" {
		t.Errorf("created: %s (ETag %q, Location %q)", a, a.Header.Get("ETag"), a.Header.Get("Location"))
	}
	if h, _ := a.Obj["headers"].(map[string]any); h["Authorization"] != "***redacted***" {
		t.Errorf("headers in the answer: %v", a.Obj["headers"])
	}
	live := gatewaytest.WaitLive(t, g, "web", "up")
	if l := live.Obj["live"].(map[string]any); l["tools"].(float64) == 0 {
		t.Errorf("live state without tools: %v", l)
	}
	if names := g.ToolNames(t, sid); !slices.Contains(names, "web__test_simple_text") {
		t.Errorf("the session does not list the new server's tools: %v", names)
	}
	if s := g.Reg.Server("web"); s == nil || s.Def.Headers["Authorization"] != "Bearer s3cret" || s.Def.Timeouts.Connect != 5*time.Second ||
		s.Def.Concurrency() != 2 || s.Def.Queue.Max != 5 || s.Def.Queue.Timeout != time.Second {
		t.Errorf("the running server's definition: %+v", s)
	}
	if q, _ := a.Obj["queue"].(map[string]any); a.Obj["max_concurrency"] != float64(2) || q["max"] != float64(5) || q["timeout"] != "1s" {
		t.Errorf("max_concurrency and queue in the answer: %v %v", a.Obj["max_concurrency"], a.Obj["queue"])
	}

	// The list has both, each with its source.
	list := g.API(t, "GET", "/api/servers", "", nil)
	var views []map[string]any
	if err := json.Unmarshal(list.Raw, &views); err != nil || len(views) != 2 {
		t.Fatalf("GET /api/servers: %s", list)
	}
	if views[0]["name"] != "everything" || views[0]["source"] != "file" || views[0]["file"] != "/etc/mcpgw/test.yaml" ||
		views[1]["name"] != "web" || views[1]["source"] != "api" {
		t.Errorf("GET /api/servers: %s", list)
	}

	// PATCH with the current ETag; the redaction marker written back keeps the secret.
	etag1 := live.Header.Get("ETag")
	p := g.API(t, "PATCH", "/api/servers/web", `{"meta":{"description":"patched"},"headers":{"Authorization":"***redacted***","X-Extra":"1"}}`,
		map[string]string{"If-Match": etag1})
	if p.Status != http.StatusOK || p.Obj["version"] != float64(2) || p.Header.Get("ETag") == etag1 {
		t.Fatalf("PATCH: %s", p)
	}
	if m, _ := p.Obj["meta"].(map[string]any); m["description"] != "patched" || m["title"] != "Web" {
		t.Errorf("PATCH merged meta: %v", p.Obj["meta"])
	}
	if s := g.Reg.Server("web"); s == nil || s.Def.Headers["Authorization"] != "Bearer s3cret" || s.Def.Headers["X-Extra"] != "1" {
		t.Errorf("after PATCH the server's headers: %+v", s.Def.Headers)
	}
	// A stale ETag: 412 for PUT, PATCH and DELETE.
	for _, m := range []string{"PUT", "PATCH", "DELETE"} {
		b := `{"type":"streamable_http","url":"` + gatewaytest.EverythingURL() + `"}`
		if m == "DELETE" {
			b = ""
		}
		if a := g.API(t, m, "/api/servers/web", b, map[string]string{"If-Match": etag1}); a.Status != http.StatusPreconditionFailed {
			t.Errorf("%s with a stale If-Match: %s, want 412", m, a)
		}
	}
	// A file reload keeps the API server.
	file := *g.Gateway.FileConfig()
	if err := g.Gateway.ReloadFile(&file); err != nil {
		t.Fatal(err)
	}
	if g.Reg.Server("web") == nil {
		t.Fatalf("a file reload dropped the API server")
	}
	// PUT replaces the whole document.
	put := g.API(t, "PUT", "/api/servers/web", `{"type":"streamable_http","url":"`+gatewaytest.EverythingURL()+`","enabled":false}`,
		map[string]string{"If-Match": p.Header.Get("ETag")})
	if put.Status != http.StatusOK || put.Obj["enabled"] != false || put.Obj["meta"] != nil || put.Obj["live"] != nil {
		t.Fatalf("PUT: %s", put)
	}
	if s := g.Reg.Server("web"); s != nil && !statusRetired(g.Reg, "web") {
		t.Errorf("a disabled server still runs as configured")
	}
	del := g.API(t, "DELETE", "/api/servers/web", "", map[string]string{"If-Match": put.Header.Get("ETag")})
	if del.Status != http.StatusNoContent {
		t.Fatalf("DELETE: %s", del)
	}
	if a := g.API(t, "GET", "/api/servers/web", "", nil); a.Status != http.StatusNotFound {
		t.Errorf("GET after DELETE: %s", a)
	}

	// Every write is an audit line: who, what, and hashes before and after.
	auditPath := filepath.Join(g.Gateway.FileConfig().StateDir, "audit.jsonl")
	lines := gatewaytest.WaitAudit(t, auditPath, func(ls []map[string]any) bool { return countAdmin(ls, "DELETE") == 1 })
	want := []string{"POST /api/servers ok", "PATCH /api/servers/web ok", "PUT /api/servers/web ok", "DELETE /api/servers/web ok"}
	var got []string
	for _, l := range lines {
		if l["kind"] != "admin" {
			continue
		}
		got = append(got, l["action"].(string)+" "+l["outcome"].(string))
		if l["actor"] != "local:uid="+strconv.Itoa(os.Getuid()) || l["object"] != "server/web" {
			t.Errorf("audit line %v", l)
		}
		switch l["action"] {
		case "POST /api/servers":
			if l["before"] != nil || l["after"] == nil {
				t.Errorf("create audit line %v", l)
			}
		case "DELETE /api/servers/web":
			if l["before"] == nil || l["after"] != nil {
				t.Errorf("delete audit line %v", l)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("admin audit lines %v, want %v", got, want)
	}
}

func statusRetired(reg *registry.Registry, name string) bool {
	for _, st := range reg.Statuses() {
		if st.Name == name {
			return st.Retired
		}
	}
	return true
}

func countAdmin(ls []map[string]any, method string) int {
	n := 0
	for _, l := range ls {
		if a, _ := l["action"].(string); l["kind"] == "admin" && strings.HasPrefix(a, method+" ") {
			n++
		}
	}
	return n
}

// TestAdminServerErrors: each refusal has its status and names the field or the reason.
func TestAdminServerErrors(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	withFilePath(t, g, "/etc/mcpgw/test.yaml")
	web := `{"name":"web","type":"streamable_http","url":"` + gatewaytest.EverythingURL() + `"}`

	cases := []struct {
		name, method, path, body string
		status                   int
		want                     string // in the answer
		field                    string // errors[0].field, when set
	}{
		{"bad JSON", "POST", "/api/servers", `{"name":"x",`, 400, "bad JSON", ""},
		{"bad JSON syntax", "POST", "/api/servers", `{"name":"x" "type":"stdio"}`, 400, "line 1", ""},
		{"not an object", "POST", "/api/servers", `["x"]`, 400, "must be a JSON object", ""},
		{"empty body", "POST", "/api/servers", ``, 400, "empty body", ""},
		{"unknown field", "POST", "/api/servers", `{"name":"x","type":"stdio","command":"x","colour":"red"}`, 400, `unknown field \"colour\"`, "colour"},
		{"unknown nested field", "POST", "/api/servers", `{"name":"x","type":"stdio","command":"x","meta":{"colour":"red"}}`, 400, `unknown field \"meta.colour\"`, "meta.colour"},
		{"wrong type", "POST", "/api/servers", `{"name":"x","type":"stdio","command":"x","args":"-v"}`, 400, "must be an array", "args"},
		{"no name", "POST", "/api/servers", `{"type":"stdio","command":"x"}`, 400, "name is required", "name"},
		{"no url", "POST", "/api/servers", `{"name":"nourl","type":"streamable_http"}`, 400, "needs a url", "servers.nourl"},
		{"bad duration", "POST", "/api/servers", `{"name":"slow","type":"stdio","command":"x","timeouts":{"call":"soon"}}`, 400, "not a duration", "servers.slow.timeouts.call"},
		{"negative max_concurrency", "POST", "/api/servers", `{"name":"slow","type":"stdio","command":"x","max_concurrency":-1}`, 400, "must not be negative", "servers.slow.max_concurrency"},
		{"bad queue timeout", "POST", "/api/servers", `{"name":"slow","type":"stdio","command":"x","queue":{"timeout":"soon"}}`, 400, "not a duration", "servers.slow.queue.timeout"},
		{"negative queue max", "POST", "/api/servers", `{"name":"slow","type":"stdio","command":"x","queue":{"max":-1}}`, 400, "must not be negative", "servers.slow.queue.max"},
		{"bad name", "POST", "/api/servers", `{"name":"a b","type":"stdio","command":"x"}`, 400, "server name must be", "servers.a b"},
		{"file-managed create", "POST", "/api/servers", `{"name":"everything","type":"stdio","command":"x"}`, 409, "managed by the config file /etc/mcpgw/test.yaml", ""},
		{"file-managed put", "PUT", "/api/servers/everything", `{"type":"stdio","command":"x"}`, 409, "managed by the config file /etc/mcpgw/test.yaml", ""},
		{"file-managed patch", "PATCH", "/api/servers/everything", `{"mode":"shared"}`, 409, "managed by the config file /etc/mcpgw/test.yaml", ""},
		{"file-managed delete", "DELETE", "/api/servers/everything", ``, 409, "managed by the config file /etc/mcpgw/test.yaml", ""},
		{"missing", "GET", "/api/servers/nope", ``, 404, `no server \"nope\"`, ""},
		{"missing delete", "DELETE", "/api/servers/nope", ``, 404, `no server \"nope\"`, ""},
		{"unknown route", "GET", "/api/nothing", ``, 404, "no admin API route", ""},
		{"wrong method", "POST", "/api/sessions", `{}`, 405, "not allowed", ""},
	}
	for _, c := range cases {
		a := g.API(t, c.method, c.path, c.body, nil)
		if a.Status != c.status || !strings.Contains(string(a.Raw), c.want) {
			t.Errorf("%s: %s %s: %s; want %d with %q", c.name, c.method, c.path, a, c.status, c.want)
			continue
		}
		if c.field != "" {
			if fe := a.FieldErrors(); len(fe) == 0 || !strings.HasPrefix(fe[0], c.field+": ") {
				t.Errorf("%s: errors %v, want the first about %q", c.name, fe, c.field)
			}
		}
		if ct := a.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
	}

	// The shared+stdio rule, with its exact text.
	a := g.API(t, "POST", "/api/servers", `{"name":"st","type":"stdio","command":"x","mode":"shared"}`, nil)
	if a.Status != 400 || !slices.Contains(a.FieldErrors(), ": "+config.SharedStdioError("st")) {
		t.Errorf("shared stdio: %s; want the error %q", a, config.SharedStdioError("st"))
	}
	// Also for a disabled entry: enabling it later must not be what fails.
	if a := g.API(t, "POST", "/api/servers", `{"name":"st","type":"stdio","command":"x","mode":"shared","enabled":false}`, nil); a.Status != 400 {
		t.Errorf("a disabled shared stdio server: %s, want 400", a)
	}
	if a := g.API(t, "GET", "/api/servers/st", "", nil); a.Status != 404 {
		t.Errorf("a refused server exists: %s", a)
	}

	// Dry run: valid changes nothing; invalid is the same 400.
	if a := g.API(t, "POST", "/api/servers/validate", web, nil); a.Status != 200 || a.Obj["valid"] != true {
		t.Errorf("validate: %s", a)
	}
	if a := g.API(t, "GET", "/api/servers/web", "", nil); a.Status != 404 {
		t.Errorf("validate created the server: %s", a)
	}
	if a := g.API(t, "POST", "/api/servers/validate", `{"name":"st","type":"stdio","command":"x","mode":"shared"}`, nil); a.Status != 400 {
		t.Errorf("validate of an invalid server: %s", a)
	}
	// Duplicate.
	if a := g.API(t, "POST", "/api/servers", web, nil); a.Status != 201 {
		t.Fatalf("create: %s", a)
	}
	if a := g.API(t, "POST", "/api/servers", web, nil); a.Status != 409 || !strings.Contains(string(a.Raw), "exists") {
		t.Errorf("duplicate: %s, want 409", a)
	}
	if a := g.API(t, "POST", "/api/servers/validate", web, nil); a.Status != 409 {
		t.Errorf("validate of a duplicate: %s, want 409", a)
	}
	// A PUT whose body names another server.
	if a := g.API(t, "PUT", "/api/servers/web", `{"name":"other","type":"stdio","command":"x"}`, nil); a.Status != 400 {
		t.Errorf("PUT renaming: %s, want 400", a)
	}
	// An answer as read can be sent back as it is.
	got := g.API(t, "GET", "/api/servers/web", "", nil)
	if a := g.API(t, "PUT", "/api/servers/web", string(got.Raw), map[string]string{"If-Match": got.Header.Get("ETag")}); a.Status != 200 {
		t.Errorf("PUT of a GET answer: %s", a)
	}
}

// TestAdminMergedAtStart: a gateway started on a store that holds API servers runs them
// (a restart keeps them); an entry that makes the config invalid leaves the file's config
// serving alone.
func TestAdminMergedAtStart(t *testing.T) {
	cfg, _, err := config.Parse([]byte("listen: 127.0.0.1:1\nstate_dir: " + t.TempDir() + "\nauth: {audit: {path: \"off\"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewMemory()
	doc := `{"type":"streamable_http","url":"` + gatewaytest.EverythingURL() + `"}`
	_ = st.PutConfig(&store.ConfigEntry{Kind: "server", Name: "web", Doc: json.RawMessage(doc), Source: "api", Version: 1})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := registry.New(cfg, log)
	gw, err := gateway.New(cfg, reg, st, log)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	defer gw.Close()
	if reg.Server("web") == nil || !slices.Contains(reg.Names(), "web") {
		t.Errorf("the stored server is not configured at start: %v", reg.Names())
	}

	_ = st.PutConfig(&store.ConfigEntry{Kind: "server", Name: "bad", Doc: json.RawMessage(`{"type":"stdio"}`), Source: "api", Version: 1})
	reg2 := registry.New(cfg, log)
	gw2, err := gateway.New(cfg, reg2, st, log)
	if err != nil {
		t.Fatal(err)
	}
	defer reg2.Close()
	defer gw2.Close()
	if len(reg2.Names()) != 0 {
		t.Errorf("with an invalid stored entry the gateway runs %v, want the file's config alone", reg2.Names())
	}
	// And a file reload that the stored entries make invalid is refused.
	if err := gw2.ReloadFile(cfg); err == nil || !strings.Contains(err.Error(), "type stdio needs a command") {
		t.Errorf("ReloadFile with an invalid stored entry: %v", err)
	}
}

// TestAdminTaskFields: tasks take enabledMcpServers as an alias of enabled_mcp_servers;
// any other unknown field is a 400 naming it.
func TestAdminTaskFields(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	a := g.API(t, "POST", "/api/tasks", `{"id":"t1","enabledMcpServers":["everything"]}`, nil)
	if a.Status != http.StatusCreated || !strings.Contains(string(a.Raw), `"enabled_mcp_servers": [`+"\n"+`    "everything"`) {
		t.Fatalf("POST with enabledMcpServers: %s", a)
	}
	if a := g.API(t, "POST", "/api/tasks", `{"id":"t2","enabled_servers":["everything"]}`, nil); a.Status != 400 || !slices.Contains(a.FieldErrors(), `enabled_servers: unknown field "enabled_servers"`) {
		t.Errorf("POST with an unknown field: %s", a)
	}
	if a := g.API(t, "POST", "/api/tasks", `{"id":"t3","enabledMcpServers":[],"enabled_mcp_servers":[]}`, nil); a.Status != 400 {
		t.Errorf("POST with both spellings: %s", a)
	}
	if a := g.API(t, "PUT", "/api/tasks/t1", `{"enabledMcpServers":["nope"]}`, nil); a.Status != 400 || !strings.Contains(string(a.Raw), "unknown server nope") {
		t.Errorf("PUT with an unknown server: %s", a)
	}
	got := g.API(t, "GET", "/api/tasks/t1", "", nil)
	if a := g.API(t, "PUT", "/api/tasks/t1", string(got.Raw), nil); a.Status != 200 {
		t.Errorf("PUT of a GET answer: %s", a)
	}
}

// TestAdminAgentsExecutors: agents and executors are created with PUT, changed with PATCH
// and deleted through the API, checked by the same validation (an agent's unknown
// executor, a deleted executor an agent still names), file ones refused with 409, and
// executor env_injection values redacted.
func TestAdminAgentsExecutors(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+`
executors:
  laptop: {type: local_pc}
`)
	if a := g.API(t, "PUT", "/api/executors/laptop", `{"type":"local_pc"}`, nil); a.Status != 409 {
		t.Errorf("PUT of a file executor: %s, want 409", a)
	}
	ex := `{"type":"local_docker","mcp_policy":{"allow_stdio":false,"env_injection":{"HTTP_PROXY":"http://user:pw@proxy:3128"},"env_injection_overrides_server":true,"url_rewrite":{"http://127.0.0.1":"http://host.docker.internal"}}}`
	a := g.API(t, "PUT", "/api/executors/docker", ex, g.LocalAuth(t))
	if a.Status != 201 || strings.Contains(string(a.Raw), "pw@proxy") || a.Obj["source"] != "api" {
		t.Fatalf("PUT /api/executors/docker: %s", a)
	}
	if a := g.API(t, "PUT", "/api/executors/bad", `{"type":"local_pc","mcp_policy":{"allow_ftp":true}}`, nil); a.Status != 400 ||
		!slices.Contains(a.FieldErrors(), `mcp_policy.allow_ftp: unknown field "mcp_policy.allow_ftp"`) {
		t.Errorf("an unknown policy field: %s", a)
	}
	if a := g.API(t, "PUT", "/api/agents/a1", `{"servers":["everything",{"name":"nope"}],"executor":"docker"}`, nil); a.Status != 400 ||
		!strings.Contains(string(a.Raw), `unknown server \"nope\"`) {
		t.Errorf("an agent naming an unknown server: %s", a)
	}
	ag := g.API(t, "PUT", "/api/agents/a1", `{"servers":["everything"],"executor":"docker","tools":{"deny":["everything__test_sampling"]}}`, nil)
	if ag.Status != 201 {
		t.Fatalf("PUT /api/agents/a1: %s", ag)
	}
	v, fail := g.Gateway.Explain("a1", "", "")
	if fail != nil || v.Executor != "docker" || v.Hidden != 1 {
		t.Errorf("explain a1 after the PUT: %+v %v", v, fail)
	}
	// The executor an agent names cannot go.
	if a := g.API(t, "DELETE", "/api/executors/docker", "", nil); a.Status != 400 || !strings.Contains(string(a.Raw), `unknown executor \"docker\"`) {
		t.Errorf("deleting an executor an agent names: %s", a)
	}
	p := g.API(t, "PATCH", "/api/agents/a1", `{"read_only":true,"tools":null}`, map[string]string{"If-Match": ag.Header.Get("ETag")})
	if p.Status != 200 || p.Obj["read_only"] != true || p.Obj["tools"] != nil || p.Obj["version"] != float64(2) {
		t.Fatalf("PATCH /api/agents/a1: %s", p)
	}
	if a := g.API(t, "DELETE", "/api/agents/a1", "", map[string]string{"If-Match": ag.Header.Get("ETag")}); a.Status != 412 {
		t.Errorf("DELETE with a stale ETag: %s", a)
	}
	list := g.API(t, "GET", "/api/agents", "", nil)
	if !strings.Contains(string(list.Raw), `"id": "a1"`) {
		t.Errorf("GET /api/agents: %s", list)
	}
	if a := g.API(t, "DELETE", "/api/agents/a1", "", map[string]string{"If-Match": p.Header.Get("ETag")}); a.Status != 204 {
		t.Errorf("DELETE /api/agents/a1: %s", a)
	}
	if a := g.API(t, "DELETE", "/api/executors/docker", "", nil); a.Status != 204 {
		t.Errorf("DELETE /api/executors/docker once no agent names it: %s", a)
	}
	if a := g.API(t, "GET", "/api/executors", "", nil); strings.Contains(string(a.Raw), "docker") || !strings.Contains(string(a.Raw), `"laptop"`) {
		t.Errorf("GET /api/executors: %s", a)
	}
}

// TestAdminResolve: GET /api/resolve shows each server a session would get after the
// executor's url_rewrite and env injection, values redacted, with its source.
func TestAdminResolve(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+`
  tool:
    type: stdio
    command: /bin/true
    env: {OWN: "mine", TOKEN: "server-secret"}
executors:
  docker:
    type: local_docker
    mcp_policy:
      url_rewrite: {"http://127.0.0.1": "http://host.docker.internal"}
      env_injection: {TOKEN: "injected-secret", PROXY: "http://proxy:3128"}
`)
	if a := g.API(t, "POST", "/api/servers", `{"name":"web","type":"streamable_http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer h"}}`, nil); a.Status != 201 {
		t.Fatalf("POST: %s", a)
	}
	a := g.API(t, "GET", "/api/resolve?agent=default&executor=docker", "", nil)
	if a.Status != 200 {
		t.Fatalf("GET /api/resolve: %s", a)
	}
	for _, secret := range []string{"server-secret", "injected-secret", "mine", "Bearer h", "proxy:3128"} {
		if strings.Contains(string(a.Raw), secret) {
			t.Errorf("the answer shows %q: %s", secret, a.Raw)
		}
	}
	var res struct {
		Executor string
		Servers  []struct {
			Name, Transport, Mode, Endpoint, Source string
			Env, Headers                            map[string]string
		}
	}
	_ = json.Unmarshal(a.Raw, &res)
	got := map[string]string{}
	for _, s := range res.Servers {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range s.Env {
				if !yield(k) {
					return
				}
			}
		})
		got[s.Name] = s.Source + " " + s.Transport + " " + s.Mode + " " + s.Endpoint + " " + strings.Join(keys, ",")
	}
	want := map[string]string{
		"everything": "file streamable_http shared " + strings.Replace(gatewaytest.EverythingURL(), "http://127.0.0.1", "http://host.docker.internal", 1) + " ",
		"tool":       "file stdio per_session  OWN,PROXY,TOKEN",
		"web":        "api streamable_http shared http://host.docker.internal:9/mcp ",
	}
	if res.Executor != "docker" || len(got) != 3 {
		t.Fatalf("resolve: %s", a.Raw)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("server %s: %q, want %q", k, got[k], w)
		}
	}
	if a := g.API(t, "GET", "/api/resolve?task=nope", "", nil); a.Status != 404 {
		t.Errorf("an unknown task: %s", a)
	}
}
