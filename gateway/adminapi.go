package gateway

import (
	"context"
	"crypto/subtle"
	"net/http"
	"regexp"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/gateway/internal/ui"
)

// adminMiddleware guards the admin API: the admin token (auth.admin_token) as a bearer
// token, or, when no admin token is set and auth is off, a loopback caller. It also
// makes gorilla/mux's path variables readable with r.PathValue.
func (g *Gateway) adminMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.checkOrigin(w, r) {
			return
		}
		actor, cred, ok := g.adminActor(w, r)
		if !ok {
			return
		}
		for k, v := range mux.Vars(r) {
			r.SetPathValue(k, v)
		}
		next.ServeHTTP(w, r.WithContext(admin.WithCaller(r.Context(), actor, cred)))
	})
}

// adminCredentials names what the admin API takes, for its refusals.
const adminCredentials = "the gateway's local token (state_dir/local-token; the CLI reads it), auth.admin_token, an admin key (mcpgw token create-key --admin) or a token with the mcpgw:admin scope"

// adminActor decides whether a request may use the admin API and names its caller: a
// bearer token that is an admin credential (adminCredential); without a token, the local
// owner (localOwner) when auth.mode is none and no admin_token is set. cred reports a
// caller that showed a credential. Otherwise it answers 401 (a token was wrong, or none
// was sent), 403 (a good credential, not an admin's) or 429 (too many wrong ones).
func (g *Gateway) adminActor(w http.ResponseWriter, r *http.Request) (actor string, cred, ok bool) {
	cfg := g.policy().cfg
	if tok, has := auth.BearerToken(r.Header.Get("Authorization")); has && tok != "" {
		if fail := g.slowed(r); fail != nil {
			w.Header().Set("Retry-After", fail.RetryAfter)
			admin.Error(w, fail.Status, fail.Message)
			return "", false, false
		}
		actor, ok, valid := g.adminCredential(r.Context(), tok)
		if ok {
			g.signins.succeeded(g.sourceOf(r))
			return actor, true, true
		}
		if valid {
			admin.Error(w, http.StatusForbidden, "this credential is not an admin's: the admin API takes "+adminCredentials)
			return "", false, false
		}
		g.credentialFailed(r, "admin API")
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgw-admin"`)
		admin.Error(w, http.StatusUnauthorized, "admin credential wrong: send "+adminCredentials)
		return "", false, false
	}
	if cfg.Auth.AdminToken == "" && cfg.Auth.Mode == "none" {
		if who, ok := g.localOwner(r); ok {
			return who, false, true
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgw-admin"`)
	admin.Error(w, http.StatusUnauthorized, "the admin API needs a credential: "+adminCredentials)
	return "", false, false
}

// adminCredential checks a bearer token as an admin credential: the config's admin_token,
// the local token, an admin key, or a JWT/OAuth token with the mcpgw:admin scope. valid
// reports a good credential that is not an admin's.
func (g *Gateway) adminCredential(ctx context.Context, tok string) (actor string, ok, valid bool) {
	pol := g.policy()
	if at := pol.cfg.Auth.AdminToken; at != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(at)) == 1 {
		return "admin_token", true, true
	}
	if g.local.isToken(tok) {
		return "local_token", true, true
	}
	return pol.authn.Admin(ctx, tok)
}

// auditAdmin writes one audit line for an admin write.
func (g *Gateway) auditAdmin(r *http.Request, object, outcome string, before, after any) {
	g.audit.Record(auth.AuditEvent{Kind: "admin", Actor: admin.Actor(r), Action: r.Method + " " + r.URL.Path,
		Object: object, Outcome: outcome, Before: hashJSON(before), After: hashJSON(after)})
}

// apiRoute is one admin API route: the route table the router is built from and the
// OpenAPI document is checked against.
type apiRoute struct {
	Method, Path string
	Summary      string
	Handler      http.HandlerFunc
}

// adminRouter builds the /api router (gorilla/mux) from the route table. The API's routes
// sit on the root router under their full paths, each behind adminMiddleware, so that the
// router's own method matching tells a wrong method (405, MethodNotAllowedHandler) from an
// unknown path (404, NotFoundHandler); a subrouter reports a method mismatch as not found.
func (g *Gateway) adminRouter() *mux.Router {
	root := mux.NewRouter()
	var allow allowTable
	for _, rt := range g.apiRoutes() {
		route := root.Handle(rt.Path, g.adminMiddleware(rt.Handler)).Methods(rt.Method)
		allow.add(route, rt.Method)
	}
	// The web UI (ui.go) lives on the same router: its pages under /ui, and the same route
	// table again under /ui/api for its scripts, behind its own sign-in.
	uiAPI := make([]ui.Route, 0, len(g.apiRoutes()))
	for _, rt := range g.apiRoutes() {
		uiAPI = append(uiAPI, ui.Route{Method: rt.Method, Path: rt.Path, Handler: rt.Handler})
	}
	uiNotFound := g.ui.Mount(root, uiAPI, g.uiPages())
	// Unknown paths and wrong methods answer JSON, and only to an admin.
	apiNotFound := g.adminMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		admin.Error(w, http.StatusNotFound, "no admin API route "+r.URL.Path)
	}))
	apiWrongMethod := g.adminMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods := allow.methods(r.URL.Path)
		w.Header().Set("Allow", strings.Join(methods, ", "))
		admin.Error(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path+" (allowed: "+strings.Join(methods, ", ")+")")
	}))
	root.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isUIPath(r.URL.Path) {
			w.WriteHeader(http.StatusMethodNotAllowed) // as gorilla/mux answers by default
			return
		}
		apiWrongMethod.ServeHTTP(w, r)
	})
	root.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isUIPath(r.URL.Path) {
			uiNotFound.ServeHTTP(w, r)
			return
		}
		apiNotFound.ServeHTTP(w, r)
	})
	return root
}

func isUIPath(p string) bool { return p == "/ui" || strings.HasPrefix(p, "/ui/") }

// allowTable is what the admin API's Allow header is made of: each route's path pattern,
// as gorilla/mux matches it, and its method.
type allowTable []allowEntry

type allowEntry struct {
	path   *regexp.Regexp
	method string
}

func (t *allowTable) add(route *mux.Route, method string) {
	re, err := route.GetPathRegexp()
	if err != nil {
		return
	}
	*t = append(*t, allowEntry{regexp.MustCompile(re), method})
}

// allowOrder is the order methods are listed in an Allow header.
var allowOrder = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// methods lists the methods of every route whose path matches p, in allowOrder.
func (t allowTable) methods(p string) []string {
	var out []string
	for _, m := range allowOrder {
		for _, e := range t {
			if e.method == m && e.path.MatchString(p) {
				out = append(out, m)
				break
			}
		}
	}
	return out
}
