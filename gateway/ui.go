package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"
	"github.com/mcpgw/mcpgw/gateway/internal/admin"
)

// The web UI (docs/ui.md): server-rendered pages under /ui, a little JavaScript under
// /ui/static, and the admin API's route table mounted again under /ui/api for those
// scripts. Everything is embedded; nothing is built to run it.

//go:embed ui/templates/*.html ui/static/*
var uiFiles embed.FS

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
	// its writes may start commands (credentialed in adminapi.go).
	credentialed bool
	expires      time.Time
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
func (g *Gateway) uiAccess(r *http.Request) string {
	cfg := g.policy().cfg
	if cfg.Auth.AdminToken != "" || cfg.Auth.Mode != "none" {
		return "token"
	}
	if _, ok := g.localOwner(r); ok {
		return "open"
	}
	return "token"
}

func setUICookie(w http.ResponseWriter, r *http.Request, s *uiSession) {
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: s.id, Path: "/ui", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, Expires: s.expires})
}

// uiSessionOf is the request's UI session (nil: none, or expired).
func (g *Gateway) uiSessionOf(r *http.Request) *uiSession {
	c, err := r.Cookie(uiCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	return g.ui.get(c.Value)
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
func (g *Gateway) uiGuard(api bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w)
		if !g.checkOrigin(w, r) {
			return
		}
		deny := func(status int, msg string) {
			if api {
				admin.Error(w, status, msg)
			} else {
				g.uiMessage(w, r, status, "Not signed in", msg)
			}
		}
		s := g.uiSessionOf(r)
		access := g.uiAccess(r)
		if s == nil || s.actor == "" {
			switch {
			case access == "open" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !api:
				s = g.ui.create("ui:loopback")
				setUICookie(w, r, s)
			case api || (r.Method != http.MethodGet && r.Method != http.MethodHead):
				deny(http.StatusUnauthorized, "sign in first (the session is missing or expired)")
				return
			default:
				http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
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

// uiRoutes adds the UI to the admin router and returns the handler for paths under /ui
// that match no route.
func (g *Gateway) uiRoutes(root *mux.Router) http.Handler {
	static, _ := fs.Sub(uiFiles, "ui/static")
	fileServer := http.StripPrefix("/ui/static/", http.FileServer(http.FS(static)))
	root.Handle("/ui", http.RedirectHandler("/ui/servers", http.StatusSeeOther)).Methods("GET", "HEAD")
	root.Handle("/ui/", http.RedirectHandler("/ui/servers", http.StatusSeeOther)).Methods("GET", "HEAD")
	root.PathPrefix("/ui/static/").Methods("GET", "HEAD").Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w)
		w.Header().Set("Cache-Control", "no-cache")
		fileServer.ServeHTTP(w, r)
	}))
	root.HandleFunc("/ui/login", g.uiLoginForm).Methods("GET", "HEAD")
	root.HandleFunc("/ui/login", g.uiLogin).Methods("POST")
	root.Handle("/ui/logout", g.uiGuard(false, http.HandlerFunc(g.uiLogout))).Methods("POST")

	api := root.PathPrefix("/ui/api").Subrouter()
	for _, rt := range g.apiRoutes() {
		api.Handle(strings.TrimPrefix(rt.Path, "/api"), g.uiGuard(true, rt.Handler)).Methods(rt.Method)
	}
	for _, p := range g.uiPages() {
		root.Handle(p.path, g.uiGuard(false, p.handler)).Methods("GET", "HEAD")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w)
		if strings.HasPrefix(r.URL.Path, "/ui/api/") {
			admin.Error(w, http.StatusNotFound, "no route "+r.Method+" "+r.URL.Path)
			return
		}
		g.uiMessage(w, r, http.StatusNotFound, "Not found", "There is no page "+r.URL.Path+".")
	})
}

