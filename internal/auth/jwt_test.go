package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcpgw/mcpgw/config"
)

// Test keys are made once: RSA generation is slow under -race.
var (
	keysOnce sync.Once
	rsaKey1  *rsa.PrivateKey
	rsaKey2  *rsa.PrivateKey
	ecKey256 *ecdsa.PrivateKey
	ecKey384 *ecdsa.PrivateKey
	ecKey521 *ecdsa.PrivateKey
	edKey    ed25519.PrivateKey
	edKey2   ed25519.PrivateKey
)

func testKeys(t testing.TB) {
	t.Helper()
	keysOnce.Do(func() {
		var err error
		must := func(e error) {
			if e != nil && err == nil {
				err = e
			}
		}
		rsaKey1, err = rsa.GenerateKey(rand.Reader, 2048)
		must(err)
		rsaKey2, err = rsa.GenerateKey(rand.Reader, 2048)
		must(err)
		ecKey256, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(err)
		ecKey384, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		must(err)
		ecKey521, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
		must(err)
		_, edKey, err = ed25519.GenerateKey(rand.Reader)
		must(err)
		_, edKey2, err = ed25519.GenerateKey(rand.Reader)
		must(err)
		if err != nil {
			panic(err)
		}
	})
}

func pubPEM(t testing.TB, k crypto.Signer) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// privPEM encodes k as PKCS#8, or as format ("pkcs1", "sec1") when given.
func privPEM(t testing.TB, k crypto.Signer, format string) []byte {
	t.Helper()
	switch format {
	case "pkcs1":
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k.(*rsa.PrivateKey))})
	case "sec1":
		der, err := x509.MarshalECPrivateKey(k.(*ecdsa.PrivateKey))
		if err != nil {
			t.Fatal(err)
		}
		// openssl ecparam -genkey puts an EC PARAMETERS block first.
		params := pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}})
		return append(params, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})...)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeClock is a goroutine-safe settable clock.
type fakeClock struct{ ns atomic.Int64 }

func newClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}
func (c *fakeClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

var testNow = time.Unix(1_700_000_000, 0)

const hsSecret = "0123456789abcdef0123456789abcdef" // 32 bytes

// sign makes a token with the given alg, header extras and claims.
func sign(t testing.TB, alg string, key any, header map[string]any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.GetSigningMethod(alg), claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign %s: %v", alg, err)
	}
	return s
}

// std returns claims valid at testNow for the issuer and audience of jwtTestConfig.
func std(mods ...func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{
		"sub": "agent-a",
		"iss": "https://issuer.example",
		"aud": "mcpgw-test",
		"iat": testNow.Add(-time.Minute).Unix(),
		"nbf": testNow.Add(-time.Minute).Unix(),
		"exp": testNow.Add(time.Hour).Unix(),
	}
	for _, m := range mods {
		m(c)
	}
	return c
}

func set(k string, v any) func(jwt.MapClaims) { return func(c jwt.MapClaims) { c[k] = v } }
func del(k string) func(jwt.MapClaims)        { return func(c jwt.MapClaims) { delete(c, k) } }

func jwtTestConfig(t testing.TB) config.JWTConfig {
	testKeys(t)
	return config.JWTConfig{
		Issuer:    "https://issuer.example",
		Audience:  "mcpgw-test",
		ClockSkew: 30 * time.Second,
		Keys: []config.JWTKey{
			{Kid: "h1", Alg: "HS256", Secret: hsSecret},
			{Kid: "r1", Alg: "RS256", PublicKey: pubPEM(t, rsaKey1)},
			{Kid: "r2", Alg: "RS256", PublicKeyFile: writeFile(t, "r2.pem", []byte(pubPEM(t, rsaKey2)))},
			{Kid: "e1", Alg: "ES256", PublicKey: pubPEM(t, ecKey256)},
			{Alg: "EdDSA", PublicKey: pubPEM(t, edKey)}, // no kid: any kid may use it
		},
	}
}

func newTestVerifier(t testing.TB, cfg config.JWTConfig) *JWTVerifier {
	t.Helper()
	v, err := NewJWTVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v.now = func() time.Time { return testNow }
	return v
}

