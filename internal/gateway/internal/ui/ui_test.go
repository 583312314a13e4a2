package ui

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/store"
)

// fakePort stands in for the gateway: open says whether the UI opens without sign-in,
// good is the one admin credential, and the calls are counted.
type fakePort struct {
	// Port stands for what these tests do not use (the pages of the admin API's lists):
	// calling it panics.
	Port
	open            bool
	good            string
	failed, succeed int
	audits          []auth.AuditEvent
	storeDown       bool
}

func (p *fakePort) CheckOrigin(http.ResponseWriter, *http.Request) bool { return true }
func (p *fakePort) LocalOwner(*http.Request) (string, bool)             { return "owner", p.open }
func (p *fakePort) PeerUser(*http.Request) (int, bool)                  { return -1, false }
func (p *fakePort) Slowed(*http.Request) *auth.Failure                  { return nil }
func (p *fakePort) AdminCredential(_ context.Context, tok string) (string, bool, bool) {
	return "admin_token", tok == p.good, tok == p.good
}
func (p *fakePort) IntegrityWaiting() int                  { return 0 }
func (p *fakePort) CredentialFailed(*http.Request, string) { p.failed++ }
func (p *fakePort) CredentialSucceeded(*http.Request)      { p.succeed++ }
func (p *fakePort) Audit(ev auth.AuditEvent)               { p.audits = append(p.audits, ev) }
func (p *fakePort) SessionRecords() ([]*store.Record, error) {
	if p.storeDown {
		return nil, errors.New("store down")
	}
	return []*store.Record{{ID: "old-one", Created: time.Unix(10, 0)}, {ID: "new-one", Created: time.Unix(20, 0)}}, nil
}
func (p *fakePort) SessionRecord(id string) (*store.Record, error) {
	if id != "new-one" {
		return nil, store.ErrNotFound
	}
	return &store.Record{ID: id, Agent: "ops"}, nil
}
func (p *fakePort) SessionRow(rec *store.Record) admin.SessionRow {
	return admin.SessionRow{ID: rec.ID, Agent: rec.Agent, Created: rec.Created, Servers: []string{}}
}
func (p *fakePort) SessionView(id string) ([]admin.SessionTool, bool) {
	return []admin.SessionTool{{Name: "docs__search", Server: "docs", Tool: "search"}}, id == "new-one"
}

func newTestUI(t *testing.T, port *fakePort) http.Handler {
	t.Helper()
	u := New(port, "v-test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	root := mux.NewRouter()
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.view.Render(w, r, http.StatusOK, "message", "Hello", map[string]any{"Message": "page body"})
	})
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "api "+r.Method) })
	root.NotFoundHandler = u.Mount(root, []Route{{Method: "POST", Path: "/api/things", Handler: api}},
		[]Page{{Path: "/ui/hello", Handler: page}, {Path: "/ui/sessions", Handler: http.HandlerFunc(u.ServeSessions)},
			{Path: "/ui/sessions/{id}", Handler: http.HandlerFunc(u.ServeSession)}})
	return root
}

