package admin_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/store"
)

// An API server's env and header values are sealed in the store: its bytes at rest do
// not hold them, the API answers them redacted as before, and the running server gets
// them in the clear. An entry stored before sealing (values in the clear) still reads,
// and is sealed at its next write.
func TestServerSecretsSealedAtRest(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	admin := g.LocalAuth(t)
	body := `{"name":"web","type":"streamable_http","url":"` + gatewaytest.EverythingURL() + `","headers":{"Authorization":"Bearer header-secret-1"}}`
	if a := g.API(t, http.MethodPost, "/api/servers", body, admin); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/servers: %s", a)
	}
	body = `{"name":"local","type":"stdio","command":"/bin/true","env":{"TOKEN":"env-secret-2"}}`
	if a := g.API(t, http.MethodPost, "/api/servers", body, admin); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/servers: %s", a)
	}
	raw, err := g.Store.ListConfig()
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, e := range raw {
		all.Write(e.Doc)
	}
	for _, secret := range []string{"header-secret-1", "env-secret-2"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("the store holds %q in the clear: %s", secret, all.String())
		}
	}
	if s := g.Reg.Server("local"); s == nil || s.Def.Env["TOKEN"] != "env-secret-2" {
		t.Errorf("the running server's env: %+v", s)
	}
	if s := g.Reg.Server("web"); s == nil || s.Def.Headers["Authorization"] != "Bearer header-secret-1" {
		t.Errorf("the running server's headers: %+v", s)
	}
	if a := g.API(t, http.MethodGet, "/api/servers/local", "", nil); !strings.Contains(string(a.Raw), `"TOKEN": "***redacted***"`) {
		t.Errorf("GET /api/servers/local: %s", a)
	}
	// PATCH that does not touch env keeps it (opened, then sealed again).
	if a := g.API(t, http.MethodPatch, "/api/servers/local", `{"meta":{"title":"Local"}}`, admin); a.Status != http.StatusOK {
		t.Fatalf("PATCH: %s", a)
	}
	if s := g.Reg.Server("local"); s == nil || s.Def.Env["TOKEN"] != "env-secret-2" {
		t.Errorf("the env after a PATCH of meta: %+v", s)
	}

	// A record written before sealing, in the clear, still reads.
	now := time.Now().UTC()
	old := &store.ConfigEntry{Kind: "server", Name: "old", Source: "api", Created: now, Updated: now, Version: 1,
		Doc: []byte(`{"type":"stdio","command":"/bin/true","env":{"OLD":"clear-value-3"}}`)}
	if err := g.Store.PutConfig(old); err != nil {
		t.Fatal(err)
	}
	withFilePath(t, g, "") // a reload merges the stored entries again
	if s := g.Reg.Server("old"); s == nil || s.Def.Env["OLD"] != "clear-value-3" {
		t.Fatalf("the old clear record after a reload: %+v", s)
	}
	if a := g.API(t, http.MethodPatch, "/api/servers/old", `{"meta":{"title":"Old"}}`, admin); a.Status != http.StatusOK {
		t.Fatalf("PATCH old: %s", a)
	}
	if e, err := g.Store.GetConfig("server", "old"); err != nil || strings.Contains(string(e.Doc), "clear-value-3") {
		t.Errorf("the old record after its next write: %v %s", err, e.Doc)
	}
	if s := g.Reg.Server("old"); s == nil || s.Def.Env["OLD"] != "clear-value-3" {
		t.Errorf("old's env after its next write: %+v", s)
	}
}
