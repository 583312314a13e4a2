package ui

import (
	"crypto/rand"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// signIn is who may use the UI: its sign-in sessions (in memory), the guard every page
// and /ui/api route sits behind (guard.go), and the sign-in and sign-out forms.
type signIn struct {
	port     Port
	view     *renderer
	sessions uiAuth
}

const (
	uiCookie      = "mcpgw_ui"
	uiSessionTTL  = 12 * time.Hour
	uiMaxSessions = 1024
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

// access is how a request may use the UI: open (the local owner, auth mode none, no
// admin token: no sign-in) or token (sign in with an admin credential, as for the admin
// API: the local token, auth.admin_token, an admin key, or a token with the mcpgw:admin
// scope).
func (g *signIn) access(r *http.Request) string {
	if _, ok := g.port.LocalOwner(r); ok {
		return "open"
	}
	return "token"
}

func setUICookie(w http.ResponseWriter, r *http.Request, s *uiSession) {
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: s.id, Path: "/ui", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, Expires: s.expires})
}

// sessionOf is the request's UI session (nil: none, expired, or begun by another local
// user).
func (g *signIn) sessionOf(r *http.Request) *uiSession {
	c, err := r.Cookie(uiCookie)
	if err != nil || c.Value == "" {
		return nil
	}
	s := g.sessions.get(c.Value)
	if s != nil && s.uidKnown {
		if uid, known := g.port.PeerUser(r); !known || uid != s.uid {
			return nil
		}
	}
	return s
}

// newSession starts a UI session for actor ("": not signed in), bound to r's local user
// when the OS names it.
func (g *signIn) newSession(r *http.Request, actor string) *uiSession {
	s := g.sessions.create(actor)
	s.uid, s.uidKnown = g.port.PeerUser(r)
	return s
}

func (g *signIn) loginForm(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	if !g.port.CheckOrigin(w, r) {
		return
	}
	if tok := r.URL.Query().Get("token"); tok != "" {
		// The tokenized address `mcpgw serve` and `mcpgw ui` print (as Jupyter does) serves
		// a form holding the token, which the page posts at once, same-origin: a GET never
		// signs in nor counts as a wrong credential, so a page on another site that makes
		// the browser fetch this address (an <img>) cannot lock the owner out. Opened from
		// another site, the form waits for a click.
		s := g.sessionOf(r)
		if s == nil {
			s = g.newSession(r, "")
			setUICookie(w, r, s)
		}
		site := r.Header.Get("Sec-Fetch-Site")
		g.view.render(w, r, http.StatusOK, "login", "Sign in", s, map[string]any{"Next": safeNext(r.URL.Query().Get("next")),
			"Token": tok, "Auto": site != "cross-site" && site != "same-site"})
		return
	}
	switch g.access(r) {
	case "open":
		http.Redirect(w, r, "/ui/servers", http.StatusSeeOther)
		return
	}
	s := g.sessionOf(r)
	if s == nil {
		s = g.newSession(r, "")
		setUICookie(w, r, s)
	}
	g.view.render(w, r, http.StatusOK, "login", "Sign in", s, map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
}

// safeNext keeps a post-sign-in redirect inside the UI.
func safeNext(next string) string {
	if strings.HasPrefix(next, "/ui/") && !strings.HasPrefix(next, "//") && !strings.Contains(next, "\\") {
		return next
	}
	return "/ui/servers"
}

// login checks the admin token the sign-in form posts (with the form's CSRF token) and
// starts a new signed-in session: the pre-sign-in session is dropped, so its id cannot
// be fixed in advance.
func (g *signIn) login(w http.ResponseWriter, r *http.Request) {
	uiHeaders(w)
	if !g.port.CheckOrigin(w, r) {
		return
	}
	if !SameOrigin(r) {
		g.view.Message(w, r, http.StatusForbidden, "Not signed in",
			"A sign-in is taken only from this gateway's own sign-in page, not from another site.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if !formArrived(w, r) {
		return
	}
	pre := g.sessionOf(r)
	if pre == nil || !csrfOK(r, pre) {
		s := g.newSession(r, "")
		setUICookie(w, r, s)
		g.view.render(w, r, http.StatusForbidden, "login", "Sign in", s, map[string]any{"Next": safeNext(r.PostFormValue("next")),
			"Error": "The sign-in form expired; enter the token again."})
		return
	}
	g.signIn(w, r, pre, strings.TrimSpace(r.PostFormValue("token")), r.PostFormValue("next"))
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

// signIn checks an admin credential for the UI and starts a signed-in session (pre, the
// sign-in form's session, is dropped). Wrong credentials are slowed per source as the
// admin API's are.
func (g *signIn) signIn(w http.ResponseWriter, r *http.Request, pre *uiSession, tok, next string) {
	form := map[string]any{"Next": safeNext(next)}
	if fail := g.port.Slowed(r); fail != nil {
		w.Header().Set("Retry-After", fail.RetryAfter)
		form["Error"] = "Too many wrong credentials from here: " + fail.Message
		g.view.render(w, r, http.StatusTooManyRequests, "login", "Sign in", pre, form)
		return
	}
	actor := ""
	if a, ok, _ := g.port.AdminCredential(r.Context(), tok); ok && tok != "" {
		actor = a
	}
	if actor == "" {
		g.port.CredentialFailed(r, "ui sign-in")
		form["Error"] = "That is not an admin credential (the local token that mcpgw ui prints, auth.admin_token, an admin key from mcpgw token create-key --admin, or a token with the mcpgw:admin scope)."
		g.view.render(w, r, http.StatusUnauthorized, "login", "Sign in", pre, form)
		return
	}
	g.port.CredentialSucceeded(r)
	g.sessions.drop(pre.id)
	s := g.newSession(r, "ui:"+actor)
	s.credentialed = true
	setUICookie(w, r, s)
	g.port.Audit(authEvent(r, "ui sign-in", "ok"))
	http.Redirect(w, r, safeNext(next), http.StatusSeeOther)
}

func (g *signIn) logout(w http.ResponseWriter, r *http.Request) {
	if s := uiSessionFrom(r); s != nil {
		g.sessions.drop(s.id)
	}
	http.SetCookie(w, &http.Cookie{Name: uiCookie, Value: "", Path: "/ui", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	if g.access(r) == "open" {
		g.view.Message(w, r, http.StatusOK, "Signed out", "This gateway's UI opens without sign-in on loopback; reload to come back.")
		return
	}
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// authEvent is the audit event of a UI sign-in from r.
func authEvent(r *http.Request, action, outcome string) auth.AuditEvent {
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	return auth.AuditEvent{Kind: "admin", Actor: "ui:" + host, Action: action, Object: "ui", Outcome: outcome}
}
