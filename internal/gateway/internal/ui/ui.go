// Package ui is the gateway's web UI: sign-in, CSRF, headers, templates and static files,
// mounted on the admin router; the pages' data comes from handlers the gateway hands it.
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// The web UI (docs/ui.md): server-rendered pages under /ui, a little JavaScript under
// /ui/static, and the admin API's route table mounted again under /ui/api for those
// scripts. Everything is embedded; nothing is built to run it.

//go:embed templates/*.html static/*
var uiFiles embed.FS

// Port is what the UI needs of the running gateway: who may use it (admin.Guard: local
// trust, the admin credential check with its per-source back-off), and what its pages show.
type Port interface {
	admin.Guard
	// SessionRecords, SessionRecord, SessionRow and SessionView are the sessions as the
	// admin API reads them (admin.Port), for the Sessions pages.
	SessionRecords() ([]*store.Record, error)
	SessionRecord(id string) (*store.Record, error)
	SessionRow(rec *store.Record) admin.SessionRow
	SessionView(id string) (tools []admin.SessionTool, live bool)

	// ServerViews, AgentViews, ExecutorViews and AllTasks are what the admin API lists
	// (admin.API), for the Servers, Agents, Executors and Tasks pages.
	ServerViews() ([]admin.ServerView, error)
	AgentViews() ([]map[string]any, error)
	ExecutorViews() ([]map[string]any, error)
	AllTasks() ([]*store.Task, error)
	// ProjectViews are the projects as GET /api/projects lists them, for the Projects page.
	ProjectViews() ([]map[string]any, error)
	// PluginRows are the plugins as GET /api/plugins lists them, for the Plugins page.
	PluginRows() []admin.PluginRow
	// IntegrityRows are a page of the integrity records as GET /api/integrity lists them,
	// with how many are held per server, for the Integrity page; IntegrityWaiting is how
	// many definitions wait for a decision (held or warned), the count beside the page's
	// link.
	IntegrityRows(q admin.IntegrityQuery) (admin.IntegrityPage, error)
	IntegrityWaiting() int
	// Instances is how many instances of a server run now.
	Instances(server string) int64
	// Config is the running config.
	Config() *config.Config
	// Explain is what an agent (with a task and an executor) may see, tool by tool.
	Explain(agent, task, executor string) (view any, fail *auth.Failure)
	// UpstreamAuth is the registry's upstream authorization part (admin.Port's), for the
	// Upstream sign-in page.
	UpstreamAuth() admin.UpstreamAuth
	// Usage is the last window (at most an hour) of tool calls and tools/list tokens, for
	// the Usage page.
	Usage(window time.Duration) *telemetry.UsageReport
	// PeerUser names the local user at the far end of r's connection, where the OS tells
	// (a loopback peer on Linux): a UI session is honoured only from the user it began with.
	PeerUser(r *http.Request) (uid int, known bool)
}

// Route is an admin API route mounted again under /ui/api (its Path starts with /api).
type Route struct {
	Method, Path string
	Handler      http.Handler
}

// Page is one page of the UI: a GET handler under /ui.
type Page struct {
	Path    string
	Handler http.Handler
}

// UI is the web UI of one gateway: its sign-in sessions, templates and routes.
// size: being split (issue 41)
type UI struct {
	port    Port
	version string
	log     *slog.Logger
	auth    uiAuth

	templatesOnce sync.Once
	templates     map[string]*template.Template
	templatesErr  error
}

// New makes the UI of a gateway of the given version, logging template errors to log.
func New(port Port, version string, log *slog.Logger) *UI {
	return &UI{port: port, version: version, log: log}
}

const (
	uiCookie      = "mcpgw_ui"
	uiSessionTTL  = 12 * time.Hour
	uiMaxSessions = 1024
	// uiCSP: no inline script or style, scripts and styles from this origin only (the
	// only ones it serves are under /ui/static), no framing, forms post here only.
	uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)

// uiAuth holds the web UI's sign-in sessions, in memory: a restart signs everyone out.
type uiAuth struct {
	mu sync.Mutex
	m  map[string]*uiSession
}

