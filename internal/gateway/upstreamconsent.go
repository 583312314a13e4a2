package gateway

import (
	"errors"
	"html"
	"net/http"
	"strings"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/ui"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The consent page (docs/auth.md, "Who a consent is bound to"): a consent URL the gateway
// hands out is /oauth/consent/{state}, and the code that goes with it is told only to
// whoever asked (the session whose call needed the grant, the admin API's caller). The
// page asks for the code; the browser that gives it gets a cookie that the callback must
// present, and only then goes on to the authorization server. A link someone sends you is
// not enough to give them your upstream account.

// consentCookiePrefix names the cookie that binds one pending authorization to the browser
// that gave its code: the prefix and the start of the authorization's state, so two
// authorizations under way in one browser keep a cookie each.
const consentCookiePrefix = "mcpgw_consent_"

func consentCookieName(state string) string {
	if len(state) > 16 {
		state = state[:16]
	}
	return consentCookiePrefix + state
}

// pageHeaders are the headers of the gateway's own small pages (consent, callback):
// nothing may frame or script them.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; form-action 'self' https: http:; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on a
	// form post, which the same-origin check refuses.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Content-Type-Options", "nosniff")
}

// serveConsent is the consent page: GET shows whose grant at which server it gives and
// asks for the code; POST checks the code and sends the browser on, bound.
func (p oauthPort) serveConsent(w http.ResponseWriter, r *http.Request) {
	state := strings.TrimPrefix(r.URL.Path, config.ConsentPath)
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		p.consentForm(w, r, state, http.StatusOK, "")
	case http.MethodPost:
		p.consentConfirm(w, r, state)
	default:
		w.Header().Set("Allow", "GET, POST")
		reply.Error(w, http.StatusMethodNotAllowed, wire.CodeConnection, "Method not allowed")
	}
}

func (p oauthPort) consentForm(w http.ResponseWriter, r *http.Request, state string, status int, problem string) {
	pageHeaders(w)
	who, err := p.g.reg.UpstreamAuth().PendingConsent(state)
	if err != nil {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<!doctype html><title>mcpgw</title><p>" + html.EscapeString(err.Error()) + "</p>"))
		return
	}
	whose := "the gateway's own grant (every user of it uses it)"
	if who.Subject != "" {
		whose = "the grant of mcpgw identity <code>" + html.EscapeString(who.Subject) + "</code>"
	}
	var b strings.Builder
	b.WriteString("<!doctype html><title>mcpgw: authorize " + html.EscapeString(who.Server) + "</title>")
	b.WriteString("<h1>Authorize " + html.EscapeString(who.Server) + "</h1>")
	b.WriteString("<p>This gives " + whose + " at " + html.EscapeString(who.Server) +
		": the account you approve with at its authorization server is the one mcpgw will use for it.</p>")
	b.WriteString("<p><strong>If someone sent you this address and you did not ask for it yourself, close this page:</strong> " +
		"approving would give them your account.</p>")
	if problem != "" {
		b.WriteString(`<p role="alert" id="consent-error">` + html.EscapeString(problem) + "</p>")
	}
	b.WriteString(`<form method="post"><label for="code">The code given with this address</label> ` +
		`<input id="code" name="code" autocomplete="off" required autofocus> <button type="submit">Continue</button></form>`)
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// consentConfirm checks the posted code; the right one binds this browser (a cookie the
// callback wants) and sends it to the authorization server. A post from another site is
// refused before the code is looked at: a page that knows an address and its code must not
// make a visitor's browser confirm it and approve with the visitor's account.
func (p oauthPort) consentConfirm(w http.ResponseWriter, r *http.Request, state string) {
	if !ui.SameOrigin(r) {
		pageHeaders(w)
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("<!doctype html><title>mcpgw</title><p>An authorization is confirmed only from mcpgw's own consent page, not from another site.</p>"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	authURL, binding, err := p.g.reg.UpstreamAuth().ConfirmConsent(state, r.PostFormValue("code"))
	if err != nil {
		status := http.StatusUnauthorized
		if errors.Is(err, registry.ErrConsentUnknown) {
			status = http.StatusNotFound
		}
		p.consentForm(w, r, state, status, err.Error())
		return
	}
	p.bindBrowser(w, r, state, binding)
	http.Redirect(w, r, authURL, http.StatusSeeOther)
}

// bindBrowser sets the cookie that lets the callback of state complete in this browser.
// SameSite=Lax: the callback is a top-level GET the authorization server redirects to,
// which Lax cookies go with.
func (p oauthPort) bindBrowser(w http.ResponseWriter, r *http.Request, state, binding string) {
	u := p.g.policy().cfg.UpstreamCredentials
	maxAge := int(u.FlowTimeout.Seconds())
	if maxAge <= 0 {
		maxAge = int(config.DefaultFlowTimeout.Seconds())
	}
	http.SetCookie(w, &http.Cookie{Name: consentCookieName(state), Value: binding, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil || strings.HasPrefix(u.CallbackURL, "https:"), SameSite: http.SameSiteLaxMode, MaxAge: maxAge})
}

// browserBinding is the secret r's browser holds for the authorization state ("": none).
func browserBinding(r *http.Request, state string) string {
	if c, err := r.Cookie(consentCookieName(state)); err == nil {
		return c.Value
	}
	return ""
}
