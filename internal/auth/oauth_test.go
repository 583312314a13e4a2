package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcpgw/mcpgw/config"
)

// toJWK renders the public half of k as a JWK map; alg may be "".
func toJWK(t testing.TB, kid, alg string, k crypto.Signer) map[string]any {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	m := map[string]any{"kid": kid, "use": "sig"}
	if alg != "" {
		m["alg"] = alg
	}
	switch pub := k.Public().(type) {
	case *rsa.PublicKey:
		m["kty"] = "RSA"
		m["n"] = b64(pub.N.Bytes())
		m["e"] = b64(big.NewInt(int64(pub.E)).Bytes())
	case *ecdsa.PublicKey:
		raw, err := pub.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		size := (len(raw) - 1) / 2
		m["kty"] = "EC"
		m["crv"] = pub.Curve.Params().Name
		m["x"] = b64(raw[1 : 1+size])
		m["y"] = b64(raw[1+size:])
	case ed25519.PublicKey:
		m["kty"] = "OKP"
		m["crv"] = "Ed25519"
		m["x"] = b64(pub)
	default:
		t.Fatalf("toJWK: %T", pub)
	}
	return m
}

// jwksServer serves a JWKS that tests can swap, counting fetches.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	body    []byte
	status  int
	fetches atomic.Int32
}

