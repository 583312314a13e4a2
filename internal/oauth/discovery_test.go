package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestDiscoverFromChallengeURL(t *testing.T) {
	as := newFakeAS(t, "")
	rs := newFakeRS(t, "/.well-known/oauth-protected-resource/mcp", as.issuer())
	ch := Challenge{Scheme: "Bearer", Params: map[string]string{"resource_metadata": rs.srv.URL + rs.prmPath}}
	d, err := testClient().Discover(ctxT(t), rs.srv.URL+"/mcp", ch)
	if err != nil {
		t.Fatal(err)
	}
	if d.Resource != rs.srv.URL+"/mcp" || d.Server.Issuer != as.issuer() || d.Server.Defaulted {
		t.Errorf("discovery %+v / %+v", d, d.Server)
	}
	if got := rs.paths(); !slices.Equal(got, []string{rs.prmPath}) {
		t.Errorf("RS hits %q: the root PRM must not be asked for when the header names one", got)
	}
}

func TestDiscoverPathAwareThenRoot(t *testing.T) {
	as := newFakeAS(t, "")
	rs := newFakeRS(t, "/.well-known/oauth-protected-resource", as.issuer())
	rs.prm["resource"] = rs.srv.URL // pathless, as published: sent verbatim
	d, err := testClient().Discover(ctxT(t), rs.srv.URL+"/mcp", Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}
	if got := rs.paths(); !slices.Equal(got, want) {
		t.Errorf("RS hits %q, want %q", got, want)
	}
	if d.Resource != rs.srv.URL {
		t.Errorf("resource %q, want the PRM's %q exactly (no slash added)", d.Resource, rs.srv.URL)
	}
}

