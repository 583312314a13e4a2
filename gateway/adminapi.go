package gateway

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/auth"
)

// fieldError is one problem with a request: the field it concerns (a config path such as
// servers.docs.url, or a JSON path of the body) and what is wrong.
type fieldError struct {
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	// Hint is what the user can do about it, when the config model knows.
	Hint string `json:"hint,omitempty"`
}

// errorBody is every admin API error answer: error sums it up; errors and warnings list
// the problems field by field.
type errorBody struct {
	Error    string       `json:"error"`
	Errors   []fieldError `json:"errors,omitempty"`
	Warnings []fieldError `json:"warnings,omitempty"`
}

func apiFieldErrors(w http.ResponseWriter, status int, summary string, errs, warns []fieldError) {
	apiJSON(w, status, errorBody{Error: summary, Errors: errs, Warnings: warns})
}

// maxAdminBody bounds an admin request body.
const maxAdminBody = 1 << 20

// readBody reads a request body, bounded; an empty one is an error.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
	switch {
	case err != nil:
		apiError(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return nil, false
	case len(b) > maxAdminBody:
		apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", maxAdminBody))
		return nil, false
	case len(bytes.TrimSpace(b)) == 0:
		apiFieldErrors(w, http.StatusBadRequest, "empty body: a JSON object is expected", []fieldError{{Message: "empty body: a JSON object is expected"}}, nil)
		return nil, false
	}
	return b, true
}

// decodeStrict decodes a JSON object into v (a pointer to a struct). Bad JSON, a field v
// does not have (at any depth, named by its path: "meta.colour"), and a value of the wrong
// type (named by its path) are reported as field errors. aliases maps accepted
// alternative top-level names to the field they stand for.
func decodeStrict(body []byte, v any, aliases map[string]string) []fieldError {
	var generic any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&generic); err != nil {
		return []fieldError{{Message: "bad JSON: " + jsonErrorText(body, err)}}
	}
	if dec.More() {
		return []fieldError{{Message: "bad JSON: more than one value in the body"}}
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return []fieldError{{Message: "bad JSON: the body must be a JSON object"}}
	}
	for alias, field := range aliases {
		if a, ok := obj[alias]; ok {
			if _, both := obj[field]; both {
				return []fieldError{{Field: alias, Message: fmt.Sprintf("%s and %s are the same field; send one", alias, field)}}
			}
			obj[field] = a
			delete(obj, alias)
		}
	}
	if errs := unknownFields(obj, reflect.TypeOf(v), ""); len(errs) > 0 {
		return errs
	}
	clean, _ := json.Marshal(obj)
	if err := json.Unmarshal(clean, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return []fieldError{{Field: bodyPath(obj, te.Field), Message: fmt.Sprintf("must be %s, not a JSON %s", typeWord(te.Type), te.Value)}}
		}
		return []fieldError{{Message: "bad JSON: " + err.Error()}}
	}
	return nil
}

// bodyPath turns encoding/json's Go field path (which names embedded structs:
// "serverDoc.args") into the path of keys the body has ("args").
func bodyPath(obj map[string]any, goPath string) string {
	var keys []string
	var cur any = obj
	for _, seg := range strings.Split(goPath, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			keys = append(keys, seg)
			continue
		}
		if v, ok := m[seg]; ok {
			keys = append(keys, seg)
			cur = v
		}
	}
	return strings.Join(keys, ".")
}

// jsonErrorText says what is wrong with body and where.
func jsonErrorText(body []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(body[:min(int(se.Offset), len(body))], []byte("\n"))
		return fmt.Sprintf("%v (line %d, byte %d)", se, line, se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the JSON ends too early"
	}
	return err.Error()
}

