package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestRegisterOrder(t *testing.T) {
	as := newFakeAS(t, "")
	as.set("client_id_metadata_document_supported", true)
	as.set("token_endpoint_auth_methods_supported", []string{"client_secret_basic", "none"})
	md, err := testClient().DiscoverServer(ctxT(t), as.issuer())
	if err != nil {
		t.Fatal(err)
	}
	c := testClient()
	pre := &ClientInfo{ID: "pre", Secret: "pre-secret"}
	cimd := "https://client.example.com/meta.json"

	cl, err := c.Register(ctxT(t), md, RegisterOptions{Preregistered: pre, MetadataDocumentURL: cimd})
	if err != nil || cl.ID != "pre" || cl.AuthMethod != AuthBasic || cl.RegisteredBy != RegisteredByHand || cl.Issuer != md.Issuer {
		t.Fatalf("pre-registered first: %v %v", cl, err)
	}
	// A pre-registered client of another server is not used here.
	other := &ClientInfo{Issuer: "https://other", ID: "pre"}
	cl, err = c.Register(ctxT(t), md, RegisterOptions{Preregistered: other, MetadataDocumentURL: cimd})
	if err != nil || cl.ID != cimd || cl.AuthMethod != AuthNone || cl.RegisteredBy != RegisteredByDocument {
		t.Fatalf("metadata document second: %v %v", cl, err)
	}
	if len(as.registered) != 0 {
		t.Fatalf("registered dynamically although a document URL was usable")
	}
	cl, err = c.Register(ctxT(t), md, RegisterOptions{RedirectURIs: []string{"http://127.0.0.1:9/cb"}})
	if err != nil || cl.ID != "dyn-client" || cl.Secret != "dyn-secret" || cl.AuthMethod != AuthBasic || cl.RegisteredBy != RegisteredDynamic {
		t.Fatalf("dynamic third: %v %v", cl, err)
	}
	md.RegistrationEndpoint = ""
	if _, err := c.Register(ctxT(t), md, RegisterOptions{}); !errors.Is(err, ErrNoRegistration) {
		t.Errorf("err %v, want ErrNoRegistration", err)
	}
}

func TestRegisterDynamicRequest(t *testing.T) {
	as := newFakeAS(t, "")
	as.set("token_endpoint_auth_methods_supported", []string{"client_secret_post"})
	md, err := testClient().DiscoverServer(ctxT(t), as.issuer())
	if err != nil {
		t.Fatal(err)
	}
	cl, err := testClient().Register(ctxT(t), md, RegisterOptions{ClientName: "gw", RedirectURIs: []string{"https://gw.example.com/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	if cl.AuthMethod != AuthPost {
		t.Errorf("auth method %q, want the only one supported", cl.AuthMethod)
	}
	body := as.registered[0]
	if body["client_name"] != "gw" || body["application_type"] != "web" || body["token_endpoint_auth_method"] != AuthPost {
		t.Errorf("registration body %v", body)
	}
	grants := fmt.Sprint(body["grant_types"])
	if !strings.Contains(grants, "refresh_token") || !strings.Contains(grants, "authorization_code") {
		t.Errorf("grant_types %v", grants)
	}
}

func TestRegisterRefusesClearTextEndpoint(t *testing.T) {
	md := &ServerMetadata{Issuer: "https://as", RegistrationEndpoint: "http://as.example.com/register"}
	if cl, err := testClient().Register(ctxT(t), md, RegisterOptions{}); err == nil {
		t.Errorf("registered over clear text: %v", cl)
	}
}

func TestRegisterErrorAnswer(t *testing.T) {
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	md.RegistrationEndpoint = as.issuer() + "/token" // answers with an OAuth error object
	as.tokenAnswer = func(url.Values, string) (int, any) {
		return 400, map[string]any{"error": "invalid_client_metadata", "error_description": "no"}
	}
	_, err := testClient().Register(ctxT(t), md, RegisterOptions{})
	var te *TokenError
	if !errors.As(err, &te) || te.Endpoint != "registration" || te.Code != "invalid_client_metadata" {
		t.Errorf("err %v", err)
	}
}

func TestRegisterRejectsBadAnswers(t *testing.T) {
	as := newFakeAS(t, "")
	md, err := testClient().DiscoverServer(ctxT(t), as.issuer())
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"no client_id":  `{"client_secret":"s"}`,
		"duplicate id":  `{"client_id":"a","client_id":"b"}`,
		"id not string": `{"client_id":7}`,
	} {
		if cl, err := testClient().readRegistration(md, []byte(body)); err == nil {
			t.Errorf("%s: accepted %v", name, cl)
		}
	}
	cl, err := testClient().readRegistration(md, []byte(`{"client_id":"pub","client_secret_expires_at":1700000000}`))
	if err != nil || cl.AuthMethod != AuthNone || cl.SecretExpiresAt.Unix() != 1700000000 {
		t.Errorf("public client %v %v", cl, err)
	}
}

func TestChooseAuthMethod(t *testing.T) {
	cases := []struct {
		supported   []string
		secret, key bool
		want        string
	}{
		{nil, true, false, AuthBasic},
		{nil, false, false, AuthNone},
		{[]string{"none"}, true, false, AuthNone},
		{[]string{"client_secret_post", "client_secret_basic"}, true, false, AuthBasic},
		{[]string{"client_secret_post"}, true, false, AuthPost},
		{[]string{"private_key_jwt", "client_secret_basic"}, true, true, AuthPrivateJWT},
		{[]string{"private_key_jwt"}, false, false, AuthNone},
		{[]string{"tls_client_auth"}, true, false, AuthBasic},
	}
	for _, tc := range cases {
		if got := ChooseAuthMethod(tc.supported, tc.secret, tc.key); got != tc.want {
			t.Errorf("ChooseAuthMethod(%q, %v, %v) = %q, want %q", tc.supported, tc.secret, tc.key, got, tc.want)
		}
	}
}

func TestClientInfoNeverPrintsSecret(t *testing.T) {
	cl := ClientInfo{ID: "id", Secret: "s3cr3t-value", AuthMethod: AuthBasic}
	for _, s := range []string{cl.String(), fmt.Sprintf("%v %+v %#v %s", cl, cl, cl, cl), cl.LogValue().String()} {
		if strings.Contains(s, "s3cr3t") {
			t.Errorf("secret printed: %s", s)
		}
	}
	if !slices.Contains(strings.Fields(cl.String()), "secret=[redacted]") {
		t.Errorf("String %q does not say the secret is redacted", cl.String())
	}
}
