package ui

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
)

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

// guard admits a request to a page (api false) or to /ui/api (api true): a signed-in
// session (created on the spot when the UI is open), and on every method but GET and
// HEAD a matching CSRF token. Pages without a session go to the sign-in form.
func (g *signIn) guard(api bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uiHeaders(w)
		if !g.port.CheckOrigin(w, r) {
			return
		}
		deny := func(status int, msg string) {
			if api {
				admin.Error(w, status, msg)
			} else {
				g.view.Message(w, r, status, "Not signed in", msg)
			}
		}
		s := g.sessionOf(r)
		access := g.access(r)
		if s == nil || s.actor == "" {
			switch {
			case access == "open" && (r.Method == http.MethodGet || r.Method == http.MethodHead) && !api:
				s = g.newSession(r, "ui:loopback")
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