func TestJWTVerify(t *testing.T) {
	cfg := jwtTestConfig(t)
	v := newTestVerifier(t, cfg)
	rsaOnly := newTestVerifier(t, config.JWTConfig{Keys: []config.JWTKey{{Alg: "RS256", PublicKey: pubPEM(t, rsaKey1)}}})

	noneTok, err := jwt.NewWithClaims(jwt.SigningMethodNone, std()).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}

	noneKid := jwt.NewWithClaims(jwt.SigningMethodNone, std())
	noneKid.Header["kid"] = "h1"
	noneKidTok, err := noneKid.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		v     *JWTVerifier
		token string
		want  string // "" = valid; else a substring of the error
		agent string
	}{
		{name: "valid HS256", token: sign(t, "HS256", []byte(hsSecret), map[string]any{"kid": "h1"}, std())},
		{name: "valid HS256 without kid", token: sign(t, "HS256", []byte(hsSecret), nil, std())},
		{name: "valid RS256", token: sign(t, "RS256", rsaKey1, map[string]any{"kid": "r1"}, std())},
		{name: "valid ES256", token: sign(t, "ES256", ecKey256, map[string]any{"kid": "e1"}, std())},
		{name: "valid EdDSA", token: sign(t, "EdDSA", edKey, nil, std())},
		{name: "valid EdDSA with any kid (key has none)", token: sign(t, "EdDSA", edKey, map[string]any{"kid": "whatever"}, std())},
		{name: "aud array containing audience", token: sign(t, "RS256", rsaKey1, nil, std(set("aud", []string{"other", "mcpgw-test"})))},
		{name: "expired within skew", token: sign(t, "RS256", rsaKey1, nil, std(set("exp", testNow.Add(-10*time.Second).Unix())))},

		{name: "expired", token: sign(t, "RS256", rsaKey1, nil, std(set("exp", testNow.Add(-time.Minute).Unix()))), want: "token expired"},
		{name: "not yet valid", token: sign(t, "RS256", rsaKey1, nil, std(set("nbf", testNow.Add(5*time.Minute).Unix()))), want: "token not valid yet"},
		{name: "issued in the future", token: sign(t, "RS256", rsaKey1, nil, std(set("iat", testNow.Add(5*time.Minute).Unix()))), want: "token issued in the future"},
		{name: "wrong issuer", token: sign(t, "RS256", rsaKey1, nil, std(set("iss", "https://evil.example"))), want: "wrong issuer"},
		{name: "missing issuer", token: sign(t, "RS256", rsaKey1, nil, std(del("iss"))), want: "wrong issuer"},
		{name: "wrong audience", token: sign(t, "RS256", rsaKey1, nil, std(set("aud", "someone-else"))), want: "wrong audience"},
		{name: "missing audience", token: sign(t, "RS256", rsaKey1, nil, std(del("aud"))), want: "wrong audience"},
		{name: "missing exp", token: sign(t, "HS256", []byte(hsSecret), nil, std(del("exp"))), want: "missing exp claim"},
		{name: "alg none", token: noneTok, want: "algorithm not allowed"},
		{name: "alg none with the HMAC kid", token: noneKidTok, want: "algorithm not allowed"},
		{name: "alg switch: HS256 signed with the RSA public key PEM", v: rsaOnly,
			token: sign(t, "HS256", []byte(pubPEM(t, rsaKey1)), nil, std()), want: "no key for alg HS256"},
		{name: "alg switch with the RSA kid", token: sign(t, "HS256", []byte(pubPEM(t, rsaKey1)), map[string]any{"kid": "r1"}, std()), want: "no key for alg HS256"},
		{name: "wrong key", v: rsaOnly, token: sign(t, "RS256", rsaKey2, nil, std()), want: "signature invalid"},
		{name: "wrong HMAC secret", token: sign(t, "HS256", []byte("another-secret-another-secret-xx"), nil, std()), want: "signature invalid"},
		{name: "expired and forged says signature", v: rsaOnly, token: sign(t, "RS256", rsaKey2, nil, std(set("exp", 1))), want: "signature invalid"},
		{name: "no key for alg", token: sign(t, "ES384", ecKey384, nil, std()), want: "no key for alg ES384"},
		{name: "kid selects r2", token: sign(t, "RS256", rsaKey2, map[string]any{"kid": "r2"}, std())},
		{name: "no kid tries every RS256 key", token: sign(t, "RS256", rsaKey2, nil, std())},
		{name: "kid r1 but signed by r2", token: sign(t, "RS256", rsaKey2, map[string]any{"kid": "r1"}, std()), want: "signature invalid"},
		{name: "unknown kid", token: sign(t, "RS256", rsaKey1, map[string]any{"kid": "zz"}, std()), want: `no key for alg RS256 and kid "zz"`},
		{name: "kid of another alg's key", token: sign(t, "ES256", ecKey256, map[string]any{"kid": "r1"}, std()), want: `no key for alg ES256 and kid "r1"`},
		{name: "missing agent claim", token: sign(t, "RS256", rsaKey1, nil, std(del("sub"))), want: "missing agent claim"},
		{name: "crit header", token: sign(t, "RS256", rsaKey1, map[string]any{"crit": []string{"exp"}}, std()), want: "unsupported critical header"},
		{name: "malformed", token: "not.a.jwt", want: "malformed token"},
		{name: "empty", token: "", want: "empty token"},
		{name: "malformed narrowing", token: sign(t, "RS256", rsaKey1, nil, std(set("mcpgw", map[string]any{"servers": "github"}))), want: "malformed mcpgw.servers claim"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vv := tc.v
			if vv == nil {
				vv = v
			}
			c, err := vv.Verify(tc.token)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if c.Agent != "agent-a" || c.Subject != "agent-a" {
					t.Fatalf("claims = %+v", c)
				}
				return
			}
			if err == nil {
				t.Fatalf("Verify succeeded, want error %q", tc.want)
			}
			if !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("error %v does not wrap ErrInvalidToken", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to say %q", err, tc.want)
			}
			var te *TokenError
			if !errors.As(err, &te) || te.Reason == "" {
				t.Fatalf("error %v is not a *TokenError", err)
			}
		})
	}
}