// uiSession is one browser's sign-in. Before sign-in (the sign-in form) it only carries
// the CSRF token the form posts back.
type uiSession struct {
	id, csrf string
	actor    string // "" until signed in
	// credentialed: signed in with an admin credential (not let in as the local owner), so
	// its writes may start commands (admin.Credentialed, internal/gateway/internal/admin/body.go).
	credentialed bool
	expires      time.Time
	// uid is the local user the session began with, when known (uidKnown): browsers send
	// a host's cookies to every port of it (RFC 6265, 8.5), so another local user's web
	// server on 127.0.0.1 receives the cookie; from another user it is no session.
	uid      int
	uidKnown bool
}

func randomToken() string { return rand.Text() + rand.Text() }

func (a *uiAuth) get(id string) *uiSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.m[id]
	if s == nil || time.Now().After(s.expires) {
		delete(a.m, id)
		return nil
	}
	return s
}

func (a *uiAuth) create(actor string) *uiSession {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]*uiSession{}
	}
	now := time.Now()
	if len(a.m) >= uiMaxSessions {
		var oldest *uiSession
		for id, s := range a.m {
			if now.After(s.expires) {
				delete(a.m, id)
			} else if oldest == nil || s.expires.Before(oldest.expires) {
				oldest = s
			}
		}
		if len(a.m) >= uiMaxSessions && oldest != nil {
			delete(a.m, oldest.id)
		}
	}
	s := &uiSession{id: randomToken(), csrf: randomToken(), actor: actor, expires: now.Add(uiSessionTTL)}
	a.m[s.id] = s
	return s
}

func (a *uiAuth) drop(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, id)
}

// uiAccess is how a request may use the UI: open (the local owner, auth mode none, no
// admin token: no sign-in) or token (sign in with an admin credential, as for the admin
// API: the local token, auth.admin_token, an admin key, or a token with the mcpgw:admin
// scope).
func (u *UI) uiAccess(r *http.Request) string {
	if _, ok := u.port.LocalOwner(r); ok {
		return "open"
	}
	return "token"
}

func setUICookie(w http.ResponseWriter, r *http.Request, s *uiSession) {
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: s.id, Path: "/ui", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, Expires: s.expires})
}

// uiSessionOf is the request's UI session (nil: none, expired, or begun by another local
// user).
func (u *UI) uiSessionOf(r *http.Request) *uiSession {
	c, err := r.Cookie(uiCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	s := u.auth.get(c.Value)
	if s != nil && s.uidKnown {
		if uid, known := u.port.PeerUser(r); !known || uid != s.uid {
			return nil
		}
	}
	return s
}

// newSession starts a UI session for actor ("": not signed in), bound to r's local user
// when the OS names it.
func (u *UI) newSession(r *http.Request, actor string) *uiSession {
	s := u.auth.create(actor)
	s.uid, s.uidKnown = u.port.PeerUser(r)
	return s
}

func uiHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on
	// form posts, which the Origin allow-list refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// formArrived reads a posted form before anything looks at its fields, which would take a
// form that did not arrive for an empty one: one not received in time (http.body_timeout,
// http.body_min_rate) is answered 408, one over its bound 413.
func formArrived(w http.ResponseWriter, r *http.Request) bool {
	err := r.ParseForm()
	var mb *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.Is(err, os.ErrDeadlineExceeded):
		http.Error(w, "The form did not arrive within http.body_timeout, or arrived slower than http.body_min_rate.", http.StatusRequestTimeout)
		return false
	case errors.As(err, &mb):
		http.Error(w, "The form is larger than its limit.", http.StatusRequestEntityTooLarge)
		return false
	}
	return true
}

// csrfOK checks a state-changing request's CSRF token (the X-CSRF-Token header, or the
// csrf form field) against the session's.
func csrfOK(r *http.Request, s *uiSession) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

type uiSessionKey struct{}

func uiSessionFrom(r *http.Request) *uiSession {
	s, _ := r.Context().Value(uiSessionKey{}).(*uiSession)
	return s
}

