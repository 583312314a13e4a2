package e2e

// Credentials end to end: JWTs (HS256 and RS256, every way a token can be wrong), API keys
// created while the gateway runs, and the OAuth 2.1 resource server with a rotating JWKS
// (docs/auth.md "Who is calling").

import (
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// expect401 checks a refused initialize: 401, a Bearer WWW-Authenticate, no session.
func expect401(t *testing.T, label string, a httpAnswer) {
	t.Helper()
	if a.Status != http.StatusUnauthorized {
		t.Errorf("%s: %s, want 401", label, a)
		return
	}
	if wa := a.Header.Get("WWW-Authenticate"); !strings.HasPrefix(wa, "Bearer") {
		t.Errorf("%s: 401 with WWW-Authenticate %q, want a Bearer challenge", label, wa)
	}
	if sid := a.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("%s: a refused initialize got session %q", label, sid)
	}
}

// endToEnd initializes with hdr, lists, and calls everything__echo.
func endToEnd(t *testing.T, label, url string, hdr map[string]string) []string {
	t.Helper()
	s := openRawSession(t, url, hdr)
	names := s.tools(t)
	if !slices.Contains(names, "everything__echo") {
		t.Fatalf("%s: tools lack everything__echo: %v", label, names)
	}
	r := s.callTool(t, "everything__echo", map[string]any{"message": "hello " + label})
	if r.Status != http.StatusOK || r.Reply == nil || r.Reply.Error != nil {
		t.Fatalf("%s: tools/call: %s", label, r)
	}
	if text, isErr := toolResultText(r.Reply.Result); isErr || !strings.Contains(text, "hello "+label) {
		t.Errorf("%s: echo answered %q (isError %v)", label, text, isErr)
	}
	return names
}

