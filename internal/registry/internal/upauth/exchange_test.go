package upauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/oauth"
)

// fakeSTS is a security token service (or an enterprise IdP) that exchanges the tokens
// "caller-*" it is shown: for an ID-JAG when asked for one, else for an access token
// the fake upstream takes.
type fakeSTS struct {
	srv   *httptest.Server
	calls atomic.Int64
	last  atomic.Pointer[http.Request]
}

func newFakeSTS(t *testing.T, as *fakeAS) *fakeSTS {
	s := &fakeSTS{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		_ = r.ParseForm()
		s.last.Store(r)
		f := r.PostForm
		if f.Get("grant_type") != oauth.GrantTokenExchange || !strings.HasPrefix(f.Get("subject_token"), "caller-") {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		if f.Get("requested_token_type") == oauth.TokenTypeIDJAG {
			writeJSON(w, 200, map[string]any{"access_token": "jag-for-" + f.Get("subject_token"), "issued_token_type": oauth.TokenTypeIDJAG, "token_type": "N_A"})
			return
		}
		as.mu.Lock()
		as.seq++
		at := "at-x" + strings.TrimPrefix(f.Get("subject_token"), "caller-")
		as.access[at] = true
		as.mu.Unlock()
		writeJSON(w, 200, map[string]any{"access_token": at, "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// TestTokenExchange: an identity's grant is its own token exchanged at the token service
// (with the upstream's resource and its authorization server as audience), once, and
// again when the upstream refuses it; a caller that brought no token is told to.
func TestTokenExchange(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	sts := newFakeSTS(t, e.as)
	m := e.manager()
	srv := e.server(config.UpstreamAuth{Type: config.UpstreamAuthOAuth, Per: config.AuthPerUser, Grant: config.GrantTokenExchange,
		TokenExchange: &config.TokenExchangeDef{Endpoint: sts.srv.URL + "/token", SubjectTokenType: config.SubjectJWT}})
	if _, err := m.Header(ctx, srv, "alice"); err == nil || !errors.As(err, new(*NoCallerToken)) {
		t.Fatalf("Header before alice brought a token: %v, want NoCallerToken", err)
	}
	if !m.NoteCallerToken("alice", "caller-alice") || m.NoteCallerToken("bob", "caller-bob") {
		t.Errorf("NoteCallerToken: the first caller's token is the first")
	}
	ha, err := m.Header(ctx, srv, "alice")
	if err != nil || ha != "Bearer at-xalice" {
		t.Fatalf("alice: %q %v", ha, err)
	}
	q := sts.last.Load().PostForm
	if q.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:jwt" || q.Get("resource") != srv.URL ||
		q.Get("audience") != e.as.srv.URL+"/as" {
		t.Errorf("exchange request: %v", q)
	}
	if hb, err := m.Header(ctx, srv, "bob"); err != nil || hb != "Bearer at-xbob" {
		t.Errorf("bob: %q %v, want his own", hb, err)
	}
	if _, err := m.Header(ctx, srv, "alice"); err != nil || sts.calls.Load() != 2 {
		t.Errorf("alice again: %v after %d exchanges, want the kept token (2 exchanges)", err, sts.calls.Load())
	}
	// The upstream refuses alice's token: it is exchanged again, once.
	if err := m.Challenged(ctx, srv, "alice", ha, http.StatusUnauthorized, http.Header{}); err != nil {
		t.Fatalf("Challenged: %v, want a retry", err)
	}
	if _, err := m.Header(ctx, srv, "alice"); err != nil || sts.calls.Load() != 3 {
		t.Errorf("after the refusal: %v, %d exchanges, want 3", err, sts.calls.Load())
	}
	gs, _ := m.Grants("")
	for _, g := range gs {
		if g.Refreshable {
			t.Errorf("an exchanged grant is refreshable: %+v", g)
		}
	}
}

// TestTokenExchangeIDJAG: enterprise-managed authorization: the caller's ID token is
// exchanged at the IdP for an identity assertion, which the upstream's authorization
// server takes (jwt-bearer, as the configured client) for the access token.
func TestTokenExchangeIDJAG(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	idp := newFakeSTS(t, e.as)
	m := e.manager()
	srv := e.server(config.UpstreamAuth{Type: config.UpstreamAuthOAuth, Per: config.AuthPerUser, Grant: config.GrantTokenExchange,
		ClientID: "xaa", ClientSecret: "xaa-secret",
		TokenExchange: &config.TokenExchangeDef{Endpoint: idp.srv.URL + "/token", ClientID: "idp-client", SubjectTokenType: config.SubjectIDToken, IDJAG: true}})
	m.NoteCallerToken("alice", "caller-alice")
	h, err := m.Header(ctx, srv, "alice")
	if err != nil || !strings.HasPrefix(h, "Bearer at-") || e.as.jwtBearer.Load() != 1 {
		t.Fatalf("alice: %q %v (%d jwt-bearer grants)", h, err, e.as.jwtBearer.Load())
	}
	q := idp.last.Load().PostForm
	if q.Get("subject_token_type") != oauth.TokenTypeIDToken || q.Get("client_id") != "idp-client" || q.Get("audience") != e.as.srv.URL+"/as" {
		t.Errorf("ID-JAG request: %v", q)
	}
	m.NoteCallerToken("mallory", "forged")
	if _, err := m.Header(ctx, srv, "mallory"); err == nil || strings.Contains(err.Error(), "forged") {
		t.Errorf("a token the IdP refuses: %v, want an error that does not echo it", err)
	}
}