func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// unknownFields lists the keys of v (decoded JSON) that type t has no field for, by path.
func unknownFields(v any, t reflect.Type, path string) []fieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	var out []fieldError
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil // a type error; Unmarshal names it
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(obj) {
			ft, ok := fields[k]
			if !ok {
				out = append(out, fieldError{Field: join(k), Message: fmt.Sprintf("unknown field %q", join(k))})
				continue
			}
			out = append(out, unknownFields(obj[k], ft, join(k))...)
		}
	case reflect.Map:
		if obj, ok := v.(map[string]any); ok {
			for _, k := range sortedKeys(obj) {
				out = append(out, unknownFields(obj[k], t.Elem(), join(k))...)
			}
		}
	case reflect.Slice:
		if arr, ok := v.([]any); ok && t != reflect.TypeOf(json.RawMessage(nil)) {
			for i, e := range arr {
				out = append(out, unknownFields(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return out
}

// jsonFields maps the JSON names of a struct's fields (embedded structs' included) to
// their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			for k, v := range jsonFields(f.Type) {
				if _, shadowed := m[k]; !shadowed {
					m[k] = v
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// mergePatch applies an RFC 7396 JSON merge patch to target.
func mergePatch(target, patch map[string]any) map[string]any {
	if target == nil {
		target = map[string]any{}
	}
	for k, pv := range patch {
		if pv == nil {
			delete(target, k)
			continue
		}
		if pm, ok := pv.(map[string]any); ok {
			tm, _ := target[k].(map[string]any)
			target[k] = mergePatch(tm, pm)
			continue
		}
		target[k] = pv
	}
	return target
}

// etagOf quotes a content hash as an ETag.
func etagOf(hash string) string { return `"` + hash + `"` }

// preconditionFailed answers 412 when the request's If-Match names another version of the
// entity than etag (If-Match: * matches any existing entity).
func preconditionFailed(w http.ResponseWriter, r *http.Request, etag string) bool {
	im := strings.TrimSpace(r.Header.Get("If-Match"))
	if im == "" || im == "*" {
		return false
	}
	for _, tag := range strings.Split(im, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag {
			return false
		}
	}
	w.Header().Set("ETag", etag)
	apiError(w, http.StatusPreconditionFailed, "If-Match "+im+" does not match the current version "+etag+"; read it again and retry")
	return true
}

type actorKey struct{}

// credentialKey marks an admin request whose caller showed a credential (credentialed).
type credentialKey struct{}

// actorOf names who made an admin request, for the audit log.
func actorOf(r *http.Request) string {
	a, _ := r.Context().Value(actorKey{}).(string)
	return a
}

// credentialed reports whether an admin request's caller showed an admin credential (the
// admin token, the local token, an admin key or an admin JWT), directly or by the UI
// sign-in it made with one; a local owner let in without one has not.
func credentialed(r *http.Request) bool {
	c, _ := r.Context().Value(credentialKey{}).(bool)
	return c
}

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
		ctx := context.WithValue(r.Context(), actorKey{}, actor)
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, credentialKey{}, cred)))
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
			apiError(w, fail.Status, fail.Message)
			return "", false, false
		}
		actor, ok, valid := g.adminCredential(r.Context(), tok)
		if ok {
			g.signins.succeeded(g.sourceOf(r))
			return actor, true, true
		}
		if valid {
			apiError(w, http.StatusForbidden, "this credential is not an admin's: the admin API takes "+adminCredentials)
			return "", false, false
		}
		g.credentialFailed(r, "admin API")
		w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgw-admin"`)
		apiError(w, http.StatusUnauthorized, "admin credential wrong: send "+adminCredentials)
		return "", false, false
	}
	if cfg.Auth.AdminToken == "" && cfg.Auth.Mode == "none" {
		if who, ok := g.localOwner(r); ok {
			return who, false, true
		}
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgw-admin"`)
	apiError(w, http.StatusUnauthorized, "the admin API needs a credential: "+adminCredentials)
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
	g.audit.Record(auth.AuditEvent{Kind: "admin", Actor: actorOf(r), Action: r.Method + " " + r.URL.Path,
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
	ui := g.uiRoutes(root)
	// Unknown paths and wrong methods answer JSON, and only to an admin.
	apiNotFound := g.adminMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiError(w, http.StatusNotFound, "no admin API route "+r.URL.Path)
	}))
	apiWrongMethod := g.adminMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods := allow.methods(r.URL.Path)
		w.Header().Set("Allow", strings.Join(methods, ", "))
		apiError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed on "+r.URL.Path+" (allowed: "+strings.Join(methods, ", ")+")")
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
			ui.ServeHTTP(w, r)
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
