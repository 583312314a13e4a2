package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func discoverFake(t *testing.T, as *fakeAS) *ServerMetadata {
	t.Helper()
	md, err := testClient().DiscoverServer(ctxT(t), as.issuer())
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func TestAuthorizationURL(t *testing.T) {
	as := newFakeAS(t, "/tenant1")
	as.set("authorization_endpoint", as.issuer()+"/authorize?prompt=consent")
	md := discoverFake(t, as)
	cl := ClientInfo{Issuer: md.Issuer, ID: "cid", AuthMethod: AuthNone}
	u, p, err := NewAuthorization(AuthRequest{Server: md, Client: cl, RedirectURI: "http://127.0.0.1:7/cb",
		Resource: "https://h", Scopes: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	pu, _ := url.Parse(u)
	q := pu.Query()
	want := map[string]string{
		"response_type": "code", "client_id": "cid", "redirect_uri": "http://127.0.0.1:7/cb",
		"state": p.State, "code_challenge": CodeChallenge(p.Verifier), "code_challenge_method": "S256",
		"resource": "https://h", "scope": "a b", "prompt": "consent",
	}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, q.Get(k), v)
		}
	}
	if len(p.Verifier) < 43 || len(p.State) < 43 || p.Issuer != md.Issuer || p.TokenEndpoint != md.TokenEndpoint {
		t.Errorf("pending %#v", p)
	}
	_, p2, _ := NewAuthorization(AuthRequest{Server: md, Client: cl, RedirectURI: "http://127.0.0.1:7/cb"})
	if p2.State == p.State || p2.Verifier == p.Verifier {
		t.Error("state or verifier repeated")
	}
	u3, _, _ := NewAuthorization(AuthRequest{Server: md, Client: cl, RedirectURI: "http://127.0.0.1:7/cb"})
	if strings.Contains(u3, "scope=") || strings.Contains(u3, "resource=") {
		t.Errorf("empty scope or resource sent: %s", u3)
	}
}

func TestCodeChallengeRFC7636Vector(t *testing.T) {
	// RFC 7636 Appendix B.
	if got := CodeChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"); got != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Errorf("challenge %q", got)
	}
}

func TestNewAuthorizationRefusals(t *testing.T) {
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	cl := ClientInfo{ID: "cid"}
	noPKCE := *md
	noPKCE.CodeChallengeMethodsSupported = []string{"plain"}
	if _, _, err := NewAuthorization(AuthRequest{Server: &noPKCE, Client: cl, RedirectURI: "x"}); !errors.Is(err, ErrPKCEUnsupported) {
		t.Errorf("plain only: %v", err)
	}
	noPKCE.CodeChallengeMethodsSupported = nil
	if _, _, err := NewAuthorization(AuthRequest{Server: &noPKCE, Client: cl, RedirectURI: "x"}); !errors.Is(err, ErrPKCEUnsupported) {
		t.Errorf("not advertised: %v", err)
	}
	noPKCE.Defaulted = true // 2025-03-26 defaults: nothing to read, proceed with S256
	if _, _, err := NewAuthorization(AuthRequest{Server: &noPKCE, Client: cl, RedirectURI: "x"}); err != nil {
		t.Errorf("defaulted endpoints: %v", err)
	}
	foreign := ClientInfo{Issuer: "https://other-as", ID: "cid"}
	var me *MismatchError
	if _, _, err := NewAuthorization(AuthRequest{Server: md, Client: foreign, RedirectURI: "x"}); !errors.As(err, &me) {
		t.Errorf("another server's client: %v", err)
	}
}

func TestCallbackIssRules(t *testing.T) {
	const issuer = "https://as.example.com"
	base := Pending{State: "st", Verifier: "v", Issuer: issuer}
	cases := []struct {
		name      string
		required  bool
		iss       []string // nil: absent
		wantError bool
	}{
		{"advertised and correct", true, []string{issuer}, false},
		{"not advertised, absent", false, nil, false},
		{"not advertised, correct", false, []string{issuer}, false},
		{"advertised, missing", true, nil, true},
		{"advertised, wrong", true, []string{"https://evil.example.com"}, true},
		{"not advertised, wrong", false, []string{"https://evil.example.com"}, true},
		{"trailing slash is not normalized away", true, []string{issuer + "/"}, true},
		{"case is not folded", false, []string{"https://AS.example.com"}, true},
		{"empty iss is present and wrong", false, []string{""}, true},
		{"repeated", true, []string{issuer, issuer}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			p.IssRequired = tc.required
			q := url.Values{"state": {"st"}, "code": {"the-code"}}
			if tc.iss != nil {
				q["iss"] = tc.iss
			}
			code, err := p.Callback(q)
			if tc.wantError {
				if err == nil || code != "" {
					t.Fatalf("accepted: code %q", code)
				}
				if strings.Contains(err.Error(), "the-code") {
					t.Errorf("error repeats the code: %v", err)
				}
				return
			}
			if err != nil || code != "the-code" {
				t.Fatalf("code %q, err %v", code, err)
			}
		})
	}
}

func TestCallbackStateAndErrors(t *testing.T) {
	p := Pending{State: "st", Issuer: "https://as"}
	if _, err := p.Callback(url.Values{"state": {"other"}, "code": {"c"}}); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("wrong state: %v", err)
	}
	if _, err := p.Callback(url.Values{"code": {"c"}}); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("missing state: %v", err)
	}
	if _, err := (Pending{}).Callback(url.Values{"state": {""}, "code": {"c"}}); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("empty pending state matched: %v", err)
	}
	// An error answer with a wrong state is a forgery, not the server's word.
	if _, err := p.Callback(url.Values{"state": {"x"}, "error": {"access_denied"}}); !errors.Is(err, ErrStateMismatch) {
		t.Errorf("forged error: %v", err)
	}
	_, err := p.Callback(url.Values{"state": {"st"}, "error": {"access_denied"}, "error_description": {"user said no\r\n"}})
	var ae *AuthorizationError
	if !errors.As(err, &ae) || ae.Code != "access_denied" || strings.ContainsAny(ae.Description, "\r\n") || !NeedsUser(err) {
		t.Errorf("error answer: %v", err)
	}
	if _, err := p.Callback(url.Values{"state": {"st"}}); err == nil {
		t.Error("no code accepted")
	}
}

func TestPendingNeverPrintsVerifier(t *testing.T) {
	p := Pending{State: "state-value-123", Verifier: "verifier-value-456", Issuer: "https://as"}
	for _, s := range []string{fmt.Sprint(p), fmt.Sprintf("%+v %#v", p, p), p.LogValue().String()} {
		if strings.Contains(s, "verifier-value") || strings.Contains(s, "state-value") {
			t.Errorf("printed: %s", s)
		}
	}
}