func do(h http.Handler, method, target string, body url.Values, cookies []*http.Cookie, hdr map[string]string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(body.Encode())
	}
	r := httptest.NewRequest(method, target, rd)
	if body != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestSignInGuardsPagesAndAPI(t *testing.T) {
	port := &fakePort{good: "secret"}
	h := newTestUI(t, port)
	if w := do(h, "GET", "/ui/hello", nil, nil, nil); w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "/ui/login?next=") {
		t.Fatalf("a page without sign-in: %d to %q, want 303 to the sign-in form", w.Code, w.Header().Get("Location"))
	}
	if w := do(h, "POST", "/ui/api/things", nil, nil, nil); w.Code != http.StatusUnauthorized || w.Header().Get("Content-Security-Policy") == "" {
		t.Fatalf("the API without sign-in: %d (CSP %q), want 401 with the UI's headers", w.Code, w.Header().Get("Content-Security-Policy"))
	}
	form := do(h, "GET", "/ui/login", nil, nil, nil)
	if form.Code != http.StatusOK {
		t.Fatalf("sign-in form: %d", form.Code)
	}
	pre := form.Result().Cookies()
	csrf := between(form.Body.String(), `name="csrf" value="`, `"`)
	if csrf == "" {
		t.Fatalf("no CSRF token in the sign-in form: %s", form.Body.String())
	}
	if w := do(h, "POST", "/ui/login", url.Values{"csrf": {csrf}, "token": {"wrong"}}, pre, nil); w.Code != http.StatusUnauthorized || port.failed != 1 {
		t.Fatalf("a wrong token: %d, %d failures counted; want 401 and 1", w.Code, port.failed)
	}
	w := do(h, "POST", "/ui/login", url.Values{"csrf": {csrf}, "token": {"secret"}, "next": {"/ui/hello"}}, pre, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/ui/hello" || port.succeed != 1 || len(port.audits) != 1 {
		t.Fatalf("the good token: %d to %q, %d successes, %d audits", w.Code, w.Header().Get("Location"), port.succeed, len(port.audits))
	}
	signed := w.Result().Cookies()
	page := do(h, "GET", "/ui/hello", nil, signed, nil)
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), "page body") || !strings.Contains(page.Body.String(), "v-test") {
		t.Fatalf("the page signed in: %d %s", page.Code, page.Body.String())
	}
	token := between(page.Body.String(), `name="csrf-token" content="`, `"`)
	if token == "" {
		t.Fatalf("no CSRF token in the page: %s", page.Body.String())
	}
	if w := do(h, "POST", "/ui/api/things", nil, signed, nil); w.Code != http.StatusForbidden {
		t.Fatalf("a write without the CSRF token: %d, want 403", w.Code)
	}
	if w := do(h, "POST", "/ui/api/things", nil, signed, map[string]string{"X-CSRF-Token": token}); w.Code != http.StatusOK || w.Body.String() != "api POST" {
		t.Fatalf("a write with the CSRF token: %d %q", w.Code, w.Body.String())
	}
}

func TestOpenUIAndStatic(t *testing.T) {
	h := newTestUI(t, &fakePort{open: true})
	if w := do(h, "GET", "/ui/hello", nil, nil, nil); w.Code != http.StatusOK || len(w.Result().Cookies()) != 1 {
		t.Fatalf("an open UI's page: %d with %d cookies, want 200 and a session", w.Code, len(w.Result().Cookies()))
	}
	if w := do(h, "GET", "/ui/static/ui.js", nil, nil, nil); w.Code != http.StatusOK || w.Header().Get("Cache-Control") != "no-cache" || w.Body.Len() == 0 {
		t.Fatalf("the script: %d, Cache-Control %q, %d bytes", w.Code, w.Header().Get("Cache-Control"), w.Body.Len())
	}
	if w := do(h, "GET", "/ui/nowhere", nil, nil, nil); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "There is no page /ui/nowhere") {
		t.Fatalf("an unknown page: %d %s", w.Code, w.Body.String())
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{"/ui/tasks": "/ui/tasks", "//evil/ui/": "/ui/servers", "https://x/ui/": "/ui/servers", `/ui/\evil`: "/ui/servers", "": "/ui/servers"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, to)
	return v
}

func TestSessionPages(t *testing.T) {
	h := newTestUI(t, &fakePort{open: true})
	w := do(h, "GET", "/ui/sessions", nil, nil, nil)
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, "new-one") || strings.Index(body, "new-one") > strings.Index(body, "old-one") {
		t.Fatalf("the Sessions page, newest first: %d %s", w.Code, body)
	}
	if w := do(h, "GET", "/ui/sessions/new-one", nil, nil, nil); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "docs__search") {
		t.Fatalf("a live session's page: %d %s", w.Code, w.Body.String())
	}
	if w := do(h, "GET", "/ui/sessions/gone", nil, nil, nil); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "is not live") {
		t.Fatalf("an unknown session's page: %d %s", w.Code, w.Body.String())
	}
}

func TestStoreTrouble(t *testing.T) {
	h := newTestUI(t, &fakePort{open: true, storeDown: true})
	if w := do(h, "GET", "/ui/sessions", nil, nil, nil); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "cannot be read: store down") {
		t.Fatalf("the Sessions page without a store: %d %s", w.Code, w.Body.String())
	}
}