// uiGuard admits a request to a page (api false) or to /ui/api (api true): a signed-in
// session (created on the spot when the UI is open), and on every method but GET and
// HEAD a matching CSRF token. Pages without a session go to the sign-in form.
func (u *UI) uiGuard(api bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w)
		if !u.port.CheckOrigin(w, r) {
			return
		}
		deny := func(status int, msg string) {
			if api {
				admin.Error(w, status, msg)
			} else {
				u.uiMessage(w, r, status, "Not signed in", msg)
			}
		}
		s := u.uiSessionOf(r)
		access := u.uiAccess(r)
		if s == nil || s.actor == "" {
			switch {
			case access == "open" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !api:
				s = u.newSession(r, "ui:loopback")
				setUICookie(w, r, s)
			case api || (r.Method != http.MethodGet && r.Method != http.MethodHead):
				deny(http.StatusUnauthorized, "sign in first (the session is missing or expired)")
				return
			default:
				http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !formArrived(w, r) {
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !csrfOK(r, s) {
			deny(http.StatusForbidden, "missing or wrong CSRF token; reload the page")
			return
		}
		for k, v := range mux.Vars(r) {
			r.SetPathValue(k, v)
		}
		ctx := context.WithValue(r.Context(), uiSessionKey{}, s)
		ctx = admin.WithCaller(ctx, s.actor, s.credentialed)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Mount adds the UI to the admin router root: its pages, its sign-in, its static files
// and the admin API's routes again under /ui/api behind the UI's sign-in; it returns the
// handler for paths under /ui that match no route.
func (u *UI) Mount(root *mux.Router, api []Route, pages []Page) http.Handler {
	static, _ := fs.Sub(uiFiles, "static")
	fileServer := http.StripPrefix("/ui/static/", http.FileServer(http.FS(static)))
	root.Handle("/ui", http.RedirectHandler("/ui/servers", http.StatusSeeOther)).Methods("GET", "HEAD")
	root.Handle("/ui/", http.RedirectHandler("/ui/servers", http.StatusSeeOther)).Methods("GET", "HEAD")
	root.PathPrefix("/ui/static/").Methods("GET", "HEAD").Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w)
		w.Header().Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	}))
	root.HandleFunc("/ui/login", u.uiLoginForm).Methods("GET", "HEAD")
	root.HandleFunc("/ui/login", u.uiLogin).Methods("POST")
	root.Handle("/ui/logout", u.uiGuard(false, http.HandlerFunc(u.uiLogout))).Methods("POST")

	sub := root.PathPrefix("/ui/api").Subrouter()
	for _, rt := range api {
		sub.Handle(strings.TrimPrefix(rt.Path, "/api"), u.uiGuard(true, rt.Handler)).Methods(rt.Method)
	}
	for _, p := range pages {
		root.Handle(p.Path, u.uiGuard(false, p.Handler)).Methods("GET", "HEAD")
	}
	u.mountUpstream(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w)
		if strings.HasPrefix(r.URL.Path, "/ui/api/") {
			admin.Error(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
			return
		}
		u.uiMessage(w, r, http.StatusNotFound, "Not found", "There is no page "+r.URL.Path+".")
	})
}

func (u *UI) uiLoginForm(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	if !u.port.CheckOrigin(w, r) {
		return
	}
	if tok := r.URL.Query().Get("token"); tok != "" {
		// The tokenized address `mcpgw serve` and `mcpgw ui` print (as Jupyter does) serves
		// a form holding the token, which the page posts at once, same-origin: a GET never
		// signs in nor counts as a wrong credential, so a page on another site that makes
		// the browser fetch this address (an <img>) cannot lock the owner out. Opened from
		// another site, the form waits for a click.
		s := u.uiSessionOf(r)
		if s == nil {
			s = u.newSession(r, "")
			setUICookie(w, r, s)
		}
		site := r.Header.Get("Sec-Fetch-Site")
		u.render(w, r, http.StatusOK, "login", "Sign in", s, map[string]any{"Next": safeNext(r.URL.Query().Get("next")),
			"Token": tok, "Auto": site != "cross-site" && site != "same-site"})
		return
	}
	switch u.uiAccess(r) {
	case "open":
		http.Redirect(w, r, "/ui/servers", http.StatusSeeOther)
		return
	}
	s := u.uiSessionOf(r)
	if s == nil {
		s = u.newSession(r, "")
		setUICookie(w, r, s)
	}
	u.render(w, r, http.StatusOK, "login", "Sign in", s, map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
}

// safeNext keeps a post-sign-in redirect inside the UI.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/ui/") && !strings.HasPrefix(next, "//") && !strings.Contains(next, "\\") {
		return next
	}
	return "/ui/servers"
}

