package admin_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// The admin API opens to an admin key (not to an agent's key, which is 403, and never on
// /mcp) and, in mode jwt, to a token with the mcpgw:admin scope (a token without it is 403);
// no credential or a wrong one is 401.
func TestAdminCredentials(t *testing.T) {
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
auth:
  mode: jwt
  jwt: {keys: [{alg: HS256, secret: "0123456789abcdef0123456789abcdef"}]}
servers:
  everything: {type: streamable_http, url: {{everything}}}
`)
	cfg := g.Reg.Config()
	kf, err := auth.OpenKeyFile(filepath.Join(cfg.StateDir, "api_keys.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	adminKey, _, err := kf.AddAdmin()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := auth.IssueJWTWithScopes(cfg.Auth.JWT, "ops", time.Hour, nil, []string{"mcp", auth.AdminScope})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := auth.IssueJWT(cfg.Auth.JWT, "a1", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	// The gateway reads the key file at most once a second.
	deadline := time.Now().Add(5 * time.Second)
	for g.API(t, http.MethodGet, "/api/servers", "", bearer(adminKey)).Status != http.StatusOK && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"admin key", bearer(adminKey), http.StatusOK},
		{"admin-scoped JWT", bearer(admin), http.StatusOK},
		{"JWT without the scope", bearer(plain), http.StatusForbidden},
		{"no credential", nil, http.StatusUnauthorized},
		{"wrong key", bearer(adminKey + "x"), http.StatusUnauthorized},
	} {
		if a := g.API(t, http.MethodGet, "/api/servers", "", tc.hdr); a.Status != tc.want {
			t.Errorf("%s: %s, want %d", tc.name, a, tc.want)
		}
	}
	// An admin key is no agent's key.
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		Header: bearer(adminKey)})
	if r.Status != http.StatusUnauthorized {
		t.Errorf("initialize with an admin key: HTTP %d %s, want 401", r.Status, r.Body)
	}
}
