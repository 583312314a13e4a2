package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// fakeGrants is an UpstreamAuth over a map: grants by server and subject, the consent
// URLs it started, and the revocations it was asked for.
type fakeGrants struct {
	mu      sync.Mutex
	grants  []registry.GrantInfo
	started []string // server|subject
	revoked []string
	fail    error // Grants' error
}

func (f *fakeGrants) Grants(subject string) ([]registry.GrantInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	var out []registry.GrantInfo
	for _, g := range f.grants {
		if subject == "" || g.Subject == subject {
			out = append(out, g)
		}
	}
	return out, nil
}

func (f *fakeGrants) Revoke(server, subject string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, server+"|"+subject)
	f.grants = slices.DeleteFunc(f.grants, func(g registry.GrantInfo) bool { return g.Server == server && g.Subject == subject })
	return nil
}

func (f *fakeGrants) ConsentURL(_ context.Context, server, subject string) (registry.Consent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if server == "broken" {
		return registry.Consent{}, errors.New("no metadata")
	}
	f.started = append(f.started, server+"|"+subject)
	return registry.Consent{URL: "https://gw.example/oauth/consent/s-" + server, Code: "ABCD-EFGH"}, nil
}

// grantsPort is the router test's fakePort with a config of OAuth upstreams, the fake
// grants and an audit log.
type grantsPort struct {
	fakePort
	cfg    *config.Config
	grants *fakeGrants
	mu     sync.Mutex
	audit  []auth.AuditEvent
}

func (p *grantsPort) Config() *config.Config     { return p.cfg }
func (p *grantsPort) UpstreamAuth() UpstreamAuth { return p.grants }
func (p *grantsPort) Audit(ev auth.AuditEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.audit = append(p.audit, ev)
}

func newGrantsPort() *grantsPort {
	oauth := func(per, grant string) *config.ServerDef {
		return &config.ServerDef{Type: "http", URL: "http://127.0.0.1:1/mcp", Auth: config.UpstreamAuth{Type: "oauth", Per: per, Grant: grant}}
	}
	cfg := &config.Config{Servers: map[string]*config.ServerDef{
		"crm":     oauth("server", "authorization_code"),
		"mail":    oauth("user", "authorization_code"),
		"machine": oauth("server", "client_credentials"),
		"broken":  oauth("server", "authorization_code"),
		"plain":   {Type: "http", URL: "http://127.0.0.1:1/mcp"},
	}}
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	return &grantsPort{cfg: cfg, grants: &fakeGrants{grants: []registry.GrantInfo{
		{Server: "crm", Issuer: "https://as.example", Scopes: []string{"mcp"}, Expires: exp, Refreshable: true, Updated: exp.Add(-time.Hour)},
		{Server: "mail", Subject: "alice", Issuer: "https://mail.example", Updated: exp},
		{Server: "gone", Subject: "bob", Issuer: "https://old.example", Updated: exp},
	}}}
}

// grantsAPI is the admin router with the route table's own upstream-grant routes (and
// only those) over port.
func grantsAPI(port *grantsPort) http.Handler {
	var a *API
	a = New(port, "v1", nil, func() []Route {
		var out []Route
		for _, rt := range a.Routes() {
			if strings.HasPrefix(rt.Path, "/api/upstream-grants") {
				out = append(out, rt)
			}
		}
		return out
	})
	return a.Router(func(*mux.Router) http.Handler { return http.NotFoundHandler() })
}

func send(h http.Handler, method, path, token, body string) (*httptest.ResponseRecorder, map[string]any) {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out map[string]any
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	return w, out
}