// uiLogin checks the admin token the sign-in form posts (with the form's CSRF token) and
// starts a new signed-in session: the pre-sign-in session is dropped, so its id cannot
// be fixed in advance.
func (u *UI) uiLogin(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	if !u.port.CheckOrigin(w, r) {
		return
	}
	if !SameOrigin(r) {
		u.uiMessage(w, r, http.StatusForbidden, "Not signed in",
			"A sign-in is taken only from this gateway's own sign-in page, not from another site.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !formArrived(w, r) {
		return
	}
	pre := u.uiSessionOf(r)
	if pre == nil || !csrfOK(r, pre) {
		s := u.newSession(r, "")
		setUICookie(w, r, s)
		u.render(w, r, http.StatusForbidden, "login", "Sign in", s, map[string]any{"Next": safeNext(r.PostFormValue("next")),
			"Error": "The sign-in form expired; enter the token again."})
		return
	}
	u.uiSignIn(w, r, pre, strings.TrimSpace(r.PostFormValue("token")), r.PostFormValue("next"))
}

// SameOrigin reports whether the browser says r comes from a page of this gateway: a
// Sec-Fetch-Site other than same-origin, or an Origin whose host is not r's, is another
// site's (a client that sends neither, like curl, is no browser another site can drive).
func SameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	ou, err := url.Parse(o)
	return err == nil && ou.Host != "" && strings.EqualFold(ou.Host, r.Host)
}

// uiSignIn checks an admin credential for the UI and starts a signed-in session (pre, the
// sign-in form's session, is dropped). Wrong credentials are slowed per source as the
// admin API's are.
func (u *UI) uiSignIn(w http.ResponseWriter, r *http.Request, pre *uiSession, tok, next string) {
	form := map[string]any{"Next": safeNext(next)}
	if fail := u.port.Slowed(r); fail != nil {
		w.Header().Set("Retry-After", fail.RetryAfter)
		form["Error"] = "Too many wrong credentials from here: " + fail.Message
		u.render(w, r, http.StatusTooManyRequests, "login", "Sign in", pre, form)
		return
	}
	actor := ""
	if a, ok, _ := u.port.AdminCredential(r.Context(), tok); ok && tok != "" {
		actor = a
	}
	if actor == "" {
		u.port.CredentialFailed(r, "ui sign-in")
		form["Error"] = "That is not an admin credential (the local token that mcpgw ui prints, auth.admin_token, an admin key from mcpgw token create-key --admin, or a token with the mcpgw:admin scope)."
		u.render(w, r, http.StatusUnauthorized, "login", "Sign in", pre, form)
		return
	}
	u.port.CredentialSucceeded(r)
	u.auth.drop(pre.id)
	s := u.newSession(r, "ui:"+actor)
	s.credentialed = true
	setUICookie(w, r, s)
	u.port.Audit(authEvent(r, "ui sign-in", "ok"))
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

func (u *UI) uiLogout(w http.ResponseWriter, r *http.Request) {
	if s := uiSessionFrom(r); s != nil {
		u.auth.drop(s.id)
	}
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: "", Path: "/ui", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	if u.uiAccess(r) == "open" {
		u.uiMessage(w, r, http.StatusOK, "Signed out", "This gateway's UI opens without sign-in on loopback; reload to come back.")
		return
	}
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// authEvent is the audit event of a UI sign-in from r.
func authEvent(r *http.Request, action, outcome string) auth.AuditEvent {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	return auth.AuditEvent{Kind: "admin", Actor: "ui:" + host, Action: action, Object: "ui", Outcome: outcome}
}