func TestDiscoverServerOrder(t *testing.T) {
	cases := []struct {
		name     string
		prefix   string
		metaPath string
		hits     []string
	}{
		{"root issuer, RFC 8414", "", "/.well-known/oauth-authorization-server",
			[]string{"/.well-known/oauth-authorization-server"}},
		{"root issuer, OpenID", "", "/.well-known/openid-configuration",
			[]string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"}},
		{"path issuer, RFC 8414 insertion", "/tenant1", "/.well-known/oauth-authorization-server/tenant1",
			[]string{"/.well-known/oauth-authorization-server/tenant1"}},
		{"path issuer, OpenID insertion", "/tenant1", "/.well-known/openid-configuration/tenant1",
			[]string{"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1"}},
		{"path issuer, OpenID appending", "/tenant1", "/tenant1/.well-known/openid-configuration",
			[]string{"/.well-known/oauth-authorization-server/tenant1", "/.well-known/openid-configuration/tenant1", "/tenant1/.well-known/openid-configuration"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			as := newFakeAS(t, tc.prefix)
			as.metaPath = tc.metaPath
			md, err := testClient().DiscoverServer(ctxT(t), as.issuer())
			if err != nil {
				t.Fatal(err)
			}
			if md.Issuer != as.issuer() || md.URL != as.srv.URL+tc.metaPath {
				t.Errorf("metadata %+v", md)
			}
			if !slices.Equal(as.metaHits, tc.hits) {
				t.Errorf("hits %q, want %q (never the root for a path issuer)", as.metaHits, tc.hits)
			}
		})
	}
}

func TestDiscoverResourceMismatch(t *testing.T) {
	as := newFakeAS(t, "")
	rs := newFakeRS(t, "/.well-known/oauth-protected-resource/mcp", as.issuer())
	rs.prm["resource"] = "https://evil.example.com/mcp"
	_, err := testClient().Discover(ctxT(t), rs.srv.URL+"/mcp", Challenge{})
	var me *MismatchError
	if !errors.As(err, &me) || me.What != "resource" {
		t.Fatalf("err %v, want a resource MismatchError", err)
	}
	if len(as.metaHits) != 0 {
		t.Errorf("the authorization server was asked (%q) after a mismatched resource", as.metaHits)
	}
}

func TestDiscoverIssuerMismatchStops(t *testing.T) {
	as := newFakeAS(t, "")
	as.set("issuer", "https://attacker.example.com")
	_, err := testClient().DiscoverServer(ctxT(t), as.issuer())
	var me *MismatchError
	if !errors.As(err, &me) || me.What != "issuer" || me.Got != "https://attacker.example.com" {
		t.Fatalf("err %v, want an issuer MismatchError", err)
	}
	if len(as.metaHits) != 1 {
		t.Errorf("hits %q: a poisoned document must end discovery, not try the next URL", as.metaHits)
	}
	// A trailing slash is a different issuer: no normalization.
	as.set("issuer", as.issuer()+"/")
	if _, err := testClient().DiscoverServer(ctxT(t), as.issuer()); !errors.As(err, &me) {
		t.Errorf("issuer with a trailing slash accepted: %v", err)
	}
}

func TestDiscoverLegacyServers(t *testing.T) {
	// 2025-03-26: no PRM, metadata at the MCP server's origin.
	as := newFakeAS(t, "")
	d, err := testClient().Discover(ctxT(t), as.srv.URL+"/mcp", Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	if d.ResourceMetadata != nil || d.Server.Issuer != as.srv.URL || d.Server.Defaulted || d.Resource != as.srv.URL+"/mcp" {
		t.Errorf("legacy discovery %+v / %+v", d, d.Server)
	}
	// No metadata at all: the default endpoints at the origin.
	bare := httptest.NewServer(http.NotFoundHandler())
	defer bare.Close()
	d, err = testClient().Discover(ctxT(t), bare.URL+"/mcp", Challenge{})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Server.Defaulted || d.Server.AuthorizationEndpoint != bare.URL+"/authorize" ||
		d.Server.TokenEndpoint != bare.URL+"/token" || d.Server.RegistrationEndpoint != bare.URL+"/register" {
		t.Errorf("default endpoints %+v", d.Server)
	}
}

// TestDiscoverLegacyIssuerPath: a 2025-03-26 server's authorization server metadata, read
// at its origin's root, may name an issuer with a path at that origin (the suite's 0.1.16
// scenario serves http://host/oauth); an issuer at another origin, or with a query, is
// still refused as RFC 8414 §3.3 says.
func TestDiscoverLegacyIssuerPath(t *testing.T) {
	as := newFakeAS(t, "")
	as.set("issuer", as.srv.URL+"/oauth")
	d, err := testClient().Discover(ctxT(t), as.srv.URL+"/mcp", Challenge{})
	if err != nil {
		t.Fatalf("an issuer with a path at the server's origin: %v", err)
	}
	if d.Server.Issuer != as.srv.URL+"/oauth" || d.Server.Defaulted {
		t.Errorf("legacy discovery %+v", d.Server)
	}
	for _, bad := range []string{"http://attacker.example.com/oauth", as.srv.URL + "/oauth?x=1", as.srv.URL + "/oauth#f",
		strings.Replace(as.srv.URL, "http://", "http://user@", 1) + "/oauth", "oauth"} {
		as.set("issuer", bad)
		_, err := testClient().Discover(ctxT(t), as.srv.URL+"/mcp", Challenge{})
		var me *MismatchError
		if !errors.As(err, &me) || me.What != "issuer" {
			t.Errorf("issuer %q: err %v, want an issuer MismatchError", bad, err)
		}
	}
	// Only the legacy path is relaxed: asked for an issuer, the document must name it.
	as.set("issuer", as.srv.URL+"/oauth")
	var me *MismatchError
	if _, err := testClient().DiscoverServer(ctxT(t), as.srv.URL); !errors.As(err, &me) {
		t.Errorf("DiscoverServer took an issuer with another path: %v", err)
	}
}

func TestDiscoverMalformedMetadata(t *testing.T) {
	cases := map[string]string{
		"html":              `<html>hello</html>`,
		"duplicate issuer":  `{"issuer":"ISS","issuer":"ISS","token_endpoint":"ISS/token"}`,
		"oddly cased":       `{"Issuer":"ISS","token_endpoint":"ISS/token"}`,
		"issuer not string": `{"issuer":["ISS"],"token_endpoint":"ISS/token"}`,
		"no token endpoint": `{"issuer":"ISS"}`,
		"bad endpoint":      `{"issuer":"ISS","token_endpoint":"ftp://x/token"}`,
		"clear-text remote": `{"issuer":"ISS","token_endpoint":"http://example.com/token"}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(strings.ReplaceAll(body, "ISS", srv.URL)))
			}))
			defer srv.Close()
			md, err := testClient().DiscoverServer(ctxT(t), srv.URL)
			if err == nil {
				t.Fatalf("accepted %+v", md)
			}
		})
	}
}

func TestDiscoverMalformedResourceMetadata(t *testing.T) {
	for name, body := range map[string]string{
		"no servers":   `{"resource":"RS/mcp"}`,
		"no resource":  `{"authorization_servers":["https://as"]}`,
		"duplicate":    `{"resource":"RS/mcp","resource":"RS/other","authorization_servers":["https://as"]}`,
		"servers type": `{"resource":"RS/mcp","authorization_servers":"https://as"}`,
	} {
		t.Run(name, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(strings.ReplaceAll(body, "RS", srv.URL)))
			}))
			defer srv.Close()
			if prm, err := testClient().DiscoverResource(ctxT(t), srv.URL+"/mcp", ""); err == nil {
				t.Fatalf("accepted %+v", prm)
			}
		})
	}
}

func TestDiscoverServerErrorIsNotFallback(t *testing.T) {
	// A 500 is an outage, not "metadata elsewhere": discovery stops rather than reading the
	// next URL, which could be someone else's document.
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.Error(w, "down", 500)
	}))
	defer srv.Close()
	_, err := testClient().DiscoverServer(ctxT(t), srv.URL)
	if err == nil || errors.Is(err, ErrNoServerMetadata) || hits != 1 {
		t.Errorf("err %v after %d hits", err, hits)
	}
}

func TestDiscoverRefusesRemoteClearText(t *testing.T) {
	c := testClient()
	if _, err := c.Discover(ctxT(t), "http://example.com/mcp", Challenge{}); err == nil {
		t.Error("plain http to a remote host accepted")
	}
	if _, err := c.DiscoverServer(ctxT(t), "ftp://example.com"); err == nil {
		t.Error("ftp issuer accepted")
	}
	ch := Challenge{Params: map[string]string{"resource_metadata": "http://example.com/prm"}}
	if _, err := c.DiscoverResource(ctxT(t), "https://example.com/mcp", ch.ResourceMetadata()); err == nil {
		t.Error("plain http resource_metadata to a remote host accepted")
	}
}