func TestJWTClaims(t *testing.T) {
	cfg := jwtTestConfig(t)
	cfg.AgentClaim = "azp"
	v := newTestVerifier(t, cfg)

	tests := []struct {
		name   string
		claims jwt.MapClaims
		want   Claims
	}{
		{
			name:   "narrowing and scope string",
			claims: std(set("azp", "bot"), set("scope", "mcp:read  mcp:write"), set("mcpgw", map[string]any{"servers": []string{"github"}, "tools": []string{"github__*"}, "read_only": true, "task": "t1", "conversation": "c1"})),
			want:   Claims{Subject: "agent-a", Agent: "bot", Servers: []string{"github"}, Tools: []string{"github__*"}, ReadOnly: true, Task: "t1", Conversation: "c1", Scopes: []string{"mcp:read", "mcp:write"}, Expiry: testNow.Add(time.Hour)},
		},
		{
			name:   "scp array, empty servers means none",
			claims: std(set("azp", "bot"), set("scp", []string{"a", "b"}), set("mcpgw", map[string]any{"servers": []string{}})),
			want:   Claims{Subject: "agent-a", Agent: "bot", Servers: []string{}, Scopes: []string{"a", "b"}, Expiry: testNow.Add(time.Hour)},
		},
		{
			name:   "no narrowing",
			claims: std(set("azp", "bot"), del("sub")),
			want:   Claims{Agent: "bot", Expiry: testNow.Add(time.Hour)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := v.Verify(sign(t, "HS256", []byte(hsSecret), nil, tc.claims))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*c, tc.want) {
				t.Fatalf("claims\n got %#v\nwant %#v", *c, tc.want)
			}
		})
	}
	// The agent claim is the configured one, not sub.
	if _, err := v.Verify(sign(t, "HS256", []byte(hsSecret), nil, std())); err == nil || !strings.Contains(err.Error(), "missing agent claim") {
		t.Fatalf("token without azp: err = %v", err)
	}
}

