package oauth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFullFlow drives one complete flow against the fakes: 401 challenge, discovery,
// dynamic registration, authorization, callback, code exchange, refresh.
func TestFullFlow(t *testing.T) {
	for _, method := range []string{AuthBasic, AuthPost, AuthNone} {
		t.Run(method, func(t *testing.T) {
			as := newFakeAS(t, "")
			as.set("token_endpoint_auth_methods_supported", []string{method})
			as.set("scopes_supported", []string{"mcp:basic", OfflineAccess})
			as.set("authorization_response_iss_parameter_supported", true)
			rs := newFakeRS(t, "/.well-known/oauth-protected-resource/mcp", as.issuer())
			serverURL := rs.srv.URL + "/mcp"
			h := http.Header{"Www-Authenticate": {`Bearer error="invalid_token", scope="mcp:basic", resource_metadata="` + rs.srv.URL + rs.prmPath + `"`}}
			ch := ParseChallenge(h)
			c := testClient()
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			c.Now = func() time.Time { return now }

			d, err := c.Discover(ctxT(t), serverURL, ch)
			if err != nil {
				t.Fatal(err)
			}
			cl, err := c.Register(ctxT(t), d.Server, RegisterOptions{RedirectURIs: []string{"http://127.0.0.1:1/cb"}})
			if err != nil {
				t.Fatal(err)
			}
			if method == AuthNone {
				cl.Secret = ""
			}
			cl.AuthMethod = method
			scopes := SelectScopes(ch, d.ResourceMetadata, d.Server, true)
			authURL, p, err := NewAuthorization(AuthRequest{Server: d.Server, Client: cl, RedirectURI: "http://127.0.0.1:1/cb",
				Resource: d.Resource, Scopes: scopes})
			if err != nil {
				t.Fatal(err)
			}
			code, err := p.Callback(approve(t, authURL))
			if err != nil {
				t.Fatal(err)
			}
			if q := as.authorized[0]; q.Get("scope") != "mcp:basic offline_access" || q.Get("resource") != serverURL {
				t.Errorf("authorize query %v", q)
			}
			as.tokenAnswer = func(form url.Values, auth string) (int, any) {
				return 200, map[string]any{"access_token": "at-1", "token_type": "Bearer", "expires_in": 60, "refresh_token": "rt-1"}
			}
			tok, err := c.Exchange(ctxT(t), p, cl, code)
			if err != nil {
				t.Fatal(err)
			}
			form, auth := as.lastToken()
			checkForm(t, form, map[string]string{"grant_type": "authorization_code", "code": "code-1",
				"code_verifier": p.Verifier, "redirect_uri": "http://127.0.0.1:1/cb", "resource": serverURL})
			checkClientAuth(t, method, form, auth, cl)
			if tok.AccessToken != "at-1" || tok.RefreshToken != "rt-1" || !tok.Expiry.Equal(now.Add(time.Minute)) ||
				!slices.Equal(tok.Scopes, scopes) {
				t.Errorf("token %#v (%v)", tok, tok.Expiry)
			}
			if !tok.Fresh(now, 10*time.Second) || tok.Fresh(now.Add(55*time.Second), 10*time.Second) {
				t.Error("Fresh does not follow the expiry")
			}

			// Refresh: a rotated refresh token comes back; without one the old is kept.
			as.tokenAnswer = func(url.Values, string) (int, any) {
				return 200, map[string]any{"access_token": "at-2", "token_type": "bearer", "refresh_token": "rt-2", "scope": "mcp:basic"}
			}
			tok, err = c.Refresh(ctxT(t), d.Server, cl, tok.RefreshToken, d.Resource, nil)
			if err != nil || tok.AccessToken != "at-2" || tok.RefreshToken != "rt-2" || !slices.Equal(tok.Scopes, []string{"mcp:basic"}) {
				t.Fatalf("refresh %#v %v", tok, err)
			}
			form, auth = as.lastToken()
			checkForm(t, form, map[string]string{"grant_type": "refresh_token", "refresh_token": "rt-1", "resource": serverURL})
			checkClientAuth(t, method, form, auth, cl)
			as.tokenAnswer = func(url.Values, string) (int, any) {
				return 200, map[string]any{"access_token": "at-3", "token_type": "Bearer"}
			}
			tok, err = c.Refresh(ctxT(t), d.Server, cl, tok.RefreshToken, d.Resource, nil)
			if err != nil || tok.RefreshToken != "rt-2" {
				t.Fatalf("refresh without rotation %#v %v", tok, err)
			}
		})
	}
}

