package upauth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/sealbox"
	"github.com/mcpgw/mcpgw/internal/store"
)

// fakeAS is an authorization server and the MCP server it protects, on one loopback
// listener: metadata, dynamic registration, an authorization endpoint that approves at
// once, a token endpoint with PKCE checks and rotating refresh tokens, and /mcp that
// takes only the tokens it issued.
type fakeAS struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	seq     int
	codes   map[string]string // code → code_challenge
	refresh map[string]bool   // refresh tokens still valid
	access  map[string]bool
	life    time.Duration // access token lifetime
	// challengeScope is the scope /mcp's challenge names ("": none).
	challengeScope string
	// counters
	registrations, tokenCalls, refreshes, ccCalls, jwtBearer atomic.Int64
	revokeAll                                                atomic.Bool
}

func newFakeAS(t *testing.T) *fakeAS {
	f := &fakeAS{t: t, codes: map[string]string{}, refresh: map[string]bool{}, access: map[string]bool{}, life: time.Hour}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", f.mcp)
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": f.srv.URL + "/mcp", "authorization_servers": []string{f.srv.URL + "/as"}, "scopes_supported": []string{"mcp"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, r *http.Request) {
		iss := f.srv.URL + "/as"
		writeJSON(w, 200, map[string]any{"issuer": iss, "authorization_endpoint": iss + "/authorize", "token_endpoint": iss + "/token",
			"registration_endpoint": iss + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":                          []string{"authorization_code", "refresh_token", "client_credentials"},
			"code_challenge_methods_supported":               []string{"S256"},
			"token_endpoint_auth_methods_supported":          []string{"none", "client_secret_basic"},
			"authorization_response_iss_parameter_supported": true})
	})
	mux.HandleFunc("/as/register", func(w http.ResponseWriter, r *http.Request) {
		n := f.registrations.Add(1)
		writeJSON(w, 201, map[string]any{"client_id": fmt.Sprintf("dyn-%d", n), "token_endpoint_auth_method": "none", "redirect_uris": []string{"http://127.0.0.1:1/oauth/callback"}})
	})
	mux.HandleFunc("/as/authorize", f.authorize)
	mux.HandleFunc("/as/token", f.token)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeAS) mcp(w http.ResponseWriter, r *http.Request) {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	ok := f.access[tok]
	f.mu.Unlock()
	if !ok {
		ch := `Bearer resource_metadata="` + f.srv.URL + `/.well-known/oauth-protected-resource/mcp"`
		if f.challengeScope != "" {
			ch += `, scope="` + f.challengeScope + `"`
		}
		w.Header().Set("WWW-Authenticate", ch)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{}})
}