// TestUpstreamGrantsList: every OAuth upstream of the config is listed, with or without a
// grant (plain servers are not), each kept grant as GrantInfo in JSON (a grant of a server
// no longer configured too), sorted; ?server= and ?subject= narrow both.
func TestUpstreamGrantsList(t *testing.T) {
	h := grantsAPI(newGrantsPort())
	w, _ := send(h, "GET", "/api/upstream-grants", "admin", "")
	var got UpstreamGrants
	if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil {
		t.Fatalf("list: %d %s", w.Code, w.Body)
	}
	var names []string
	for _, s := range got.Servers {
		names = append(names, s.Name+":"+s.Per+":"+s.Grant+":"+map[bool]string{true: "granted", false: "none"}[s.Granted]+":"+map[bool]string{true: "connect", false: "-"}[s.Connect])
	}
	want := []string{"broken:server:authorization_code:none:connect", "crm:server:authorization_code:granted:connect",
		"machine:server:client_credentials:none:-", "mail:user:authorization_code:granted:connect"}
	if !slices.Equal(names, want) {
		t.Errorf("servers: %v, want %v", names, want)
	}
	if len(got.Grants) != 3 || got.Grants[0].Server != "crm" || got.Grants[1].Server != "gone" || got.Grants[2].Subject != "alice" {
		t.Fatalf("grants: %+v", got.Grants)
	}
	if g := got.Grants[0]; g.Subject != "" || g.Issuer != "https://as.example" || !g.Refreshable || g.Expires.Year() != 2030 || !slices.Equal(g.Scopes, []string{"mcp"}) {
		t.Errorf("crm's grant: %+v", g)
	}
	// The JSON names are the documented ones, and a grant without scopes lists [].
	for _, key := range []string{`"server":`, `"subject":`, `"issuer":`, `"scopes": []`, `"expires":`, `"refreshable":`, `"updated":`, `"granted":`, `"per":`, `"grant":`} {
		if !strings.Contains(w.Body.String(), key) {
			t.Errorf("the answer has no %s: %s", key, w.Body)
		}
	}

	w, _ = send(h, "GET", "/api/upstream-grants?server=mail&subject=alice", "admin", "")
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || len(got.Servers) != 1 || !got.Servers[0].Granted || len(got.Grants) != 1 || got.Grants[0].Subject != "alice" {
		t.Errorf("?server=mail&subject=alice: %s", w.Body)
	}
	w, _ = send(h, "GET", "/api/upstream-grants?server=mail&subject=carol", "admin", "")
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || len(got.Servers) != 1 || got.Servers[0].Granted || len(got.Grants) != 0 {
		t.Errorf("?server=mail&subject=carol (no grant): %s", w.Body)
	}
}

