package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestOAuthServerAddedByReload: an OAuth server added to a running gateway that had none
// gets the token manager too (before the fix it was started only for the config the
// gateway began with, and the added server's requests went without any).
func TestOAuthServerAddedByReload(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer up.Close()
	g := gatewaytest.Start(t, "listen: {{listen}}\nstate_dir: {{state_dir}}\nstore: memory\n")
	file := *g.Gateway.FileConfig()
	added := "listen: " + g.Addr + "\nstate_dir: " + file.StateDir + "\nstore: memory\nservers:\n  crm:\n    type: http\n    url: " + up.URL + "/mcp\n    auth: {type: oauth, per: server}\n"
	cfg, ps, err := config.Parse([]byte(added))
	if err != nil {
		t.Fatalf("%v", ps)
	}
	if err := g.Gateway.ReloadFile(cfg); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(g.Base + "/oauth/connect/crm")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(b), "not an OAuth upstream") || resp.StatusCode == http.StatusNotFound {
		t.Errorf("connect to a server added by reload: %d %s", resp.StatusCode, b)
	}
}

// TestOAuthEndpoints: the callback answers a state it never issued (or none, or one given
// twice) with an error and grants nothing; connecting names only OAuth upstreams; a
// server-wide grant is the owner's to give (a peer that is not the owner is refused).
func TestOAuthEndpoints(t *testing.T) {
	// The upstream refuses everything without a token and names no metadata: the
	// authorization cannot start, which is what the connect answer must say.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer up.Close()
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
servers:
  crm:
    type: http
    url: `+up.URL+`/mcp
    auth: {type: oauth, per: server}
`)
	get := func(path string, hdr map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, g.Base+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, string(b)
	}
	for _, q := range []string{"", "?state=nope&code=x", "?state=a&state=b&code=x", "?state=" + strings.Repeat("s", 10000)} {
		if code, body := get("/oauth/callback"+q, nil); code != http.StatusBadRequest || !strings.Contains(body, "authorization failed") {
			t.Errorf("callback %.40q: %d %q", q, code, body)
		}
	}
	if code, _ := get("/oauth/connect/nosuch", nil); code != http.StatusNotFound {
		t.Errorf("connect to an unknown server: %d", code)
	}
	// The test's own requests come from the gateway's user over loopback: the owner. An
	// upstream without metadata falls back to the 2025-03-26 default endpoints, where
	// registration is refused here: a clear 502, no redirect.
	if code, body := get("/oauth/connect/crm", nil); code != http.StatusBadGateway || !strings.Contains(body, "could not start") {
		t.Errorf("connect to an upstream without metadata: %d %q", code, body)
	}
	// Through a proxy the gateway does not trust, nobody is the owner.
	if code, _ := get("/oauth/connect/crm", map[string]string{"X-Forwarded-For": "203.0.113.9"}); code != http.StatusForbidden {
		t.Errorf("connect from a non-owner: %d, want 403", code)
	}
}