func (f *fakeAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != f.srv.URL+"/mcp" {
		http.Error(w, "bad authorization request", 400)
		return
	}
	f.mu.Lock()
	f.seq++
	code := fmt.Sprintf("code-%d", f.seq)
	f.codes[code] = q.Get("code_challenge")
	f.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	v.Set("iss", f.srv.URL+"/as")
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (f *fakeAS) token(w http.ResponseWriter, r *http.Request) {
	f.tokenCalls.Add(1)
	_ = r.ParseForm()
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		ch, ok := f.codes[r.PostForm.Get("code")]
		delete(f.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != ch {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		f.refreshes.Add(1)
		rt := r.PostForm.Get("refresh_token")
		if !f.refresh[rt] || f.revokeAll.Load() {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(f.refresh, rt) // rotation: a refresh token is used once
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		f.jwtBearer.Add(1)
		id, secret, ok := r.BasicAuth()
		if !ok || id != "xaa" || secret != "xaa-secret" || !strings.HasPrefix(r.PostForm.Get("assertion"), "jag-for-") ||
			r.PostForm.Get("resource") != f.srv.URL+"/mcp" {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
	case "client_credentials":
		f.ccCalls.Add(1)
		id, secret, ok := r.BasicAuth()
		if !ok || id != "machine" || secret != "s3cret" {
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		}
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	f.seq++
	at, rt := fmt.Sprintf("at-%d", f.seq), fmt.Sprintf("rt-%d", f.seq)
	f.access[at], f.refresh[rt] = true, true
	writeJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(f.life.Seconds()), "refresh_token": rt, "scope": "mcp"})
}

// confirm gives the code of consent page u as the asker's browser would, and returns the
// authorization server's URL and the secret the browser then holds.
func confirm(t *testing.T, m *Manager, u, code string) (authURL, binding string) {
	t.Helper()
	authURL, binding, err := m.Confirm(u[strings.LastIndex(u, "/")+1:], code)
	if err != nil {
		t.Fatalf("confirm %s: %v", u, err)
	}
	return authURL, binding
}

// approve runs nc's consent in the asker's browser to the callback: its query, and the
// browser's secret.
func approve(t *testing.T, m *Manager, nc *NeedConsent) (url.Values, string) {
	t.Helper()
	authURL, binding := confirm(t, m, nc.URL, nc.Code)
	return consent(t, authURL), binding
}

// consent opens a consent URL as a browser would, stopping at the callback, and returns
// the callback's query.
func consent(t *testing.T, u string) url.Values {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusFound || err != nil {
		t.Fatalf("authorization answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return loc.Query()
}

type env struct {
	as    *fakeAS
	store *store.Memory
	ring  *sealbox.Ring
	now   atomic.Pointer[time.Time]
}

func newEnv(t *testing.T) *env {
	ring, err := sealbox.ParseKeys(sealbox.NewKeyText())
	if err != nil {
		t.Fatal(err)
	}
	e := &env{as: newFakeAS(t), store: store.NewMemory(), ring: ring}
	now := time.Now()
	e.now.Store(&now)
	return e
}

func (e *env) manager() *Manager {
	return New(Options{Store: e.store, Ring: e.ring, CallbackURL: "http://127.0.0.1:1/oauth/callback",
		Now: func() time.Time { return *e.now.Load() }})
}

func (e *env) advance(d time.Duration) {
	n := e.now.Load().Add(d)
	e.now.Store(&n)
}

func (e *env) server(auth config.UpstreamAuth) Server {
	if auth.Type == "" {
		auth = config.UpstreamAuth{Type: config.UpstreamAuthOAuth, Per: config.AuthPerUser, Grant: config.GrantAuthorizationCode}
	}
	return Server{Name: "crm", URL: e.as.srv.URL + "/mcp", Auth: auth}
}

// ask is what a call of subject meets with no usable grant: no token to send, the
// upstream's refusal, and the consent URL that refusal leads to.
func ask(t *testing.T, ctx context.Context, m *Manager, srv Server, subject string) *NeedConsent {
	t.Helper()
	h, err := m.Header(ctx, srv, subject)
	if err != nil || h != "" {
		t.Fatalf("Header without a grant: %q %v, want none", h, err)
	}
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	err = m.Challenged(ctx, srv, subject, "", resp.StatusCode, resp.Header)
	var nc *NeedConsent
	if !errors.As(err, &nc) || nc.Server != "crm" {
		t.Fatalf("the upstream's refusal: %v, want *NeedConsent", err)
	}
	return nc
}

// connect runs subject's consent at srv to the end and returns its header.
func connect(t *testing.T, ctx context.Context, m *Manager, srv Server, subject string) string {
	t.Helper()
	nc := ask(t, ctx, m, srv, subject)
	q, binding := approve(t, m, nc)
	done, err := m.Complete(ctx, q, binding)
	if err != nil || done.Server != "crm" || done.Subject != subject {
		t.Fatalf("Complete: %+v %v", done, err)
	}
	h, err := m.Header(ctx, srv, subject)
	if err != nil || !strings.HasPrefix(h, "Bearer at-") {
		t.Fatalf("Header after consent: %q %v", h, err)
	}
	return h
}

// TestConsentPerUser: a grant is the identity's that obtained it; another identity is
// asked for its own consent, and mcpgw registers once per issuer.
func TestConsentPerUser(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	m, srv := e.manager(), e.server(config.UpstreamAuth{})
	ha := connect(t, ctx, m, srv, "alice")
	hb := connect(t, ctx, m, srv, "bob")
	if ha == hb {
		t.Errorf("alice and bob share the token %s", ha)
	}
	if n := e.as.registrations.Load(); n != 1 {
		t.Errorf("%d registrations, want 1 (one client per issuer)", n)
	}
	gs, err := m.Grants("alice")
	if err != nil || len(gs) != 1 || gs[0].Subject != "alice" || !gs[0].Refreshable || gs[0].Issuer != e.as.srv.URL+"/as" {
		t.Fatalf("alice's grants: %+v %v", gs, err)
	}
	if b, _ := json.Marshal(gs); bytes.Contains(b, []byte("at-")) || bytes.Contains(b, []byte("rt-")) {
		t.Errorf("grant listing shows a token: %s", b)
	}
	if err := m.Revoke("crm", "alice"); err != nil {
		t.Fatal(err)
	}
	if h, err := m.Header(ctx, srv, "alice"); h != "" || err != nil {
		t.Errorf("after revoke: %q %v, want no token", h, err)
	}
	if h, err := m.Header(ctx, srv, "bob"); err != nil || h != hb {
		t.Errorf("bob after alice's revoke: %q %v", h, err)
	}
}

// TestCallbackOnce: a callback's state is used once, and one that mcpgw did not start,
// or whose iss is not the server's, gets no token.
func TestCallbackOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	m, srv := e.manager(), e.server(config.UpstreamAuth{})
	q, binding := approve(t, m, ask(t, ctx, m, srv, "alice"))
	bad := url.Values{"state": {q.Get("state") + "x"}, "code": q["code"], "iss": q["iss"]}
	if _, err := m.Complete(ctx, bad, binding); err == nil {
		t.Error("a state mcpgw never issued completed")
	}
	wrongIss := url.Values{"state": q["state"], "code": q["code"], "iss": {"https://evil.example"}}
	if _, err := m.Complete(ctx, wrongIss, binding); err == nil {
		t.Error("a callback from another issuer completed")
	}
	// The wrong-iss attempt spent the state: the flow must start again.
	if _, err := m.Complete(ctx, q, binding); err == nil {
		t.Error("a state completed twice")
	}
	if n := e.as.tokenCalls.Load(); n != 0 {
		t.Errorf("%d token requests for refused callbacks", n)
	}
}

// TestRefreshOnce: many calls on two managers (two replicas) sharing one store, with the
// token about to expire, make one refresh; the rotated refresh token is stored, so the
// next refresh succeeds with it.
func TestRefreshOnce(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	m1, m2, srv := e.manager(), e.manager(), e.server(config.UpstreamAuth{})
	first := connect(t, ctx, m1, srv, "alice")
	e.advance(time.Hour - time.Minute) // within the refresh margin
	var wg sync.WaitGroup
	headers := make([]string, 16)
	errs := make([]error, 16)
	for i := range headers {
		m := m1
		if i%2 == 1 {
			m = m2
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			headers[i], errs[i] = m.Header(ctx, srv, "alice")
		}()
	}
	wg.Wait()
	for i := range headers {
		if errs[i] != nil || headers[i] != headers[0] || headers[i] == first {
			t.Fatalf("call %d: %q %v (first %q, others %q)", i, headers[i], errs[i], first, headers[0])
		}
	}
	if n := e.as.refreshes.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	e.advance(time.Hour)
	if h, err := m2.Header(ctx, srv, "alice"); err != nil || h == headers[0] {
		t.Errorf("second refresh with the rotated token: %q %v", h, err)
	}
	if n := e.as.refreshes.Load(); n != 2 {
		t.Errorf("%d refreshes, want 2", n)
	}
}

// TestRevokedGrant: a refresh the authorization server refuses as invalid_grant drops the
// grant and asks for consent again.
func TestRevokedGrant(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	m, srv := e.manager(), e.server(config.UpstreamAuth{})
	connect(t, ctx, m, srv, "alice")
	e.as.revokeAll.Store(true)
	e.advance(2 * time.Hour)
	if h, err := m.Header(ctx, srv, "alice"); h != "" || err != nil {
		t.Fatalf("after a revoked refresh: %q %v, want no token", h, err)
	}
	if gs, _ := m.Grants("alice"); len(gs) != 0 {
		t.Errorf("the dead grant is kept: %+v", gs)
	}
}

// TestChallenged: a 401 to the current token refreshes it, and a second one soon after
// drops the grant; a 401 to a token already replaced changes nothing; a 403 insufficient_scope steps up with the union of scopes, a bounded
// number of times.
func TestChallenged(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	m, srv := e.manager(), e.server(config.UpstreamAuth{})
	h := connect(t, ctx, m, srv, "alice")
	if err := m.Challenged(ctx, srv, "alice", "Bearer old", 401, http.Header{}); err != nil {
		t.Errorf("a 401 to a replaced token: %v, want nil (retry)", err)
	}
	forbidden := http.Header{"Www-Authenticate": {`Bearer error="insufficient_scope", scope="mcp admin"`}}
	err := m.Challenged(ctx, srv, "alice", h, 403, forbidden)
	var nc *NeedConsent
	if !errors.As(err, &nc) || !nc.StepUp {
		t.Fatalf("insufficient_scope: %v", err)
	}
	authURL, _ := confirm(t, m, nc.URL, nc.Code)
	u, _ := url.Parse(authURL)
	if sc := u.Query().Get("scope"); !strings.Contains(sc, "admin") || !strings.Contains(sc, "mcp") {
		t.Errorf("step-up scope %q, want the union of mcp and admin", sc)
	}
	for i := 0; ; i++ {
		q, binding := approve(t, m, nc)
		if _, err := m.Complete(ctx, q, binding); err != nil {
			t.Fatal(err)
		}
		h, _ = m.Header(ctx, srv, "alice")
		err = m.Challenged(ctx, srv, "alice", h, 403, forbidden)
		if !errors.As(err, &nc) {
			break
		}
		if i > 5 {
			t.Fatal("step-ups never stop")
		}
	}
	if err == nil || !strings.Contains(err.Error(), "crm") {
		t.Errorf("after the last step-up: %v", err)
	}
	// A 401 to the current token: refreshed first (the upstream may have dropped a token
	// whose refresh token is still good); refused again right after, given up.
	refreshes := e.as.refreshes.Load()
	if err := m.Challenged(ctx, srv, "alice", h, 401, http.Header{}); err != nil {
		t.Fatalf("a first 401 to a refreshable grant: %v, want nil (refresh and retry)", err)
	}
	h2, err := m.Header(ctx, srv, "alice")
	if err != nil || h2 == h || e.as.refreshes.Load() != refreshes+1 {
		t.Fatalf("after the first 401: %q %v, %d refreshes, want a refreshed token", h2, err, e.as.refreshes.Load()-refreshes)
	}
	if err := m.Challenged(ctx, srv, "alice", h2, 401, http.Header{}); !errors.As(err, &nc) || nc.StepUp {
		t.Errorf("a 401 to the refreshed token: %v, want a new consent", err)
	}
	if gs, _ := m.Grants("alice"); len(gs) != 0 {
		t.Errorf("the refused grant is kept: %+v", gs)
	}
}

// TestClientCredentials: a per-server machine credential gives every caller the same
// token, obtained once, with no person asked.
func TestClientCredentials(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	m := e.manager()
	srv := e.server(config.UpstreamAuth{Type: config.UpstreamAuthOAuth, Per: config.AuthPerServer,
		Grant: config.GrantClientCredentials, ClientID: "machine", ClientSecret: "s3cret"})
	ha, err := m.Header(ctx, srv, "alice")
	if err != nil {
		t.Fatal(err)
	}
	hb, err := m.Header(ctx, srv, "bob")
	if err != nil || ha != hb {
		t.Errorf("bob: %q %v, want alice's %q", hb, err, ha)
	}
	if n := e.as.ccCalls.Load(); n != 1 {
		t.Errorf("%d client credentials requests, want 1", n)
	}
	bad := srv
	bad.Name, bad.Auth.ClientSecret = "crm2", "wrong"
	if _, err := m.Header(ctx, bad, "alice"); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Errorf("a wrong secret: %v (an error that does not echo the secret)", err)
	}
}

// TestSealedAtRest: the store holds no token in the clear, and a grant copied to another
// identity's place does not open.
func TestSealedAtRest(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	m, srv := e.manager(), e.server(config.UpstreamAuth{})
	connect(t, ctx, m, srv, "alice")
	c, err := e.store.GetCredential(kindGrant, "crm", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(c.Sealed, []byte("at-")) || bytes.Contains(c.Sealed, []byte("rt-")) {
		t.Error("a token is readable in the store")
	}
	copied := *c
	copied.Subject = "mallory"
	if _, err := e.store.PutCredential(&copied, 0); err != nil {
		t.Fatal(err)
	}
	if h, err := m.Header(ctx, srv, "mallory"); err == nil {
		t.Errorf("alice's grant under mallory's name: %q, want a refusal to open it", h)
	}
}

// TestConsentURLReused: a caller that calls again and again before a person approves
// gets one URL and makes one pending flow, not one per call.
func TestConsentURLReused(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	m, srv := e.manager(), e.server(config.UpstreamAuth{})
	var first *NeedConsent
	for i := range 50 {
		nc := ask(t, ctx, m, srv, "alice")
		if i == 0 {
			first = nc
		} else if nc.URL != first.URL || nc.Code != first.Code {
			t.Fatalf("call %d got another consent URL", i)
		}
	}
	flows, err := e.store.ListCredentials(kindFlow)
	if err != nil || len(flows) != 2 {
		t.Errorf("%d flow records (%v), want 2 (the flow and its URL)", len(flows), err)
	}
	q, binding := approve(t, m, first)
	if _, err := m.Complete(ctx, q, binding); err != nil {
		t.Fatal(err)
	}
	if flows, _ := e.store.ListCredentials(kindFlow); len(flows) != 0 {
		t.Errorf("flow records left after the callback: %d", len(flows))
	}
	// Once the callback spent it, the next consent gets a new URL.
	if err := m.Revoke("crm", "alice"); err != nil {
		t.Fatal(err)
	}
	if nc := ask(t, ctx, m, srv, "alice"); nc.URL == first.URL {
		t.Error("after the callback, the spent consent URL again")
	}
}

// TestScopeFromProbe: the scopes an upstream names in its challenge are asked for in the
// first authorization, when mcpgw read the challenge from its own probe.
func TestScopeFromProbe(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	e.as.challengeScope = "mcp files:read"
	m, srv := e.manager(), e.server(config.UpstreamAuth{})
	cs, err := m.Begin(ctx, srv, "alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	authURL, _ := confirm(t, m, cs.URL, cs.Code)
	p, _ := url.Parse(authURL)
	if sc := p.Query().Get("scope"); !strings.Contains(sc, "files:read") {
		t.Errorf("first authorization asks for scope %q, want the challenge's files:read", sc)
	}
}