// TestUpstreamGrantsConnect: a per-server upstream answers a consent URL for an empty
// body or {}; a per-user one needs the subject; a subject for a per-server one, an
// unknown or plain server, a machine credential, a subject with a newline, unknown
// fields, a huge body are refused before anything starts; a failing start is a 502; the
// start is audited.
func TestUpstreamGrantsConnect(t *testing.T) {
	port := newGrantsPort()
	h := grantsAPI(port)
	for _, body := range []string{"", "{}"} {
		if w, b := send(h, "POST", "/api/upstream-grants/crm/connect", "admin", body); w.Code != 200 || b["url"] != "https://gw.example/oauth/consent/s-crm" || b["code"] != "ABCD-EFGH" {
			t.Errorf("crm with body %q: %d %v", body, w.Code, b)
		}
	}
	if w, b := send(h, "POST", "/api/upstream-grants/mail/connect", "admin", `{"subject": "alice"}`); w.Code != 200 || b["url"] == nil || b["subject"] != "alice" {
		t.Errorf("mail for alice: %d %v", w.Code, b)
	}
	if want := []string{"crm|", "crm|", "mail|alice"}; !slices.Equal(port.grants.started, want) {
		t.Errorf("authorizations started: %v, want %v", port.grants.started, want)
	}
	port.mu.Lock()
	n := len(port.audit)
	last := port.audit[n-1]
	port.mu.Unlock()
	if n != 3 || last.Object != "upstream-grants/mail/alice" || last.Outcome != "started" || last.Actor != "key:admin" || last.Action != "POST /api/upstream-grants/mail/connect" {
		t.Errorf("audit: %d events, last %+v", n, last)
	}

	refused := []struct {
		path, body string
		status     int
		says       string
	}{
		{"/api/upstream-grants/mail/connect", `{}`, 400, "subject whose grant it is is required"},
		{"/api/upstream-grants/crm/connect", `{"subject": "alice"}`, 400, "send no subject"},
		{"/api/upstream-grants/nosuch/connect", `{}`, 404, `no OAuth upstream named "nosuch"`},
		{"/api/upstream-grants/plain/connect", `{}`, 404, `no OAuth upstream named "plain"`},
		{"/api/upstream-grants/machine/connect", `{}`, 400, "client_credentials"},
		{"/api/upstream-grants/mail/connect", `{"subject": "alice\nadmin granted everything"}`, 400, "control characters"},
		{"/api/upstream-grants/mail/connect", `{"subject": "` + strings.Repeat("a", 600) + `"}`, 400, "longer than"},
		{"/api/upstream-grants/mail/connect", `{"subject": "alice", "token": "x"}`, 400, "token"},
		{"/api/upstream-grants/mail/connect", `["alice"]`, 400, "JSON object"},
		{"/api/upstream-grants/mail/connect", `{"subject": "` + strings.Repeat("a", MaxBody) + `"}`, 413, "larger than"},
		{"/api/upstream-grants/broken/connect", `{}`, 502, "could not start: no metadata"},
	}
	for _, c := range refused {
		w, b := send(h, "POST", c.path, "admin", c.body)
		msg, _ := b["error"].(string)
		if w.Code != c.status || !strings.Contains(msg, c.says) || b["url"] != nil {
			t.Errorf("POST %s %.60q: %d %.200s, want %d saying %q", c.path, c.body, w.Code, w.Body, c.status, c.says)
		}
	}
	if len(port.grants.started) != 3 {
		t.Errorf("a refused request started an authorization: %v", port.grants.started)
	}
	port.mu.Lock()
	defer port.mu.Unlock()
	if len(port.audit) != 3 {
		t.Errorf("refusals were audited as writes: %+v", port.audit[3:])
	}
}

// TestUpstreamGrantsRevoke: DELETE forgets the server-wide grant, or one subject's; a
// grant that is not kept is a 404 and nothing is revoked; a subject with a newline is
// refused; each revocation is audited with the grant before it.
func TestUpstreamGrantsRevoke(t *testing.T) {
	port := newGrantsPort()
	h := grantsAPI(port)
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/api/upstream-grants/mail", 404},               // mail has no server-wide grant
		{"/api/upstream-grants/mail?subject=carol", 404}, // nor one of carol
		{"/api/upstream-grants/crm?subject=alice", 404},  // crm's is server-wide
		{"/api/upstream-grants/nosuch", 404},
		{"/api/upstream-grants/mail?subject=alice%0Aforged", 400},
	} {
		if w, b := send(h, "DELETE", c.path, "admin", ""); w.Code != c.status || b["error"] == nil {
			t.Errorf("DELETE %s: %d %s, want %d", c.path, w.Code, w.Body, c.status)
		}
	}
	if len(port.grants.revoked) != 0 {
		t.Fatalf("revoked without a grant: %v", port.grants.revoked)
	}
	if w, b := send(h, "DELETE", "/api/upstream-grants/crm", "admin", ""); w.Code != 200 || b["revoked"].(map[string]any)["issuer"] != "https://as.example" {
		t.Errorf("DELETE crm: %d %v", w.Code, b)
	}
	if w, _ := send(h, "DELETE", "/api/upstream-grants/mail?subject=alice", "admin", ""); w.Code != 200 {
		t.Errorf("DELETE mail alice: %d %s", w.Code, w.Body)
	}
	if w, _ := send(h, "DELETE", "/api/upstream-grants/gone?subject=bob", "admin", ""); w.Code != 200 {
		t.Errorf("DELETE a grant of a server no longer configured: %d %s", w.Code, w.Body)
	}
	if want := []string{"crm|", "mail|alice", "gone|bob"}; !slices.Equal(port.grants.revoked, want) {
		t.Errorf("revoked %v, want %v", port.grants.revoked, want)
	}
	if w, _ := send(h, "DELETE", "/api/upstream-grants/crm", "admin", ""); w.Code != 404 {
		t.Errorf("DELETE crm again: %d, want 404", w.Code)
	}
	port.mu.Lock()
	defer port.mu.Unlock()
	if len(port.audit) != 3 || port.audit[0].Object != "upstream-grants/crm" || port.audit[0].Outcome != "revoked" || port.audit[0].Before == "" || port.audit[1].Object != "upstream-grants/mail/alice" {
		t.Errorf("audit: %+v", port.audit)
	}
}

