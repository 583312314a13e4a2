package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	signer, err := ParsePrivateKeyPEM(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	as := newFakeAS(t, "")
	md := discoverFake(t, as)
	now := time.Now()
	c := testClient()
	c.Now = func() time.Time { return now }
	cl := ClientInfo{ID: "conformance-test-client", AuthMethod: AuthPrivateJWT, SigningKey: signer, KeyID: "k1"}
	if _, err := c.ClientCredentials(ctxT(t), md, cl, "", nil); err != nil {
		t.Fatal(err)
	}
	form, auth := as.lastToken()
	if auth != "" || form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		t.Fatalf("form %v auth %q", form, auth)
	}
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(form.Get("client_assertion"), claims, func(*jwt.Token) (any, error) { return &key.PublicKey, nil },
		jwt.WithValidMethods([]string{"ES256"}), jwt.WithAudience(md.Issuer), jwt.WithIssuer(cl.ID), jwt.WithSubject(cl.ID),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err != nil {
		t.Fatalf("assertion does not verify: %v", err)
	}
	if tok.Header["kid"] != "k1" || claims["jti"] == "" {
		t.Errorf("header %v claims %v", tok.Header, claims)
	}
	exp, _ := claims.GetExpirationTime()
	if d := exp.Sub(now); d <= 0 || d > 10*time.Minute {
		t.Errorf("lifetime %v", d)
	}
	// A second assertion is a different JWT (fresh jti), never replayed.
	_, _ = c.ClientCredentials(ctxT(t), md, cl, "", nil)
	form2, _ := as.lastToken()
	if form2.Get("client_assertion") == form.Get("client_assertion") {
		t.Error("assertion reused")
	}
}

func TestAssertionAudienceFallsBackToEndpoint(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tc := tokenCall{endpoint: "https://as/token", client: ClientInfo{ID: "c", AuthMethod: AuthPrivateJWT, SigningKey: key}}
	form := url.Values{}
	if _, err := (&Client{}).authenticate(tc, form); err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(form.Get("client_assertion"), claims); err != nil {
		t.Fatal(err)
	}
	if aud, _ := claims.GetAudience(); len(aud) != 1 || aud[0] != "https://as/token" {
		t.Errorf("aud %v", aud)
	}
}

func TestAssertionAlgorithms(t *testing.T) {
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	for want, key := range map[string]crypto.Signer{"ES384": ec384, "RS256": rk, "EdDSA": ed} {
		cl := ClientInfo{ID: "c", SigningKey: key}
		s, err := clientAssertion(cl, "https://as", time.Now())
		if err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		tok, _, err := jwt.NewParser().ParseUnverified(s, jwt.MapClaims{})
		if err != nil || tok.Method.Alg() != want {
			t.Errorf("alg %v, want %s (%v)", tok.Method.Alg(), want, err)
		}
	}
	for _, bad := range []string{"none", "HS256", "nope"} {
		cl := ClientInfo{ID: "c", SigningKey: ec384, SigningAlg: bad}
		if _, err := clientAssertion(cl, "https://as", time.Now()); err == nil {
			t.Errorf("alg %s accepted", bad)
		}
	}
	if _, err := clientAssertion(ClientInfo{ID: "c"}, "https://as", time.Now()); err == nil {
		t.Error("no key accepted")
	}
}

func TestParsePrivateKeyPEM(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sec1, _ := x509.MarshalECPrivateKey(ec)
	if _, err := ParsePrivateKeyPEM(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1})); err != nil {
		t.Errorf("SEC 1: %v", err)
	}
	for name, in := range map[string]string{
		"not PEM": "hello",
		"garbage": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("x")})),
		"public":  "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
	} {
		if _, err := ParsePrivateKeyPEM([]byte(in)); err == nil {
			t.Errorf("%s accepted", name)
		} else if strings.Contains(err.Error(), "BEGIN") {
			t.Errorf("%s: error repeats the key: %v", name, err)
		}
	}
}
