package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// fakePort lets in the bearer token "admin" (and "user" as a valid non-admin one), and
// the local owner when owner is set. The config-changing methods (the embedded Port) are
// not the router's and are left out: calling one panics.
type fakePort struct {
	Port
	owner             bool
	allow             bool
	slowed            bool
	failed, succeeded int
}

func (p *fakePort) CheckOrigin(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Origin") == "http://evil" {
		http.Error(w, "foreign origin", http.StatusForbidden)
		return false
	}
	return true
}
func (p *fakePort) LocalOwner(*http.Request) (string, bool) { return "local:1000", p.owner }
func (p *fakePort) Slowed(*http.Request) *auth.Failure {
	if !p.slowed {
		return nil
	}
	return &auth.Failure{Status: http.StatusTooManyRequests, RetryAfter: "3", Message: "slow down"}
}
func (p *fakePort) AdminCredential(_ context.Context, tok string) (string, bool, bool) {
	return "key:" + tok, tok == "admin", tok == "admin" || tok == "user"
}
func (p *fakePort) CredentialFailed(*http.Request, string) { p.failed++ }
func (p *fakePort) CredentialSucceeded(*http.Request)      { p.succeeded++ }
func (p *fakePort) Audit(auth.AuditEvent)                  {}
func (p *fakePort) Config() *config.Config {
	return &config.Config{Admin: config.AdminConfig{AllowCommands: &p.allow}}
}
func (p *fakePort) SessionCount() int { return 7 }
func (p *fakePort) PluginStatuses() []registry.PluginStatus {
	return []registry.PluginStatus{{Name: "sql"}}
}
func (p *fakePort) Plugin(string) *registry.Plugin { return nil }
func (p *fakePort) SessionRecords() ([]*store.Record, error) {
	return []*store.Record{{ID: "b", Created: time.Unix(20, 0)}, {ID: "a", Created: time.Unix(10, 0)}}, nil
}
func (p *fakePort) SessionRecord(id string) (*store.Record, error) {
	if id != "a" {
		return nil, store.ErrNotFound
	}
	return &store.Record{ID: "a", ProtocolVersion: "2025-06-18"}, nil
}
func (p *fakePort) SessionRow(rec *store.Record) SessionRow {
	return SessionRow{ID: rec.ID, Created: rec.Created, Servers: []string{}}
}
func (p *fakePort) SessionView(id string) ([]SessionTool, bool) {
	return []SessionTool{{Name: "s__t", Server: "s", Tool: "t"}}, id == "a"
}
func (p *fakePort) EndSession(id, _ string) error {
	if id != "a" {
		return store.ErrNotFound
	}
	return nil
}
func (p *fakePort) RestartServer(name string) error {
	switch name {
	case "gone":
		return registry.ErrNoServer
	case "leaving":
		return registry.ErrRetired
	}
	return nil
}

func testAPI(port *fakePort) (*API, *mux.Router) {
	echo := func(w http.ResponseWriter, r *http.Request) {
		JSON(w, http.StatusOK, map[string]any{"actor": Actor(r), "cred": Credentialed(r), "name": r.PathValue("name")})
	}
	var a *API
	a = New(port, "v1", nil, func() []Route {
		return []Route{
			{Method: "GET", Path: "/api/things", Summary: "list", Handler: echo},
			{Method: "GET", Path: "/api/things/{name}", Summary: "one", Handler: echo},
			{Method: "DELETE", Path: "/api/things/{name}", Summary: "delete", Handler: echo},
			{Method: "GET", Path: "/api/runtime", Summary: "runtime", Handler: a.runtime.ServeRuntime},
			{Method: "GET", Path: "/api/openapi.json", Summary: "doc", Handler: a.ServeOpenAPI},
			{Method: "GET", Path: "/api/plugins", Summary: "plugins", Handler: a.plugins.ServePlugins},
			{Method: "GET", Path: "/api/plugins/{name}", Summary: "plugin", Handler: a.plugins.ServePlugin},
			{Method: "POST", Path: "/api/servers/{name}/restart", Summary: "restart", Handler: a.servers.ServeRestartServer},
			{Method: "GET", Path: "/api/sessions", Summary: "sessions", Handler: a.sessions.ServeSessions},
			{Method: "GET", Path: "/api/sessions/{id}", Summary: "session", Handler: a.sessions.ServeSession},
			{Method: "DELETE", Path: "/api/sessions/{id}", Summary: "end", Handler: a.sessions.ServeEndSession},
		}
	})
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "ui page", http.StatusTeapot) })
	return a, a.Router(func(root *mux.Router) http.Handler {
		root.Handle("/ui/page", ui).Methods("GET")
		return ui
	})
}