func checkForm(t *testing.T, form url.Values, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if form.Get(k) != v {
			t.Errorf("form %s = %q, want %q", k, form.Get(k), v)
		}
	}
}

func checkClientAuth(t *testing.T, method string, form url.Values, auth string, cl ClientInfo) {
	t.Helper()
	switch method {
	case AuthBasic:
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte(cl.ID+":"+cl.Secret))
		if auth != want || form.Has("client_secret") {
			t.Errorf("basic: header %q form %v", auth, form)
		}
	case AuthPost:
		if auth != "" || form.Get("client_id") != cl.ID || form.Get("client_secret") != cl.Secret {
			t.Errorf("post: header %q form %v", auth, form)
		}
	case AuthNone:
		if auth != "" || form.Get("client_id") != cl.ID || form.Has("client_secret") {
			t.Errorf("none: header %q form %v", auth, form)
		}
	}
}

func TestBasicAuthEncodesCredentials(t *testing.T) {
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	cl := ClientInfo{ID: "id:with%colon", Secret: "s e:c", AuthMethod: AuthBasic}
	if _, err := testClient().ClientCredentials(ctxT(t), md, cl, "", nil); err != nil {
		t.Fatal(err)
	}
	_, auth := as.lastToken()
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(auth, "Basic "))
	if string(raw) != "id%3Awith%25colon:s+e%3Ac" {
		t.Errorf("basic credentials %q: each half must be form-encoded (RFC 6749 §2.3.1)", raw)
	}
}

func TestRefreshInvalidGrantMeansReauthorize(t *testing.T) {
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	as.tokenAnswer = func(url.Values, string) (int, any) {
		return 400, map[string]any{"error": "invalid_grant", "error_description": "refresh token rt-secret-1 expired"}
	}
	cl := ClientInfo{ID: "c", Secret: "client-secret-1", AuthMethod: AuthPost}
	_, err := testClient().Refresh(ctxT(t), md, cl, "rt-secret-1", "https://h/mcp", nil)
	var te *TokenError
	if !errors.As(err, &te) || te.Code != "invalid_grant" || !errors.Is(err, ErrGrantRevoked) || !NeedsUser(err) {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(err.Error(), "rt-secret-1") {
		t.Errorf("error repeats the refresh token: %v", err)
	}
	// invalid_grant to a code exchange is not "the stored grant is gone".
	_, err = testClient().Exchange(ctxT(t), Pending{TokenEndpoint: md.TokenEndpoint, Issuer: md.Issuer}, cl, "code")
	if errors.Is(err, ErrGrantRevoked) || !errors.As(err, &te) {
		t.Errorf("code exchange invalid_grant: %v", err)
	}
}

func TestTokenErrorsNeverCarrySecrets(t *testing.T) {
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	as.tokenAnswer = func(form url.Values, _ string) (int, any) {
		all := fmt.Sprint(form)
		return 401, map[string]any{"error": "invalid_client", "error_description": "I got " + all}
	}
	cl := ClientInfo{ID: "c", Secret: "client-secret-1", AuthMethod: AuthPost}
	p := Pending{TokenEndpoint: md.TokenEndpoint, Verifier: "verifier-secret-1", Issuer: md.Issuer}
	_, err := testClient().Exchange(ctxT(t), p, cl, "code-secret-1")
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"client-secret-1", "verifier-secret-1", "code-secret-1"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error carries %s: %v", s, err)
		}
	}
	if len(err.Error()) > 400 {
		t.Errorf("error not cut short: %d bytes", len(err.Error()))
	}
}

func TestTokenAnswerValidation(t *testing.T) {
	c := testClient()
	for name, body := range map[string]string{
		"no access token": `{"token_type":"Bearer"}`,
		"no token type":   `{"access_token":"a"}`,
		"duplicate":       `{"access_token":"a","access_token":"b","token_type":"Bearer"}`,
		"expires string":  `{"access_token":"a","token_type":"Bearer","expires_in":"soon"}`,
		"not json":        `access_token=a&token_type=bearer`,
	} {
		if tok, err := c.readToken([]byte(body), nil); err == nil {
			t.Errorf("%s: accepted %v", name, tok)
		}
	}
	tok, err := c.readToken([]byte(`{"access_token":"a","token_type":"Bearer","expires_in":1e300}`), nil)
	if err != nil || tok.Expiry.Before(time.Now().Add(365*24*time.Hour)) {
		t.Errorf("huge expires_in: %v %v", tok.Expiry, err)
	}
}