func TestNewJWTVerifierErrors(t *testing.T) {
	testKeys(t)
	good := config.JWTKey{Alg: "HS256", Secret: hsSecret}
	tests := []struct {
		name string
		key  config.JWTKey
		want string
	}{
		{"alg none", config.JWTKey{Alg: "none", Secret: hsSecret}, `alg "none" is never allowed`},
		{"missing alg", config.JWTKey{Secret: hsSecret}, "missing alg"},
		{"unknown alg", config.JWTKey{Alg: "HS1", Secret: hsSecret}, "unsupported alg"},
		{"short secret", config.JWTKey{Alg: "HS256", Secret: "short"}, "at least 32 bytes"},
		{"HS384 needs 48", config.JWTKey{Alg: "HS384", Secret: hsSecret}, "at least 48 bytes"},
		{"HS with public key", config.JWTKey{Alg: "HS256", Secret: hsSecret, PublicKey: pubPEM(t, rsaKey1)}, "takes a secret"},
		{"RS with secret", config.JWTKey{Alg: "RS256", Secret: hsSecret}, "not a secret"},
		{"RS without key", config.JWTKey{Alg: "RS256"}, "needs public_key"},
		{"RS with EC key", config.JWTKey{Alg: "RS256", PublicKey: pubPEM(t, ecKey256)}, "needs an RSA key"},
		{"ES256 with P-384 key", config.JWTKey{Alg: "ES256", PublicKey: pubPEM(t, ecKey384)}, "needs curve P-256"},
		{"EdDSA with RSA key", config.JWTKey{Alg: "EdDSA", PublicKey: pubPEM(t, rsaKey1)}, "needs an Ed25519 key"},
		{"private key inline", config.JWTKey{Alg: "ES256", PublicKey: string(privPEM(t, ecKey256, ""))}, "private key where a public key belongs"},
		{"not PEM", config.JWTKey{Alg: "ES256", PublicKey: "hello"}, "no PEM public key"},
		{"both", config.JWTKey{Alg: "ES256", PublicKey: pubPEM(t, ecKey256), PublicKeyFile: "/x"}, "not both"},
		{"missing file", config.JWTKey{Alg: "ES256", PublicKeyFile: filepath.Join(t.TempDir(), "nope.pem")}, "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewJWTVerifier(config.JWTConfig{Keys: []config.JWTKey{good, tc.key}})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), "key 1") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want key 1 and %q", err, tc.want)
			}
		})
	}
	if _, err := NewJWTVerifier(config.JWTConfig{}); err == nil {
		t.Fatal("no keys: no error")
	}
}