func (g *Gateway) uiLoginForm(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	if !g.checkOrigin(w, r) {
		return
	}
	if tok := r.URL.Query().Get("token"); tok != "" {
		// The tokenized address `mcpgw serve` and `mcpgw ui` print (as Jupyter does): sign
		// in, and go on to an address without the token.
		g.uiSignIn(w, r, nil, tok, r.URL.Query().Get("next"))
		return
	}
	switch g.uiAccess(r) {
	case "open":
		http.Redirect(w, r, "/ui/servers", http.StatusSeeOther)
		return
	}
	s := g.uiSessionOf(r)
	if s == nil {
		s = g.ui.create("")
		setUICookie(w, r, s)
	}
	g.render(w, r, http.StatusOK, "login", "Sign in", s, map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
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
func (g *Gateway) uiLogin(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	if !g.checkOrigin(w, r) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	pre := g.uiSessionOf(r)
	if pre == nil || !csrfOK(r, pre) {
		s := g.ui.create("")
		setUICookie(w, r, s)
		g.render(w, r, http.StatusForbidden, "login", "Sign in", s, map[string]any{"Next": safeNext(r.PostFormValue("next")),
			"Error": "The sign-in form expired; enter the token again."})
		return
	}
	g.uiSignIn(w, r, pre, strings.TrimSpace(r.PostFormValue("token")), r.PostFormValue("next"))
}

// uiSignIn checks an admin credential for the UI and starts a signed-in session (pre, the
// sign-in form's session, is dropped). Wrong credentials are slowed per source as the
// admin API's are.
func (g *Gateway) uiSignIn(w http.ResponseWriter, r *http.Request, pre *uiSession, tok, next string) {
	if pre == nil {
		pre = g.ui.create("")
		setUICookie(w, r, pre)
	}
	form := map[string]any{"Next": safeNext(next)}
	if fail := g.slowed(r); fail != nil {
		w.Header().Set("Retry-After", fail.RetryAfter)
		form["Error"] = "Too many wrong credentials from here: " + fail.Message
		g.render(w, r, http.StatusTooManyRequests, "login", "Sign in", pre, form)
		return
	}
	actor := ""
	if a, ok, _ := g.adminCredential(r.Context(), tok); ok && tok != "" {
		actor = a
	}
	if actor == "" {
		g.credentialFailed(r, "ui sign-in")
		form["Error"] = "That is not an admin credential (the local token that mcpgw ui prints, auth.admin_token, an admin key from mcpgw token create-key --admin, or a token with the mcpgw:admin scope)."
		g.render(w, r, http.StatusUnauthorized, "login", "Sign in", pre, form)
		return
	}
	g.signins.succeeded(g.sourceOf(r))
	g.ui.drop(pre.id)
	s := g.ui.create("ui:" + actor)
	s.credentialed = true
	setUICookie(w, r, s)
	g.audit.Record(authEvent(r, "ui sign-in", "ok"))
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

func (g *Gateway) uiLogout(w http.ResponseWriter, r *http.Request) {
	if s := uiSessionFrom(r); s != nil {
		g.ui.drop(s.id)
	}
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: "", Path: "/ui", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	if g.uiAccess(r) == "open" {
		g.uiMessage(w, r, http.StatusOK, "Signed out", "This gateway's UI opens without sign-in on loopback; reload to come back.")
		return
	}
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// uiPage is the shared frame of every page.
type uiPage struct {
	Title, Page string
	CSRF        string
	Actor       string
	CanSignOut  bool
	Version     string
	Data        any
}

var (
	uiTemplatesOnce sync.Once
	uiTemplates     map[string]*template.Template
	uiTemplatesErr  error
)

// uiTemplate parses the layout with one page's template (once for all pages).
func uiTemplate(page string) (*template.Template, error) {
	uiTemplatesOnce.Do(func() {
		uiTemplates = map[string]*template.Template{}
		pages, err := fs.Glob(uiFiles, "ui/templates/*.html")
		if err != nil {
			uiTemplatesErr = err
			return
		}
		for _, p := range pages {
			name := strings.TrimSuffix(path.Base(p), ".html")
			if name == "layout" {
				continue
			}
			t, err := template.New("layout.html").Funcs(uiFuncs).ParseFS(uiFiles, "ui/templates/layout.html", p)
			if err != nil {
				uiTemplatesErr = err
				return
			}
			uiTemplates[name] = t
		}
	})
	if uiTemplatesErr != nil {
		return nil, uiTemplatesErr
	}
	t := uiTemplates[page]
	if t == nil {
		return nil, &fs.PathError{Op: "template", Path: page, Err: fs.ErrNotExist}
	}
	return t, nil
}

func (g *Gateway) render(w http.ResponseWriter, r *http.Request, status int, page, title string, s *uiSession, data any) {
	t, err := uiTemplate(page)
	if err != nil {
		g.log.Error("web UI template", "page", page, "err", err)
		http.Error(w, "web UI template error", http.StatusInternalServerError)
		return
	}
	p := uiPage{Title: title, Page: page, Version: g.version, Data: data}
	if s != nil {
		p.CSRF, p.Actor = s.csrf, s.actor
		p.CanSignOut = s.actor != ""
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		g.log.Error("web UI page", "page", page, "err", err)
		http.Error(w, "web UI page error", http.StatusInternalServerError)
		return
	}
	uiHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (g *Gateway) uiMessage(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	g.render(w, r, status, "message", title, uiSessionFrom(r), map[string]any{"Message": msg})
}

var uiFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		d := time.Since(t).Round(time.Second)
		switch {
		case d < time.Second:
			return "now"
		case d < time.Hour:
			return d.String() + " ago"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"join":  strings.Join,
	"deref": func(b *bool) bool { return b != nil && *b },
	"has": func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	},
	"ms": func(sec float64) string {
		if sec != sec { // NaN
			return "—"
		}
		switch {
		case sec < 0.001:
			return ftoa(sec*1e6, 0) + " µs"
		case sec < 1:
			return ftoa(sec*1e3, 1) + " ms"
		}
		return ftoa(sec, 2) + " s"
	},
	"num": func(f float64) string { return ftoa(f, 0) },
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12] + "…"
		}
		return s
	},
}
