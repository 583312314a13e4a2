package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// An edit never loses what it does not mention: PATCH /api/servers/{name} (what a form
// that edits some fields sends) keeps every other field, secrets included, and PUT of the
// object GET answered (secrets as the redaction marker) keeps them too. PUT of a partial
// object is a replace, as documented.
func TestServerEditKeepsUntouchedFields(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	admin := g.LocalAuth(t)
	body := `{"name":"s","type":"stdio","command":"/bin/true","args":["-a"],"env":{"K":"secret"},"dir":"/tmp",
	  "timeouts":{"call":"45s"},"meta":{"title":"S","description":"d"},"default_enabled":false}`
	if a := g.API(t, http.MethodPost, "/api/servers", body, admin); a.Status != http.StatusCreated {
		t.Fatalf("POST: %s", a)
	}
	a := g.API(t, http.MethodPatch, "/api/servers/s", `{"meta":{"title":"S2"}}`, admin)
	if a.Status != http.StatusOK {
		t.Fatalf("PATCH: %s", a)
	}
	for _, want := range []string{`"-a"`, `"dir": "/tmp"`, `"call": "45s"`, `"description": "d"`, `"title": "S2"`, `"default_enabled": false`} {
		if !strings.Contains(string(a.Raw), want) {
			t.Errorf("PATCH of meta.title lost %s: %s", want, a.Raw)
		}
	}
	if s := g.Reg.Server("s"); s == nil || s.Def.Env["K"] != "secret" || s.Def.Timeouts.Call.String() != "45s" {
		t.Errorf("the running server after PATCH: %+v", s)
	}
	got := g.API(t, http.MethodGet, "/api/servers/s", "", nil)
	if a := g.API(t, http.MethodPut, "/api/servers/s", string(got.Raw), admin); a.Status != http.StatusOK {
		t.Fatalf("PUT of the GET answer: %s", a)
	}
	if s := g.Reg.Server("s"); s == nil || s.Def.Env["K"] != "secret" || s.Def.Dir != "/tmp" {
		t.Errorf("the running server after PUT of the GET answer: %+v", s)
	}
}
