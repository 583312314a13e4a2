package admin

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/gorilla/mux"
)

// Route is one admin API route: the route table the router is built from and the
// OpenAPI document is checked against.
type Route struct {
	Method, Path string
	Summary      string
	Handler      http.HandlerFunc
}

// Router builds the /api router (gorilla/mux) from the route table. The API's routes
// sit on the root router under their full paths, each behind Guard, so that the
// router's own method matching tells a wrong method (405, MethodNotAllowedHandler) from an
// unknown path (404, NotFoundHandler); a subrouter reports a method mismatch as not found.
func (a *API) Router(mountUI func(root *mux.Router) http.Handler) *mux.Router {
	root := mux.NewRouter()
	var allow allowTable
	for _, rt := range a.routes() {
		route := root.Handle(rt.Path, a.Guard(rt.Handler)).Methods(rt.Method)
		allow.add(route, rt.Method)
	}
	// The web UI lives on the same router: its pages under /ui, and the same route table
	// again under /ui/api for its scripts, behind its own sign-in.
	uiNotFound := mountUI(root)
	// Unknown paths and wrong methods answer JSON, and only to an admin.
	apiNotFound := a.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Error(w, http.StatusNotFound, "no admin API route "+r.URL.Path)
	}))
	apiWrongMethod := a.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods := allow.methods(r.URL.Path)
		w.Header().Set("Allow", strings.Join(methods, ", "))
		Error(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path+" (allowed: "+strings.Join(methods, ", ")+")")
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