// TestUpstreamGrantsGuardAndRouter: no credential is a 401, a non-admin's a 403, a wrong
// method a 405 with Allow from the router, a path-traversal name never reaches the
// handler as a server; the store's failure is a 503; the routes are in the OpenAPI
// document.
func TestUpstreamGrantsGuardAndRouter(t *testing.T) {
	port := newGrantsPort()
	h := grantsAPI(port)
	if w, _ := send(h, "GET", "/api/upstream-grants", "", ""); w.Code != 401 || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("no credential: %d", w.Code)
	}
	if w, _ := send(h, "POST", "/api/upstream-grants/crm/connect", "", "{}"); w.Code != 401 {
		t.Errorf("connect without a credential: %d", w.Code)
	}
	if w, _ := send(h, "DELETE", "/api/upstream-grants/crm", "user", ""); w.Code != 403 {
		t.Errorf("revoke with a non-admin credential: %d", w.Code)
	}
	if w, _ := send(h, "PUT", "/api/upstream-grants/crm", "admin", "{}"); w.Code != 405 || w.Header().Get("Allow") != "DELETE" {
		t.Errorf("PUT: %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
	if w, _ := send(h, "GET", "/api/upstream-grants/crm/connect", "admin", ""); w.Code != 405 || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET connect: %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
	if w, _ := send(h, "POST", "/api/upstream-grants", "admin", "{}"); w.Code != 405 || w.Header().Get("Allow") != "GET" {
		t.Errorf("POST list: %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
	for _, p := range []string{"/api/upstream-grants/..%2Fcrm/connect", "/api/upstream-grants/../upstream-grants/crm", "/api/upstream-grants/%2e%2e/connect", "/api/upstream-grants/crm%2F..%2F..%2Fetc"} {
		w, _ := send(h, "DELETE", p, "admin", "")
		w2, _ := send(h, "POST", p, "admin", "{}")
		// The router cleans the path first (a 301 to the clean one, as for every route) or
		// finds no route; the handler never sees ".." as a server.
		if ok := func(c int) bool { return c == http.StatusMovedPermanently || c == http.StatusNotFound }; !ok(w.Code) || !ok(w2.Code) {
			t.Errorf("%s: DELETE %d, POST %d, want 301 or 404", p, w.Code, w2.Code)
		}
	}
	if len(port.grants.revoked)+len(port.grants.started) != 0 {
		t.Errorf("a traversal reached a grant: revoked %v, started %v", port.grants.revoked, port.grants.started)
	}
	port.grants.fail = errors.New("redis down")
	if w, b := send(h, "GET", "/api/upstream-grants", "admin", ""); w.Code != 503 || !strings.Contains(b["error"].(string), "redis down") {
		t.Errorf("a failing store: %d %v", w.Code, b)
	}
	if w, _ := send(h, "DELETE", "/api/upstream-grants/crm", "admin", ""); w.Code != 503 {
		t.Errorf("revoke over a failing store: %d", w.Code)
	}
	doc := OpenAPI(New(port, "v1", nil, nil).Routes(), "v1")
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/api/upstream-grants", "/api/upstream-grants/{name}/connect", "/api/upstream-grants/{name}"} {
		if paths[p] == nil {
			t.Errorf("OpenAPI has no %s", p)
		}
	}
}
