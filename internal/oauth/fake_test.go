package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// fakeAS is an authorization server for the tests: metadata at a configurable path,
// /authorize that approves at once, /token and /register that record what they got.
type fakeAS struct {
	srv  *httptest.Server
	mu   sync.Mutex
	meta map[string]any // served at metaPath; the issuer and endpoints are filled in
	// metaPath is where the metadata is; "" means /.well-known/oauth-authorization-server.
	metaPath string
	prefix   string // path of the issuer, e.g. "/tenant1"
	// tokenAnswer answers /token; nil issues "at-1" for an hour.
	tokenAnswer func(form url.Values, auth string) (int, any)
	tokenForms  []url.Values
	tokenAuths  []string
	registered  []map[string]any
	authorized  []url.Values
	// iss is the callback's iss parameter: "" the issuer, "-" none, else that value.
	iss      string
	metaHits []string
}

func newFakeAS(t *testing.T, prefix string) *fakeAS {
	a := &fakeAS{prefix: prefix, meta: map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", a.serveMeta)
	mux.HandleFunc("POST "+prefix+"/token", a.serveToken)
	mux.HandleFunc("POST "+prefix+"/register", a.serveRegister)
	mux.HandleFunc("GET "+prefix+"/authorize", a.serveAuthorize)
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeAS) issuer() string { return a.srv.URL + a.prefix }

func (a *fakeAS) serveMeta(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.metaHits = append(a.metaHits, r.URL.Path)
	path := a.metaPath
	if path == "" {
		path = "/.well-known/oauth-authorization-server" + a.prefix
	}
	if r.URL.Path != path {
		http.NotFound(w, r)
		return
	}
	doc := map[string]any{
		"issuer":                           a.issuer(),
		"authorization_endpoint":           a.issuer() + "/authorize",
		"token_endpoint":                   a.issuer() + "/token",
		"registration_endpoint":            a.issuer() + "/register",
		"response_types_supported":         []string{"code"},
		"code_challenge_methods_supported": []string{"S256"},
	}
	for k, v := range a.meta {
		if v == nil {
			delete(doc, k)
		} else {
			doc[k] = v
		}
	}
	writeJSON(w, 200, doc)
}

func (a *fakeAS) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	a.mu.Lock()
	a.tokenForms = append(a.tokenForms, r.PostForm)
	a.tokenAuths = append(a.tokenAuths, r.Header.Get("Authorization"))
	answer := a.tokenAnswer
	a.mu.Unlock()
	if answer == nil {
		writeJSON(w, 200, map[string]any{"access_token": "at-1", "token_type": "Bearer", "expires_in": 3600})
		return
	}
	code, body := answer(r.PostForm, r.Header.Get("Authorization"))
	writeJSON(w, code, body)
}

func (a *fakeAS) serveRegister(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	a.mu.Lock()
	a.registered = append(a.registered, body)
	a.mu.Unlock()
	writeJSON(w, 201, map[string]any{"client_id": "dyn-client", "client_secret": "dyn-secret",
		"client_secret_expires_at": 0})
}

// serveAuthorize approves at once, as a user who always consents would.
func (a *fakeAS) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a.mu.Lock()
	a.authorized = append(a.authorized, q)
	iss := a.iss
	a.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", 400)
		return
	}
	bq := back.Query()
	bq.Set("code", "code-1")
	bq.Set("state", q.Get("state"))
	switch iss {
	case "":
		bq.Set("iss", a.issuer())
	case "-":
	default:
		bq.Set("iss", iss)
	}
	back.RawQuery = bq.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (a *fakeAS) lastToken() (url.Values, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.tokenForms) == 0 {
		return nil, ""
	}
	return a.tokenForms[len(a.tokenForms)-1], a.tokenAuths[len(a.tokenAuths)-1]
}

func (a *fakeAS) set(k string, v any) {
	a.mu.Lock()
	a.meta[k] = v
	a.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// fakeRS is an MCP server's metadata side: protected resource metadata at one path.
type fakeRS struct {
	srv     *httptest.Server
	mu      sync.Mutex
	prmPath string
	prm     map[string]any // nil "resource" or "authorization_servers" are filled in
	hits    []string
}

func newFakeRS(t *testing.T, prmPath string, as string) *fakeRS {
	rs := &fakeRS{prmPath: prmPath}
	rs.srv = httptest.NewServer(http.HandlerFunc(rs.serve))
	t.Cleanup(rs.srv.Close)
	rs.prm = map[string]any{"resource": rs.srv.URL + "/mcp", "authorization_servers": []string{as}}
	return rs
}

func (rs *fakeRS) serve(w http.ResponseWriter, r *http.Request) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.hits = append(rs.hits, r.URL.Path)
	if r.URL.Path != rs.prmPath {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, 200, rs.prm)
}

func (rs *fakeRS) paths() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.hits...)
}

// approve sends the user agent to authURL and returns the query it was sent back with.
func approve(t *testing.T, authURL string) url.Values {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	resp, err := hc.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query()
}

// testClient bounds every exchange of a test in time.
func testClient() *Client {
	return &Client{HTTP: &http.Client{Timeout: 5 * time.Second}}
}