func TestJWTPublicKeyForms(t *testing.T) {
	testKeys(t)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: testNow, NotAfter: testNow.Add(time.Hour)}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, rsaKey1.Public(), rsaKey1)
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string]config.JWTKey{
		"PKCS#1 public":        {Alg: "RS256", PublicKey: string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&rsaKey1.PublicKey)}))},
		"certificate":          {Alg: "RS256", PublicKey: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}))},
		"derived from private": {Alg: "RS256", PrivateKeyFile: writeFile(t, "k.pem", privPEM(t, rsaKey1, "pkcs1"))},
	}
	for name, k := range forms {
		t.Run(name, func(t *testing.T) {
			v := newTestVerifier(t, config.JWTConfig{Keys: []config.JWTKey{k}})
			if _, err := v.Verify(sign(t, "RS256", rsaKey1, nil, std())); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestIssueJWTRoundTrip(t *testing.T) {
	testKeys(t)
	tests := []struct {
		alg    string
		key    crypto.Signer // nil: HMAC
		format string
		secret string
	}{
		{alg: "HS256", secret: hsSecret},
		{alg: "HS384", secret: strings.Repeat("s", 48)},
		{alg: "HS512", secret: strings.Repeat("s", 64)},
		{alg: "RS256", key: rsaKey1, format: "pkcs1"},
		{alg: "RS384", key: rsaKey1},
		{alg: "RS512", key: rsaKey2},
		{alg: "PS256", key: rsaKey1},
		{alg: "PS384", key: rsaKey2, format: "pkcs1"},
		{alg: "PS512", key: rsaKey1},
		{alg: "ES256", key: ecKey256, format: "sec1"},
		{alg: "ES384", key: ecKey384},
		{alg: "ES512", key: ecKey521},
		{alg: "EdDSA", key: edKey},
	}
	for _, tc := range tests {
		t.Run(tc.alg, func(t *testing.T) {
			k := config.JWTKey{Kid: "k-" + tc.alg, Alg: tc.alg, Secret: tc.secret}
			if tc.key != nil {
				k.PublicKey = pubPEM(t, tc.key)
				k.PrivateKeyFile = writeFile(t, "priv.pem", privPEM(t, tc.key, tc.format))
			}
			cfg := config.JWTConfig{
				Issuer: "https://issuer.example", Audience: "mcpgw-test", AgentClaim: "agent",
				// A verification-only key first: IssueJWT must skip it.
				Keys: []config.JWTKey{{Kid: "verify-only", Alg: "EdDSA", PublicKey: pubPEM(t, edKey2)}, k},
			}
			narrow := map[string]any{"servers": []string{"github", "fs"}, "tools": []string{"fs__read_*"}, "read_only": true, "task": "triage", "conversation": "c-9"}
			tok, err := IssueJWT(cfg, "bot-7", 10*time.Minute, narrow)
			if err != nil {
				t.Fatal(err)
			}
			parsed, _, err := jwt.NewParser().ParseUnverified(tok, jwt.MapClaims{})
			if err != nil {
				t.Fatal(err)
			}
			if parsed.Header["alg"] != tc.alg || parsed.Header["kid"] != k.Kid {
				t.Fatalf("header = %v", parsed.Header)
			}
			// Verify with only the public half (as the daemon would).
			vk := k
			vk.PrivateKeyFile = ""
			v, err := NewJWTVerifier(config.JWTConfig{Issuer: cfg.Issuer, Audience: cfg.Audience, AgentClaim: "agent", ClockSkew: time.Second, Keys: []config.JWTKey{cfg.Keys[0], vk}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := v.Verify(tok)
			if err != nil {
				t.Fatal(err)
			}
			want := Claims{Subject: "bot-7", Agent: "bot-7", Servers: []string{"github", "fs"}, Tools: []string{"fs__read_*"}, ReadOnly: true, Task: "triage", Conversation: "c-9", Expiry: c.Expiry}
			if !reflect.DeepEqual(*c, want) {
				t.Fatalf("claims\n got %#v\nwant %#v", *c, want)
			}
			if d := time.Until(c.Expiry); d < 9*time.Minute || d > 10*time.Minute {
				t.Fatalf("expiry in %v, want about 10m", d)
			}
		})
	}
}

func TestIssueJWTErrors(t *testing.T) {
	testKeys(t)
	hs := config.JWTConfig{Keys: []config.JWTKey{{Alg: "HS256", Secret: hsSecret}}}
	tests := []struct {
		name   string
		cfg    config.JWTConfig
		agent  string
		ttl    time.Duration
		narrow map[string]any
		want   string
	}{
		{"no signing key", config.JWTConfig{Keys: []config.JWTKey{{Alg: "RS256", PublicKey: pubPEM(t, rsaKey1)}}}, "a", time.Minute, nil, "no key can sign"},
		{"empty agent", hs, "", time.Minute, nil, "agent is empty"},
		{"zero ttl", hs, "a", 0, nil, "must be positive"},
		{"unknown narrowing", hs, "a", time.Minute, map[string]any{"server": []string{"x"}}, `unknown narrowing field "server"`},
		{"mismatched private key", config.JWTConfig{Keys: []config.JWTKey{{Alg: "RS256", PublicKey: pubPEM(t, rsaKey1), PrivateKeyFile: writeFile(t, "k.pem", privPEM(t, rsaKey2, ""))}}}, "a", time.Minute, nil, "does not match"},
		{"private key of wrong type", config.JWTConfig{Keys: []config.JWTKey{{Alg: "ES256", PrivateKeyFile: writeFile(t, "k.pem", privPEM(t, edKey, ""))}}}, "a", time.Minute, nil, "needs an EC key"},
		{"encrypted key", config.JWTConfig{Keys: []config.JWTKey{{Alg: "ES256", PrivateKeyFile: writeFile(t, "k.pem", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}}))}}}, "a", time.Minute, nil, "encrypted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := IssueJWT(tc.cfg, tc.agent, tc.ttl, tc.narrow)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