func TestTokenNeverPrintsSecrets(t *testing.T) {
	tok := Token{AccessToken: "access-secret", RefreshToken: "refresh-secret", TokenType: "Bearer", Scopes: []string{"a"}}
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%+v|%#v|%s", tok, tok, tok), tok.LogValue().String(),
		fmt.Sprint([]Token{tok}), fmt.Sprint(&tok)} {
		if strings.Contains(s, "-secret") {
			t.Errorf("printed: %s", s)
		}
	}
	if tok.AuthorizationHeader() != "Bearer access-secret" {
		t.Errorf("header %q", tok.AuthorizationHeader())
	}
}

func TestTokenEndpointSlow(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // the request's context ends only once its body is read: wait for the test
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	md := &ServerMetadata{Issuer: srv.URL, TokenEndpoint: srv.URL + "/token"}
	_, err := testClient().ClientCredentials(ctx, md, ClientInfo{ID: "c", AuthMethod: AuthNone}, "", nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v", err)
	}
}

func TestCredentialsStayWithTheirServer(t *testing.T) {
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	old := ClientInfo{Issuer: "https://as1.example.com", ID: "as1-client", AuthMethod: AuthNone}
	var me *MismatchError
	if _, err := testClient().Refresh(ctxT(t), md, old, "rt", "", nil); !errors.As(err, &me) {
		t.Errorf("refresh with another server's client: %v", err)
	}
	if _, err := testClient().Exchange(ctxT(t), Pending{Issuer: md.Issuer, TokenEndpoint: md.TokenEndpoint}, old, "c"); !errors.As(err, &me) {
		t.Errorf("exchange with another server's client: %v", err)
	}
	if f, _ := as.lastToken(); f != nil {
		t.Errorf("the token endpoint saw %v", f)
	}
}

func TestClientCredentialsAndJWTBearer(t *testing.T) {
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	cl := ClientInfo{ID: "conformance-test-client", Secret: "s", AuthMethod: AuthBasic}
	tok, err := testClient().ClientCredentials(ctxT(t), md, cl, "https://h/mcp", []string{"x"})
	if err != nil || !slices.Equal(tok.Scopes, []string{"x"}) {
		t.Fatalf("%v %v", tok, err)
	}
	form, auth := as.lastToken()
	checkForm(t, form, map[string]string{"grant_type": GrantClientCredentials, "resource": "https://h/mcp", "scope": "x"})
	if !strings.HasPrefix(auth, "Basic ") {
		t.Errorf("auth %q", auth)
	}
	if _, err := testClient().JWTBearer(ctxT(t), md, cl, "assertion-jwt", "https://h/mcp", nil); err != nil {
		t.Fatal(err)
	}
	form, _ = as.lastToken()
	checkForm(t, form, map[string]string{"grant_type": GrantJWTBearer, "assertion": "assertion-jwt", "resource": "https://h/mcp"})
}

func TestRequestIDJAG(t *testing.T) {
	idp := newFakeAS(t, "")
	idp.tokenAnswer = func(form url.Values, _ string) (int, any) {
		return 200, map[string]any{"access_token": "the-jag", "issued_token_type": TokenTypeIDJAG, "token_type": "N_A"}
	}
	tok, err := testClient().RequestIDJAG(ctxT(t), idp.issuer()+"/token", ClientInfo{ID: "idp-client"},
		"the-id-token", "https://as.example.com", "https://h/mcp", nil)
	if err != nil || tok.AccessToken != "the-jag" {
		t.Fatalf("%v %v", tok, err)
	}
	form, _ := idp.lastToken()
	checkForm(t, form, map[string]string{
		"grant_type": GrantTokenExchange, "subject_token": "the-id-token", "subject_token_type": TokenTypeIDToken,
		"requested_token_type": TokenTypeIDJAG, "audience": "https://as.example.com", "resource": "https://h/mcp",
		"client_id": "idp-client",
	})
	idp.tokenAnswer = func(url.Values, string) (int, any) {
		return 200, map[string]any{"access_token": "x", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer"}
	}
	if _, err := testClient().RequestIDJAG(ctxT(t), idp.issuer()+"/token", ClientInfo{}, "t", "a", "r", nil); err == nil {
		t.Error("an access token accepted as an ID-JAG")
	}
}