func call(h http.Handler, method, path, token string) (*httptest.ResponseRecorder, map[string]any) {
	r := httptest.NewRequest(method, path, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var body map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &body)
	return w, body
}

func TestGuard(t *testing.T) {
	port := &fakePort{}
	_, h := testAPI(port)
	if w, b := call(h, "GET", "/api/things/x", "admin"); w.Code != 200 || b["actor"] != "key:admin" || b["cred"] != true || b["name"] != "x" || port.succeeded != 1 {
		t.Errorf("admin token: %d %v (successes %d)", w.Code, b, port.succeeded)
	}
	if w, _ := call(h, "GET", "/api/things", "user"); w.Code != http.StatusForbidden {
		t.Errorf("a valid non-admin credential: %d, want 403", w.Code)
	}
	if w, _ := call(h, "GET", "/api/things", "wrong"); w.Code != http.StatusUnauthorized || port.failed != 1 || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("a wrong token: %d (failures %d), want 401 with WWW-Authenticate", w.Code, port.failed)
	}
	if w, _ := call(h, "GET", "/api/things", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("no credential and no local owner: %d, want 401", w.Code)
	}
	port.owner = true
	if w, b := call(h, "GET", "/api/things", ""); w.Code != 200 || b["actor"] != "local:1000" || b["cred"] != false {
		t.Errorf("the local owner: %d %v", w.Code, b)
	}
	port.slowed = true
	if w, _ := call(h, "GET", "/api/things", "admin"); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "3" {
		t.Errorf("a slowed source: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	r := httptest.NewRequest("GET", "/api/things", nil)
	r.Header.Set("Origin", "http://evil")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("a foreign Origin: %d, want 403", w.Code)
	}
}

func TestRouterAnswers(t *testing.T) {
	_, h := testAPI(&fakePort{})
	if w, b := call(h, "POST", "/api/things/x", "admin"); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, DELETE" || !strings.Contains(b["error"].(string), "allowed: GET, DELETE") {
		t.Errorf("a wrong method: %d Allow %q %v", w.Code, w.Header().Get("Allow"), b)
	}
	if w, _ := call(h, "POST", "/api/things/x", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("a wrong method without a credential: %d, want 401 (the guard first)", w.Code)
	}
	if w, b := call(h, "GET", "/api/nothing", "admin"); w.Code != http.StatusNotFound || b["error"] != "no admin API route /api/nothing" {
		t.Errorf("an unknown path: %d %v", w.Code, b)
	}
	if w, _ := call(h, "GET", "/ui/elsewhere", ""); w.Code != http.StatusTeapot {
		t.Errorf("an unknown UI path: %d, want the UI's own answer", w.Code)
	}
	if w, _ := call(h, "POST", "/ui/page", ""); w.Code != http.StatusMethodNotAllowed || w.Body.Len() != 0 {
		t.Errorf("a UI page's wrong method: %d %q, want a bare 405", w.Code, w.Body.String())
	}
	if got, want := strings.Join(Paths(h), ","), "GET /api/things,GET /api/things/{name},DELETE /api/things/{name},GET /api/runtime,GET /api/openapi.json,GET /api/plugins,GET /api/plugins/{name},POST /api/servers/{name}/restart,GET /api/sessions,GET /api/sessions/{id},DELETE /api/sessions/{id}"; got != want {
		t.Errorf("Paths: %s, want %s", got, want)
	}
}