// TestJWTTable: mode jwt with an HS256 secret and an RS256 public key file, issuer and
// audience. Every kind of bad token is 401 with WWW-Authenticate; valid tokens (HS256,
// RS256, and one minted by `mcpgw token issue`) work end to end; a header naming another
// agent is 403; the mcpgw claim narrows the tools.
func TestJWTTable(t *testing.T) {
	needGatewayBin(t)
	nodeBinPath := node(t)
	everything := serverEverythingScript(t)

	const (
		issuer   = "https://issuer.e2e.mcpgw.test"
		audience = "mcpgw-e2e"
		secret   = "e2e-hs256-secret-0123456789abcdef-0123456789"
	)
	rsKey := newRSAKey(t)
	otherRSKey := newRSAKey(t)
	pubPEM := publicPEM(t, rsKey)
	stateDir := t.TempDir()
	pubFile := filepath.Join(stateDir, "jwt-rs256.pub")
	if err := os.WriteFile(pubFile, pubPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, `
state_dir: `+yamlQuote(stateDir)+`
log: {level: info, format: text}
auth:
  mode: jwt
  jwt:
    issuer: `+issuer+`
    audience: `+audience+`
    keys:
      - {alg: HS256, secret: `+yamlQuote(secret)+`}
      - {alg: RS256, public_key_file: `+yamlQuote(pubFile)+`}
servers:
  everything:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(everything)+`]
agents:
  a1: {servers: [everything]}
  a2: {servers: [everything]}
`)
	now := time.Now()
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{
			"iss": issuer, "aud": audience, "sub": "a1",
			"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
		}
		if edit != nil {
			edit(c)
		}
		return c
	}
	hs := func(c jwt.MapClaims) string { return signJWT(t, jwt.SigningMethodHS256, []byte(secret), "", c) }
	rs := func(c jwt.MapClaims) string { return signJWT(t, jwt.SigningMethodRS256, rsKey, "", c) }
	noneTok, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}

	bad := []struct{ name, why, token string }{
		{"expired (HS256)", "expired", hs(claims(func(c jwt.MapClaims) {
			c["iat"], c["nbf"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-2*time.Hour).Unix(), now.Add(-10*time.Minute).Unix()
		}))},
		{"expired (RS256)", "expired", rs(claims(func(c jwt.MapClaims) {
			c["iat"], c["nbf"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-2*time.Hour).Unix(), now.Add(-10*time.Minute).Unix()
		}))},
		{"not yet valid", "not valid yet", hs(claims(func(c jwt.MapClaims) { c["iat"], c["nbf"] = now.Unix(), now.Add(10*time.Minute).Unix() }))},
		{"no exp", "exp", hs(claims(func(c jwt.MapClaims) { delete(c, "exp") }))},
		{"wrong issuer", "issuer", rs(claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }))},
		{"no issuer", "issuer", hs(claims(func(c jwt.MapClaims) { delete(c, "iss") }))},
		{"wrong audience", "audience", hs(claims(func(c jwt.MapClaims) { c["aud"] = "someone-else" }))},
		{"alg none", "algorithm not allowed", noneTok},
		{"alg switched RS256→HS256 with the public PEM as secret", "signature invalid", signJWT(t, jwt.SigningMethodHS256, pubPEM, "", claims(nil))},
		{"wrong RSA key", "signature invalid", signJWT(t, jwt.SigningMethodRS256, otherRSKey, "", claims(nil))},
		{"wrong HMAC secret", "signature invalid", signJWT(t, jwt.SigningMethodHS256, []byte(secret+"-not"), "", claims(nil))},
		{"RS384 (no key of that alg)", "no key for alg RS384", signJWT(t, jwt.SigningMethodRS384, rsKey, "", claims(nil))},
		{"unknown subject", "unknown agent", rs(claims(func(c jwt.MapClaims) { c["sub"] = "ghost-agent" }))},
		{"garbage", "malformed", "not.a.jwt"},
		{"empty bearer", "", ""},
	}
	for _, b := range bad {
		a := rawInitialize(t, g.URL, bearer(b.token))
		expect401(t, b.name, a)
		// The refusal says why, in the body and the challenge's error_description.
		if wa := a.Header.Get("WWW-Authenticate"); b.why != "" && (!strings.Contains(wa, b.why) || !strings.Contains(string(a.Body), b.why)) {
			t.Errorf("%s: refusal does not say %q: %s", b.name, b.why, a)
		}
		if b.name == "alg none" {
			t.Logf("alg none refused: %s", a)
		}
	}
	expect401(t, "no Authorization header", rawInitialize(t, g.URL, nil))
	expect401(t, "Basic auth", rawInitialize(t, g.URL, map[string]string{"Authorization": "Basic YTE6cGFzcw=="}))

	// Valid tokens work end to end: HS256 and RS256 by hand, RS256 through the TS client.
	endToEnd(t, "HS256", g.URL, bearer(hs(claims(nil))))
	all := endToEnd(t, "RS256", g.URL, bearer(rs(claims(nil))))
	if len(all) < 5 {
		t.Errorf("a1 sees only %v", all)
	}
	rep := runAggregateClient(t, g.URL, []Step{
		{"op": "call", "name": "everything__echo", "args": map[string]any{"message": "ts over jwt"}},
	}, ClientOptions{Headers: []string{"Authorization: Bearer " + rs(claims(nil))}, Timeout: 60 * time.Second})
	if !rep.OK || len(rep.Results) != 1 || !rep.Results[0].OK || !strings.Contains(string(rep.Results[0].Result), "ts over jwt") {
		t.Errorf("TS client with an RS256 token: ok=%v error=%+v results=%+v", rep.OK, rep.Error, rep.Results)
	}

	// Within the default clock skew (30 s): just expired, or valid in a few seconds.
	for name, c := range map[string]jwt.MapClaims{
		"expired 5 s ago":      claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-5 * time.Second).Unix() }),
		"valid in 5 s (nbf)":   claims(func(c jwt.MapClaims) { c["iat"], c["nbf"] = now.Unix(), now.Add(5*time.Second).Unix() }),
		"expired 2 min ago":    claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-2 * time.Minute).Unix() }),
		"valid in 2 min (nbf)": claims(func(c jwt.MapClaims) { c["iat"], c["nbf"] = now.Unix(), now.Add(2*time.Minute).Unix() }),
	} {
		a := rawInitialize(t, g.URL, bearer(hs(c)))
		if strings.Contains(name, "5 s") && a.Status != http.StatusOK {
			t.Errorf("%s (inside the 30 s clock skew): %s, want 200", name, a)
		}
		if strings.Contains(name, "2 min") {
			expect401(t, name, a)
		}
	}

	// A valid token with X-Agent-ID naming another agent: 403; naming its own agent: fine.
	a := rawInitialize(t, g.URL, map[string]string{"Authorization": "Bearer " + rs(claims(nil)), "X-Agent-ID": "a2"})
	if a.Status != http.StatusForbidden || a.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a1's token with X-Agent-ID a2: %s, want 403", a)
	}
	if a := rawInitialize(t, g.URL, map[string]string{"Authorization": "Bearer " + rs(claims(nil)), "X-Agent-ID": "a1"}); a.Status != http.StatusOK {
		t.Errorf("a1's token with X-Agent-ID a1: %s, want 200", a)
	}

	// The mcpgw claim narrows the tools: only everything__echo, the rest is unknown.
	narrow := hs(claims(func(c jwt.MapClaims) { c["mcpgw"] = map[string]any{"tools": []string{"everything__echo"}} }))
	ns := openRawSession(t, g.URL, bearer(narrow))
	if got := ns.tools(t); !slices.Equal(got, []string{"everything__echo"}) {
		t.Errorf("narrowed token lists %v, want [everything__echo]", got)
	}
	if r := ns.callTool(t, "everything__echo", map[string]any{"message": "narrow"}); r.Reply == nil || r.Reply.Error != nil {
		t.Errorf("narrowed token calling echo: %s", r)
	}
	if r := ns.callTool(t, "everything__get-sum", map[string]any{"a": 1, "b": 2}); r.Reply == nil || r.Reply.Error == nil || r.Reply.Error.Code != -32602 {
		t.Errorf("narrowed token calling get-sum: %s, want -32602", r)
	}

	// A hidden tool answers exactly like a missing one.
	hid := ns.callTool(t, "everything__get-sum", map[string]any{"a": 1, "b": 2})
	miss := ns.callTool(t, "everything__no-such-tool", map[string]any{"a": 1, "b": 2})
	if hid.Reply == nil || miss.Reply == nil || hid.Reply.Error == nil || miss.Reply.Error == nil ||
		strings.ReplaceAll(hid.Reply.Error.Message, "everything__get-sum", "X") != strings.ReplaceAll(miss.Reply.Error.Message, "everything__no-such-tool", "X") ||
		string(hid.Reply.Error.Data) != string(miss.Reply.Error.Data) || hid.Status != miss.Status {
		t.Errorf("hidden and missing tools answer differently:\nhidden:  %s\nmissing: %s", hid, miss)
	}

	// `mcpgw token issue` mints a token the running gateway accepts.
	out, errOut, code := runMcpgw(t, 30*time.Second, "token", "issue", "--agent", "a1", "--config", g.Config)
	if code != 0 {
		t.Fatalf("mcpgw token issue: exit %d: %s", code, errOut)
	}
	issued := strings.TrimSpace(out)
	parsed, _, err := jwt.NewParser().ParseUnverified(issued, jwt.MapClaims{})
	if err != nil {
		t.Fatalf("mcpgw token issue printed %q: %v", issued, err)
	}
	pc := parsed.Claims.(jwt.MapClaims)
	if parsed.Method.Alg() != "HS256" || pc["sub"] != "a1" || pc["iss"] != issuer || pc["aud"] != audience || pc["exp"] == nil {
		t.Errorf("issued token: alg %s claims %v", parsed.Method.Alg(), pc)
	}
	endToEnd(t, "issued", g.URL, bearer(issued))
	if _, errOut, code := runMcpgw(t, 30*time.Second, "token", "issue", "--agent", "ghost-agent", "--config", g.Config); code == 0 {
		t.Errorf("mcpgw token issue for an unknown agent succeeded")
	} else if !strings.Contains(errOut, "ghost-agent") {
		t.Errorf("mcpgw token issue for an unknown agent: %q does not name it", errOut)
	}
}

// TestAPIKey: mode api_key; `mcpgw token create-key` run while the gateway runs prints a
// key the gateway accepts without a restart; a wrong key is 401; the key file holds only
// hashes.
func TestAPIKey(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	staticKey, staticHash := auth.NewAPIKey()
	staticLine := "    - {agent: a1, sha256: " + staticHash + "}\n"
	g := startGateway(t, `
log: {level: info, format: text}
auth:
  mode: api_key
  api_keys:
`+staticLine+`servers:
  everything: {type: stdio, command: {{everything_server}}}
agents:
  a1: {servers: [everything]}
`)
	expect401(t, "no key", rawInitialize(t, g.URL, nil))
	expect401(t, "a key before any exists", rawInitialize(t, g.URL, bearer("mcpgw_not-a-real-key")))

	out, errOut, code := runMcpgw(t, 30*time.Second, "token", "create-key", "--agent", "a1", "--config", g.Config)
	if code != 0 {
		t.Fatalf("mcpgw token create-key: exit %d: %s", code, errOut)
	}
	key := strings.TrimSpace(out)
	if !strings.HasPrefix(key, "mcpgw_") || len(key) < 40 || strings.ContainsAny(key, " \n") {
		t.Fatalf("create-key printed %q (stderr %q)", key, errOut)
	}
	created := time.Now()
	// The running gateway looks at the key file at most once a second.
	var last httpAnswer
	desc, ok := waitFor(10*time.Second, func() (bool, string) {
		last = rawInitialize(t, g.URL, bearer(key))
		return last.Status == http.StatusOK, last.String()
	})
	if !ok {
		t.Fatalf("the new key was not accepted within 10 s: %s", desc)
	}
	t.Logf("new key accepted %s after create-key", time.Since(created).Round(time.Millisecond))
	if g.Exited() {
		t.Fatalf("the gateway exited")
	}
	names := endToEnd2(t, g.URL, bearer(key))
	if len(names) == 0 || withPrefix(names, "everything__") != len(names) {
		t.Errorf("a1's tools with the new key: %v", names)
	}

	// The admin API is not open in mode api_key without an admin credential: nothing is
	// 401, an agent's valid key is 403.
	for _, c := range []struct {
		h    map[string]string
		want int
	}{{nil, http.StatusUnauthorized}, {bearer(key), http.StatusForbidden}} {
		if a := rawRequest(t, http.MethodGet, g.Base+"/api/tasks", c.h, ""); a.Status != c.want {
			t.Errorf("admin API in mode api_key (with %v): %s, want %d", redactHeaders(c.h), a, c.want)
		}
	}

	expect401(t, "wrong key", rawInitialize(t, g.URL, bearer(key+"x")))
	expect401(t, "key of another shape", rawInitialize(t, g.URL, bearer(strings.ToUpper(key))))

	// The key file: hashes only, 0600.
	kf := filepath.Join(g.StateDir, "api_keys.jsonl")
	st, err := os.Stat(kf)
	if err != nil {
		t.Fatalf("key file: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(kf)
	secretPart := strings.TrimPrefix(key, "mcpgw_")
	if strings.Contains(string(data), secretPart) || strings.Contains(string(data), secretPart[:16]) {
		t.Errorf("key file holds key material: %s", data)
	}
	if raw, err := base64.RawURLEncoding.DecodeString(secretPart); err == nil {
		if strings.Contains(string(data), fmt.Sprintf("%x", raw)) || strings.Contains(string(data), base64.StdEncoding.EncodeToString(raw)) {
			t.Errorf("key file holds the key's bytes in another encoding: %s", data)
		}
	}
	var rec struct {
		Agent  string `json:"agent"`
		SHA256 string `json:"sha256"`
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rec) != nil || rec.Agent != "a1" || len(rec.SHA256) != 64 {
		t.Errorf("key file: want one record for a1 with a sha256, got %s", data)
	}
	// A key from the config works; removing it from the file revokes it at the next
	// request, also on a session it opened. The key file's keys stay.
	static := openRawSession(t, g.URL, bearer(staticKey))
	static.tools(t)
	cfg, err := os.ReadFile(g.Config)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), staticLine) {
		t.Fatalf("config lacks %q", staticLine)
	}
	writeFileAtomic(t, g.Config, []byte(strings.Replace(string(cfg), "  api_keys:\n"+staticLine, "", 1)))
	var lastList httpAnswer
	desc, ok = waitFor(15*time.Second, func() (bool, string) {
		lastList = static.request(t, nil, "tools/list", map[string]any{})
		return lastList.Status == http.StatusUnauthorized, lastList.String()
	})
	if !ok {
		t.Errorf("the key removed from the config still works on its session after 15 s: %s", desc)
	} else if lastList.Header.Get("WWW-Authenticate") == "" {
		t.Errorf("revoked key: 401 without WWW-Authenticate")
	}
	expect401(t, "the removed config key", rawInitialize(t, g.URL, bearer(staticKey)))
	if a := rawInitialize(t, g.URL, bearer(key)); a.Status != http.StatusOK {
		t.Errorf("the key file's key after the reload: %s", a)
	}

	if _, errOut, code := runMcpgw(t, 30*time.Second, "token", "create-key", "--agent", "nobody", "--config", g.Config); code == 0 {
		t.Errorf("create-key for an unknown agent succeeded")
	} else if !strings.Contains(errOut, "nobody") {
		t.Errorf("create-key for an unknown agent: %q does not name it", errOut)
	}
}

// endToEnd2 initializes, lists and calls everything__test_simple_text (the go-sdk
// everything-server).
func endToEnd2(t *testing.T, url string, hdr map[string]string) []string {
	t.Helper()
	s := openRawSession(t, url, hdr)
	names := s.tools(t)
	r := s.callTool(t, "everything__test_simple_text", nil)
	if r.Status != http.StatusOK || r.Reply == nil || r.Reply.Error != nil {
		t.Fatalf("tools/call: %s", r)
	}
	if text, isErr := toolResultText(r.Reply.Result); isErr || !strings.Contains(text, "simple text") {
		t.Errorf("test_simple_text answered %q (isError %v)", text, isErr)
	}
	return names
}

// jwksServer serves a JWK Set on loopback; set swaps the keys.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	body    []byte
	fetches atomic.Int64
}

func newJWKSServer(t *testing.T) *jwksServer {
	t.Helper()
	j := &jwksServer{}
	j.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks.json" {
			http.NotFound(w, r)
			return
		}
		j.fetches.Add(1)
		j.mu.Lock()
		b := j.body
		j.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(j.Close)
	return j
}

func (j *jwksServer) set(t *testing.T, kid string, k *rsa.PrivateKey) {
	t.Helper()
	e := big.NewInt(int64(k.PublicKey.E)).Bytes()
	doc := map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig",
		"n": base64.RawURLEncoding.EncodeToString(k.PublicKey.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(e),
	}}}
	b, _ := json.Marshal(doc)
	j.mu.Lock()
	j.body = b
	j.mu.Unlock()
}

// TestOAuthResourceServer: mode oauth against a JWKS the test serves. The RFC 9728
// document is served at both well-known paths; a request without a token is 401 with the
// resource_metadata challenge; a token for this resource works; after the issuer rotates
// its key, a token signed with the new key works without a restart; a token for another
// audience is 401.
func TestOAuthResourceServer(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	jw := newJWKSServer(t)
	key1, key2 := newRSAKey(t), newRSAKey(t)
	jw.set(t, "k1", key1)
	asURL := jw.URL // the "authorization server" the metadata names
	g := startGateway(t, `
log: {level: info, format: text}
auth:
  mode: oauth
  oauth:
    jwks_url: `+jw.URL+`/jwks.json
    authorization_servers: [`+asURL+`]
    resource: http://127.0.0.1:{{port}}/mcp
    scopes: [mcp:tools, mcp:read]
servers:
  everything: {type: stdio, command: {{everything_server}}}
agents:
  a1: {servers: [everything]}
`)
	resource := g.URL
	metaURL := g.Base + "/.well-known/oauth-protected-resource/mcp"

	// RFC 9728 metadata at both paths.
	for _, u := range []string{metaURL, g.Base + "/.well-known/oauth-protected-resource"} {
		resp, err := rawHTTP.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			t.Errorf("GET %s: HTTP %d, decode %v", u, resp.StatusCode, err)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("GET %s: Content-Type %q", u, ct)
		}
		if doc.Resource != resource || !slices.Equal(doc.AuthorizationServers, []string{asURL}) ||
			!slices.Equal(doc.ScopesSupported, []string{"mcp:tools", "mcp:read"}) {
			t.Errorf("GET %s: %+v, want resource %s, authorization_servers [%s], scopes [mcp:tools mcp:read]", u, doc, resource, asURL)
		}
	}

	// No token: 401 with the resource metadata challenge.
	a := rawInitialize(t, g.URL, nil)
	expect401(t, "no token", a)
	wa := a.Header.Get("WWW-Authenticate")
	if !strings.Contains(wa, `resource_metadata="`+metaURL+`"`) || !strings.Contains(wa, `scope="mcp:tools mcp:read"`) {
		t.Errorf("WWW-Authenticate %q, want resource_metadata=%q and scope=\"mcp:tools mcp:read\"", wa, metaURL)
	}

	now := time.Now()
	tok := func(k *rsa.PrivateKey, kid, aud string) string {
		return signJWT(t, jwt.SigningMethodRS256, k, kid, jwt.MapClaims{
			"iss": asURL, "sub": "a1", "aud": aud, "scope": "mcp:tools",
			"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
		})
	}
	// A valid token works end to end.
	names := endToEnd2(t, g.URL, bearer(tok(key1, "k1", resource)))
	if len(names) == 0 {
		t.Fatalf("no tools")
	}
	fetchedAt := time.Now()

	// Wrong audience, unknown signer, invalid: 401, still with the challenge.
	for _, c := range []struct{ name, token string }{
		{"wrong audience", tok(key1, "k1", "http://127.0.0.1:1/other")},
		{"signed by a key not in the JWKS", tok(key2, "k1", resource)},
		{"HS256 token", signJWT(t, jwt.SigningMethodHS256, []byte("0123456789abcdef0123456789abcdef"), "k1", jwt.MapClaims{
			"sub": "a1", "aud": resource, "exp": now.Add(time.Hour).Unix()})},
	} {
		a := rawInitialize(t, g.URL, bearer(c.token))
		expect401(t, c.name, a)
		if wa := a.Header.Get("WWW-Authenticate"); !strings.Contains(wa, `resource_metadata="`+metaURL+`"`) {
			t.Errorf("%s: WWW-Authenticate %q lacks resource_metadata", c.name, wa)
		}
	}

	// The issuer rotates to k2. A token with the new kid makes the gateway fetch the JWKS
	// again (at most every 10 s), no restart.
	jw.set(t, "k2", key2)
	before := jw.fetches.Load()
	rotated := tok(key2, "k2", resource)
	var lastA httpAnswer
	desc, ok := waitFor(20*time.Second, func() (bool, string) {
		lastA = rawInitialize(t, g.URL, bearer(rotated))
		return lastA.Status == http.StatusOK, lastA.String()
	})
	if !ok {
		t.Fatalf("a token signed with the rotated key was not accepted within 20 s: %s (JWKS fetches %d)", desc, jw.fetches.Load())
	}
	t.Logf("rotated key accepted %s after the first fetch; JWKS fetched %d times (%d since rotation)",
		time.Since(fetchedAt).Round(time.Millisecond), jw.fetches.Load(), jw.fetches.Load()-before)
	endToEnd2(t, g.URL, bearer(rotated))
	if g.Exited() {
		t.Fatal("the gateway exited")
	}
	// The old key left the JWKS: its tokens are refused now.
	expect401(t, "token of the retired key", rawInitialize(t, g.URL, bearer(tok(key1, "k1", resource))))
	expect401(t, "rotated key, wrong audience", rawInitialize(t, g.URL, bearer(tok(key2, "k2", "https://elsewhere.example/mcp"))))
}

// TestJWTNarrowedTokenOnBroadSession: a token whose mcpgw claim narrows the tools is
// another credential than a broad token of the same subject, so it may not continue the
// broad token's session (docs/auth.md: "a session id presented by another principal
// (another agent or credential)" is 403); whatever the status, it must never see or call
// more than its own tools.
func TestJWTNarrowedTokenOnBroadSession(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	const secret = "e2e-hs256-secret-0123456789abcdef-0123456789"
	g := startGateway(t, `
log: {level: info, format: text}
auth:
  mode: jwt
  jwt:
    audience: mcpgw-e2e
    keys:
      - {alg: HS256, secret: `+yamlQuote(secret)+`}
servers:
  everything: {type: stdio, command: {{everything_server}}}
agents:
  a1: {servers: [everything]}
`)
	now := time.Now()
	tok := func(narrow map[string]any) string {
		c := jwt.MapClaims{"sub": "a1", "aud": "mcpgw-e2e", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		if narrow != nil {
			c["mcpgw"] = narrow
		}
		return signJWT(t, jwt.SigningMethodHS256, []byte(secret), "", c)
	}
	const onlyTool = "everything__test_simple_text"
	narrow := tok(map[string]any{"tools": []string{onlyTool}})
	// On its own session the narrowed token sees one tool.
	ns := openRawSession(t, g.URL, bearer(narrow))
	if got := ns.tools(t); !slices.Equal(got, []string{onlyTool}) {
		t.Fatalf("narrowed session lists %v", got)
	}
	broad := openRawSession(t, g.URL, bearer(tok(nil)))
	all := broad.tools(t)
	if len(all) < 2 {
		t.Fatalf("broad session lists %v", all)
	}
	a := broad.request(t, bearer(narrow), "tools/list", map[string]any{})
	if a.Status == http.StatusForbidden {
		return
	}
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if a.Reply != nil && a.Reply.Result != nil {
		_ = json.Unmarshal(a.Reply.Result, &res)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if a.Status != http.StatusOK || len(names) > 1 || (len(names) == 1 && names[0] != onlyTool) {
		t.Errorf("a token narrowed to [%s] on a broad session of the same subject: HTTP %d listing %d tools; want 403 (or at most its one tool)",
			onlyTool, a.Status, len(names))
	}
	if r := broad.request(t, bearer(narrow), "tools/call", map[string]any{"name": "everything__test_error_handling", "arguments": map[string]any{}}); r.Status != http.StatusForbidden && (r.Reply == nil || r.Reply.Error == nil) {
		t.Errorf("the narrowed token called everything__test_error_handling, outside its tools, on the broad session: %s", r)
	}
}
