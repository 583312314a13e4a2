package gatewaytest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FakeOAuth is an OAuth-protected MCP upstream and its authorization server on one
// loopback listener: protected resource and authorization server metadata, dynamic
// registration, an authorization endpoint that approves at once (no person) once the
// request is right (S256 PKCE, the resource, the registered client), and a token endpoint
// that checks PKCE and rotates refresh tokens. Each authorization code starts a grant (g1,
// g2, ...) that its refreshes keep, and revoke ends one as the authorization server would.
// The MCP server (the Go SDK's) takes only the access tokens of live grants; its tools are
// accounts (answers "acme") and whoami (says whose grant the call carried: "grant=g1").
// It remembers every token it issued, so a test can look for them where they must not be.
//
// Access tokens start "at-" and refresh tokens "rt-", then a sequence number and random
// hex, so no token is a prefix of another and a test can also look for any token at all.
type FakeOAuth struct {
	Srv    *httptest.Server
	Mu     sync.Mutex
	seq    int
	codes  map[string]string // code → code_challenge
	grants map[string]string // live access or refresh token → its grant
	nCodes int               // grants started
	Issued []string          // every access and refresh token
	Calls  int               // MCP requests that carried a valid token
}

// fakeGrantHeader carries the grant of a request the fake let through to its MCP server,
// where the whoami tool reads it.
const fakeGrantHeader = "X-Fake-Oauth-Grant"

// NewFakeOAuth starts the fake authorization server and its MCP server; both stop when
// t ends.
func NewFakeOAuth(t *testing.T) *FakeOAuth {
	t.Helper()
	o := &FakeOAuth{codes: map[string]string{}, grants: map[string]string{}}
	sdk := mcp.NewServer(&mcp.Implementation{Name: "crm", Version: "1"}, nil)
	mcp.AddTool(sdk, &mcp.Tool{Name: "accounts", Description: "lists accounts"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "acme"}}}, nil, nil
	})
	mcp.AddTool(sdk, &mcp.Tool{Name: "whoami", Description: "says whose grant the call carried"}, func(_ context.Context, r *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "grant=" + r.Extra.Header.Get(fakeGrantHeader)}}}, nil, nil
	})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdk }, nil)
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		o.Mu.Lock()
		grant := o.grants[tok]
		ok := grant != "" && strings.HasPrefix(tok, "at-")
		if ok {
			o.Calls++
		}
		o.Mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+o.Srv.URL+`/.well-known/oauth-protected-resource/mcp", scope="crm.read"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r.Header.Set(fakeGrantHeader, grant)
		mcpHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": o.Srv.URL + "/mcp", "authorization_servers": []string{o.Srv.URL + "/as"}, "scopes_supported": []string{"crm.read"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server/as", func(w http.ResponseWriter, r *http.Request) {
		iss := o.Srv.URL + "/as"
		writeJSON(w, 200, map[string]any{"issuer": iss, "authorization_endpoint": iss + "/authorize", "token_endpoint": iss + "/token",
			"registration_endpoint": iss + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "scopes_supported": []string{"crm.read", "offline_access"},
			"authorization_response_iss_parameter_supported": true})
	})
	mux.HandleFunc("/as/register", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req)
		writeJSON(w, 201, map[string]any{"client_id": "dyn-client", "token_endpoint_auth_method": "none", "redirect_uris": req["redirect_uris"]})
	})
	mux.HandleFunc("/as/authorize", o.authorize)
	mux.HandleFunc("/as/token", o.token)
	o.Srv = httptest.NewServer(mux)
	t.Cleanup(o.Srv.Close)
	return o
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (o *FakeOAuth) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") != o.Srv.URL+"/mcp" || q.Get("client_id") != "dyn-client" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	o.Mu.Lock()
	o.seq++
	code := fmt.Sprintf("code-%d", o.seq)
	o.codes[code] = q.Get("code_challenge")
	o.Mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	v.Set("iss", o.Srv.URL+"/as")
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token redeems an authorization code (PKCE checked; a new grant) or a refresh token (the
// same grant; the refresh token rotates), and issues a fresh access and refresh token.
func (o *FakeOAuth) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	o.Mu.Lock()
	defer o.Mu.Unlock()
	var grant string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		ch, ok := o.codes[r.PostForm.Get("code")]
		delete(o.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != ch {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		o.nCodes++
		grant = fmt.Sprintf("g%d", o.nCodes)
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		if grant = o.grants[rt]; grant == "" || !strings.HasPrefix(rt, "rt-") {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		delete(o.grants, rt)
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	o.seq++
	at, rt := fmt.Sprintf("at-%d-%s", o.seq, randHex(6)), fmt.Sprintf("rt-%d-%s", o.seq, randHex(6))
	o.grants[at], o.grants[rt] = grant, grant
	o.Issued = append(o.Issued, at, rt)
	writeJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt, "scope": "crm.read offline_access"})
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}

// Revoke makes every token of grant unusable, as an authorization server that revoked it.
func (o *FakeOAuth) Revoke(grant string) {
	o.Mu.Lock()
	defer o.Mu.Unlock()
	for tok, g := range o.grants {
		if g == grant {
			delete(o.grants, tok)
		}
	}
}

// Leaked reports the tokens the fake issued that appear in b.
func (o *FakeOAuth) Leaked(b []byte) []string {
	o.Mu.Lock()
	defer o.Mu.Unlock()
	var out []string
	for _, tok := range o.Issued {
		if strings.Contains(string(b), tok) {
			out = append(out, tok)
		}
	}
	return out
}

// OpenConsent gives consent as the person who asked would: a browser (cookies kept) posts
// the code to the gateway's consent page u, and follows the redirects through the
// authorization server to the gateway's callback, which must say the grant was given.
func OpenConsent(t *testing.T, u, code string) {
	t.Helper()
	resp, err := NewBrowser().PostForm(u, url.Values{"code": {code}})
	if err != nil {
		t.Fatalf("open %s: %v", u, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "may now use") {
		t.Fatalf("consent at %s with code %s: HTTP %d %s", u, code, resp.StatusCode, b)
	}
}

// NewBrowser is an HTTP client that keeps cookies and follows redirects, as a browser.
func NewBrowser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Timeout: 10 * time.Second, Jar: jar}
}

// consentCodeRE finds the confirmation code in what the gateway says with a consent URL.
var consentCodeRE = regexp.MustCompile(`the code ([A-Z2-7]{4}-[A-Z2-7]{4})`)

// ConsentCode is the confirmation code in s, or "".
func ConsentCode(s string) string {
	if m := consentCodeRE.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

// ToolNamed is the name of the first listed tool whose name (the gateway may prefix it)
// ends in suffix, or "".
func ToolNamed(tools []struct{ Name string }, suffix string) string {
	for _, tl := range tools {
		if strings.HasSuffix(tl.Name, suffix) {
			return tl.Name
		}
	}
	return ""
}