func TestOpenAPIAndRuntime(t *testing.T) {
	_, h := testAPI(&fakePort{})
	w, doc := call(h, "GET", "/api/openapi.json", "admin")
	paths, _ := doc["paths"].(map[string]any)
	del, _ := paths["/api/things/{name}"].(map[string]any)["delete"].(map[string]any)
	if w.Code != 200 || doc["info"].(map[string]any)["version"] != "v1" || len(paths) != 9 || del["operationId"] != "deleteThingsName" {
		t.Errorf("OpenAPI: %d %v", w.Code, doc)
	}
	if w, b := call(h, "GET", "/api/runtime", "admin"); w.Code != 200 || b["sessions"] != float64(7) {
		t.Errorf("runtime: %d %v", w.Code, b)
	}
	if w, _ := call(h, "GET", "/api/runtime?gc=1", "admin"); w.Code != 200 {
		t.Errorf("the first forced collection: %d", w.Code)
	}
	if w, _ := call(h, "GET", "/api/runtime?gc=1", "admin"); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("a second forced collection at once: %d, want 429 with Retry-After", w.Code)
	}
}

func TestPluginsAndRestart(t *testing.T) {
	_, h := testAPI(&fakePort{})
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/api/plugins", nil)
	r.Header.Set("Authorization", "Bearer admin")
	h.ServeHTTP(w, r)
	var rows []PluginRow
	if err := json.Unmarshal(w.Body.Bytes(), &rows); err != nil || w.Code != 200 || len(rows) != 1 || rows[0].Name != "sql" || rows[0].ConnectionsList == nil {
		t.Errorf("plugins: %d %s (%v)", w.Code, w.Body.String(), err)
	}
	if w, b := call(h, "GET", "/api/plugins/nope", "admin"); w.Code != http.StatusNotFound || b["error"] != `no plugin "nope"` {
		t.Errorf("an unknown plugin: %d %v", w.Code, b)
	}
	for name, want := range map[string]int{"docs": http.StatusAccepted, "gone": http.StatusNotFound, "leaving": http.StatusConflict} {
		if w, _ := call(h, "POST", "/api/servers/"+name+"/restart", "admin"); w.Code != want {
			t.Errorf("restart %s: %d, want %d", name, w.Code, want)
		}
	}
}

func TestSessions(t *testing.T) {
	_, h := testAPI(&fakePort{})
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/api/sessions", nil)
	r.Header.Set("Authorization", "Bearer admin")
	h.ServeHTTP(w, r)
	var rows []SessionRow
	if err := json.Unmarshal(w.Body.Bytes(), &rows); err != nil || len(rows) != 2 || rows[0].ID != "a" || rows[1].ID != "b" {
		t.Errorf("sessions, oldest first: %s (%v)", w.Body.String(), err)
	}
	w, b := call(h, "GET", "/api/sessions/a", "admin")
	view, _ := b["view"].([]any)
	if w.Code != 200 || b["protocol_version"] != "2025-06-18" || len(view) != 1 || b["tools"] != float64(1) {
		t.Errorf("one session: %d %v", w.Code, b)
	}
	if w, _ := call(h, "GET", "/api/sessions/zz", "admin"); w.Code != http.StatusNotFound {
		t.Errorf("an unknown session: %d", w.Code)
	}
	if w, _ := call(h, "DELETE", "/api/sessions/a", "admin"); w.Code != http.StatusNoContent {
		t.Errorf("end a session: %d", w.Code)
	}
	if w, _ := call(h, "DELETE", "/api/sessions/zz", "admin"); w.Code != http.StatusNotFound {
		t.Errorf("end an unknown session: %d", w.Code)
	}
}