func newJWKSServer(t testing.TB, keys ...map[string]any) *jwksServer {
	s := &jwksServer{status: http.StatusOK}
	s.setKeys(t, keys...)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		body, status := s.body, s.status
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) setKeys(t testing.TB, keys ...map[string]any) {
	if keys == nil {
		keys = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.body = b
	s.mu.Unlock()
}

func (s *jwksServer) setStatus(code int) {
	s.mu.Lock()
	s.status = code
	s.mu.Unlock()
}

const (
	oauthIssuer   = "https://as.example"
	oauthResource = "https://gw.example/mcp"
)

func oauthClaims(mods ...func(jwt.MapClaims)) jwt.MapClaims {
	c := std(set("iss", oauthIssuer), set("aud", oauthResource))
	for _, m := range mods {
		m(c)
	}
	return c
}

func newOAuth(t testing.TB, srv *jwksServer, clock *fakeClock, mod func(*config.OAuthConfig)) *OAuthVerifier {
	t.Helper()
	cfg := config.OAuthConfig{
		Resource:             oauthResource,
		AuthorizationServers: []string{oauthIssuer},
		Issuer:               oauthIssuer,
		JWKSURL:              srv.URL + "/jwks.json",
		ClockSkew:            30 * time.Second,
		JWKSRefresh:          10 * time.Minute,
	}
	if mod != nil {
		mod(&cfg)
	}
	v, err := NewOAuthVerifier(cfg, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	v.now = clock.Now
	return v
}

func TestOAuthVerify(t *testing.T) {
	testKeys(t)
	srv := newJWKSServer(t,
		toJWK(t, "rsa", "RS256", rsaKey1),
		toJWK(t, "rsa-noalg", "", rsaKey2),
		toJWK(t, "ec", "", ecKey256),
		toJWK(t, "ec384", "ES384", ecKey384),
		toJWK(t, "ed", "", edKey),
		map[string]any{"kty": "RSA", "kid": "enc", "use": "enc", "n": "AQAB", "e": "AQAB"}, // skipped: not for signatures
	)
	v := newOAuth(t, srv, newClock(testNow), nil)
	ctx := context.Background()

	tests := []struct {
		name  string
		token string
		want  string
	}{
		{"valid RS256", sign(t, "RS256", rsaKey1, map[string]any{"kid": "rsa"}, oauthClaims()), ""},
		{"valid PS256 on a key without alg", sign(t, "PS256", rsaKey2, map[string]any{"kid": "rsa-noalg"}, oauthClaims()), ""},
		{"valid ES256 (alg inferred from crv)", sign(t, "ES256", ecKey256, map[string]any{"kid": "ec"}, oauthClaims()), ""},
		{"valid ES384", sign(t, "ES384", ecKey384, map[string]any{"kid": "ec384"}, oauthClaims()), ""},
		{"valid EdDSA", sign(t, "EdDSA", edKey, map[string]any{"kid": "ed"}, oauthClaims()), ""},
		{"valid without kid", sign(t, "EdDSA", edKey, nil, oauthClaims()), ""},
		{"aud array", sign(t, "RS256", rsaKey1, map[string]any{"kid": "rsa"}, oauthClaims(set("aud", []string{"x", oauthResource}))), ""},
		{"wrong audience", sign(t, "RS256", rsaKey1, map[string]any{"kid": "rsa"}, oauthClaims(set("aud", "https://other.example/mcp"))), "wrong audience"},
		{"wrong issuer", sign(t, "RS256", rsaKey1, map[string]any{"kid": "rsa"}, oauthClaims(set("iss", "https://evil.example"))), "wrong issuer"},
		{"expired", sign(t, "RS256", rsaKey1, map[string]any{"kid": "rsa"}, oauthClaims(set("exp", testNow.Add(-time.Hour).Unix()))), "token expired"},
		{"not yet valid", sign(t, "RS256", rsaKey1, map[string]any{"kid": "rsa"}, oauthClaims(set("nbf", testNow.Add(time.Hour).Unix()))), "token not valid yet"},
		{"missing exp", sign(t, "RS256", rsaKey1, map[string]any{"kid": "rsa"}, oauthClaims(del("exp"))), "missing exp claim"},
		{"JWK alg pins RS256: PS256 refused", sign(t, "PS256", rsaKey1, map[string]any{"kid": "rsa"}, oauthClaims()), "algorithm not allowed"},
		{"EC key cannot do ES384", sign(t, "ES384", ecKey384, map[string]any{"kid": "ec"}, oauthClaims()), "algorithm not allowed"},
		{"HS256 refused", sign(t, "HS256", []byte(hsSecret), map[string]any{"kid": "rsa"}, oauthClaims()), "algorithm not allowed"},
		{"wrong key for kid", sign(t, "RS256", rsaKey2, map[string]any{"kid": "rsa"}, oauthClaims()), "signature invalid"},
		{"enc key not used", sign(t, "RS256", rsaKey1, map[string]any{"kid": "enc"}, oauthClaims()), `no key for kid "enc"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := v.Verify(ctx, tc.token)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Agent != "agent-a" {
					t.Fatalf("claims = %+v", c)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrInvalidToken saying %q", err, tc.want)
			}
		})
	}
	if n := srv.fetches.Load(); n != 1 {
		// "enc" is an unknown kid, but the first fetch was less than 10 s ago.
		t.Fatalf("JWKS fetched %d times, want 1 (cached)", n)
	}
}

func TestOAuthAudienceDefaultsToResource(t *testing.T) {
	testKeys(t)
	srv := newJWKSServer(t, toJWK(t, "rsa", "RS256", rsaKey1))
	clock := newClock(testNow)
	explicit := newOAuth(t, srv, clock, func(c *config.OAuthConfig) { c.Audience = "api://mcpgw" })
	tok := sign(t, "RS256", rsaKey1, nil, oauthClaims(set("aud", "api://mcpgw")))
	if _, err := explicit.Verify(context.Background(), tok); err != nil {
		t.Fatalf("explicit audience: %v", err)
	}
	byResource := newOAuth(t, srv, clock, nil)
	if _, err := byResource.Verify(context.Background(), tok); err == nil || !strings.Contains(err.Error(), "wrong audience") {
		t.Fatalf("resource audience: err = %v", err)
	}
}

func TestOAuthKeyRotation(t *testing.T) {
	testKeys(t)
	srv := newJWKSServer(t, toJWK(t, "old", "", rsaKey1))
	clock := newClock(testNow)
	v := newOAuth(t, srv, clock, nil)
	ctx := context.Background()

	if _, err := v.Verify(ctx, sign(t, "RS256", rsaKey1, map[string]any{"kid": "old"}, oauthClaims())); err != nil {
		t.Fatalf("old key: %v", err)
	}
	// The issuer rotates: new key, old one gone.
	srv.setKeys(t, toJWK(t, "new", "", ecKey256))
	newTok := sign(t, "ES256", ecKey256, map[string]any{"kid": "new"}, oauthClaims())

	// Within 10 s of the last fetch the unknown kid does not cause a refetch.
	clock.Advance(5 * time.Second)
	if _, err := v.Verify(ctx, newTok); err == nil || !strings.Contains(err.Error(), `no key for kid "new"`) {
		t.Fatalf("rate-limited: err = %v", err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}

	clock.Advance(6 * time.Second)
	if _, err := v.Verify(ctx, newTok); err != nil {
		t.Fatalf("new key after refetch: %v", err)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
	// The old key is gone with the refetch.
	clock.Advance(11 * time.Second)
	if _, err := v.Verify(ctx, sign(t, "RS256", rsaKey1, map[string]any{"kid": "old"}, oauthClaims())); err == nil {
		t.Fatal("old key still accepted after rotation")
	}
}

func TestOAuthUnknownKidRateLimit(t *testing.T) {
	testKeys(t)
	srv := newJWKSServer(t, toJWK(t, "a", "", rsaKey1))
	clock := newClock(testNow)
	v := newOAuth(t, srv, clock, nil)
	ctx := context.Background()
	bogus := sign(t, "RS256", rsaKey2, map[string]any{"kid": "bogus"}, oauthClaims())

	if _, err := v.Verify(ctx, sign(t, "RS256", rsaKey1, map[string]any{"kid": "a"}, oauthClaims())); err != nil {
		t.Fatal(err)
	}
	// A flood of tokens with unknown kids, some concurrent: no fetch inside the 10 s window.
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := v.Verify(ctx, bogus)
			if err == nil || !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), `no key for kid "bogus"`) {
				t.Errorf("err = %v", err)
			}
		}()
	}
	wg.Wait()
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
	// After the window, the next flood costs exactly one fetch.
	clock.Advance(10 * time.Second)
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := v.Verify(ctx, bogus); err == nil || !errors.Is(err, ErrInvalidToken) {
				t.Errorf("err = %v", err)
			}
		}()
	}
	wg.Wait()
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
}

func TestOAuthRefreshAndOutage(t *testing.T) {
	testKeys(t)
	srv := newJWKSServer(t, toJWK(t, "a", "", rsaKey1))
	clock := newClock(testNow)
	v := newOAuth(t, srv, clock, nil)
	ctx := context.Background()
	tok := sign(t, "RS256", rsaKey1, map[string]any{"kid": "a"}, oauthClaims(set("exp", testNow.Add(24*time.Hour).Unix())))

	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	clock.Advance(9 * time.Minute)
	v.Verify(ctx, tok)
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("fetches before refresh = %d, want 1", n)
	}
	clock.Advance(2 * time.Minute)
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("fetches after refresh = %d, want 2", n)
	}
	// The issuer goes down: stale keys keep working; failed refreshes are spaced 10 s apart.
	srv.setStatus(http.StatusInternalServerError)
	clock.Advance(11 * time.Minute)
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatalf("stale keys during outage: %v", err)
	}
	if _, err := v.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	if n := srv.fetches.Load(); n != 3 {
		t.Fatalf("fetches during outage = %d, want 3", n)
	}

	// No keys at all and the issuer down: ErrKeysUnavailable, not ErrInvalidToken.
	cold := newOAuth(t, srv, clock, nil)
	_, err := cold.Verify(ctx, tok)
	if !errors.Is(err, ErrKeysUnavailable) || errors.Is(err, ErrInvalidToken) {
		t.Fatalf("cold verifier with the issuer down: err = %v", err)
	}
	if err := cold.Refresh(ctx); !errors.Is(err, ErrKeysUnavailable) {
		t.Fatalf("Refresh: %v", err)
	}
	srv.setStatus(http.StatusOK)
	if err := cold.Refresh(ctx); err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if _, err := cold.Verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
}

func TestNewOAuthVerifierErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.OAuthConfig
		want string
	}{
		{"no jwks", config.OAuthConfig{Resource: oauthResource}, "jwks_url is required"},
		{"relative jwks", config.OAuthConfig{Resource: oauthResource, JWKSURL: "/jwks"}, "not an absolute URL"},
		{"plain http", config.OAuthConfig{Resource: oauthResource, JWKSURL: "http://as.example/jwks"}, "must use https"},
		{"no audience", config.OAuthConfig{JWKSURL: "https://as.example/jwks"}, "audience or resource is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewOAuthVerifier(tc.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := NewOAuthVerifier(config.OAuthConfig{Resource: oauthResource, JWKSURL: "http://localhost:8080/jwks"}, nil); err != nil {
		t.Fatalf("loopback http: %v", err)
	}
}

func TestParseJWKS(t *testing.T) {
	testKeys(t)
	good := toJWK(t, "ok", "", edKey)
	offCurve := toJWK(t, "bad-ec", "", ecKey256)
	offCurve["y"] = offCurve["x"]
	tests := []struct {
		name string
		keys []map[string]any
		n    int
		want string // error substring when n == 0
		kid  string
		algs []string
	}{
		{"RSA without alg: RSA family", []map[string]any{toJWK(t, "r", "", rsaKey1)}, 1, "", "r", rsaAlgs},
		{"RSA with alg pinned", []map[string]any{toJWK(t, "r", "PS384", rsaKey1)}, 1, "", "r", []string{"PS384"}},
		{"P-521", []map[string]any{toJWK(t, "e", "", ecKey521)}, 1, "", "e", []string{"ES512"}},
		{"bad keys skipped", []map[string]any{offCurve, {"kty": "oct", "k": "c2VjcmV0"}, good}, 1, "", "ok", []string{"EdDSA"}},
		{"alg does not fit", []map[string]any{toJWK(t, "e", "RS256", ecKey256)}, 0, "does not fit", "", nil},
		{"off-curve point", []map[string]any{offCurve}, 0, "bad EC point", "", nil},
		{"HS alg in JWKS", []map[string]any{{"kty": "oct", "alg": "HS256", "k": "c2VjcmV0"}}, 0, "not allowed", "", nil},
		{"small RSA", []map[string]any{{"kty": "RSA", "n": base64.RawURLEncoding.EncodeToString(make([]byte, 128)), "e": "AQAB"}}, 0, "at least 2048", "", nil},
		{"encryption only", []map[string]any{{"kty": "OKP", "crv": "Ed25519", "use": "enc", "x": good["x"]}}, 0, "no signature keys", "", nil},
		{"key_ops without verify", []map[string]any{{"kty": "OKP", "crv": "Ed25519", "key_ops": []string{"sign"}, "x": good["x"]}}, 0, "no signature keys", "", nil},
		{"empty", nil, 0, "no signature keys", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(map[string]any{"keys": tc.keys})
			keys, err := parseJWKS(b)
			if tc.n == 0 {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(keys) != tc.n || keys[0].kid != tc.kid || strings.Join(keys[0].algs, ",") != strings.Join(tc.algs, ",") {
				t.Fatalf("keys = %+v", keys)
			}
		})
	}
	if _, err := parseJWKS([]byte("{")); err == nil {
		t.Fatal("bad JSON accepted")
	}
}

func TestProtectedResourceMetadata(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.OAuthConfig
		want string
	}{
		{"full", config.OAuthConfig{Resource: oauthResource, AuthorizationServers: []string{"https://as1.example", "https://as2.example"}, Scopes: []string{"mcp:tools", "mcp:admin"}},
			`{"resource":"https://gw.example/mcp","authorization_servers":["https://as1.example","https://as2.example"],"scopes_supported":["mcp:tools","mcp:admin"],"bearer_methods_supported":["header"],"resource_name":"mcpgw"}`},
		{"no scopes, issuer as server", config.OAuthConfig{Resource: oauthResource, Issuer: oauthIssuer},
			`{"resource":"https://gw.example/mcp","authorization_servers":["https://as.example"],"bearer_methods_supported":["header"],"resource_name":"mcpgw"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(ProtectedResourceMetadata(tc.cfg)); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestWWWAuthenticate(t *testing.T) {
	const prm = "https://gw/.well-known/oauth-protected-resource"
	tests := []struct {
		name       string
		url        string
		scopes     []string
		code, desc string
		want       string
	}{
		{"full", prm, []string{"a", "b"}, "invalid_token", "token expired",
			`Bearer resource_metadata="https://gw/.well-known/oauth-protected-resource", scope="a b", error="invalid_token", error_description="token expired"`},
		{"metadata only", prm, nil, "", "", `Bearer resource_metadata="https://gw/.well-known/oauth-protected-resource"`},
		{"insufficient scope", prm, []string{"mcp:admin"}, "insufficient_scope", "",
			`Bearer resource_metadata="https://gw/.well-known/oauth-protected-resource", scope="mcp:admin", error="insufficient_scope"`},
		{"nothing", "", nil, "", "", "Bearer"},
		{"quoting", "", nil, "invalid_token", "bad \"kid\" \\ here\r\nX-Injected: 1 ünï",
			`Bearer error="invalid_token", error_description="bad \"kid\" \\ here  X-Injected: 1 ?n?"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := WWWAuthenticate(tc.url, tc.scopes, tc.code, tc.desc); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
