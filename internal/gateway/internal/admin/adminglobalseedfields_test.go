package admin_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// PUT /api/settings/global keeps every field of the seed's McpServerConfig it is sent:
// description (the server's meta.description), args even when empty, and answers
// updatedAt next to createdAt. It answers the warnings /api/servers/validate gives for the
// same server (a command the gateway cannot find), and a description left out of a later
// PUT is kept, not lost.
func TestGlobalSettingsSeedFields(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	admin := g.LocalAuth(t)
	put := `{"mcpServers":[{"id":"d","name":"Docs","description":"internal docs search","enabled":true,"createdAt":"2025-01-02T03:04:05.678Z",
	  "transport":{"type":"stdio","command":"/no/such/mcp-command","args":[]}}]}`
	val := g.API(t, http.MethodPost, "/api/servers/validate", `{"name":"d","type":"stdio","command":"/no/such/mcp-command"}`, admin)
	if val.Status != http.StatusOK || !strings.Contains(string(val.Raw), "servers.d.command") {
		t.Fatalf("POST /api/servers/validate: %s", val)
	}
	a := g.API(t, http.MethodPut, "/api/settings/global", put, admin)
	if a.Status != http.StatusOK {
		t.Fatalf("PUT /api/settings/global: %s", a)
	}
	if !slices.ContainsFunc(a.Warnings(), func(w string) bool { return strings.HasPrefix(w, "servers.d.command: ") }) {
		t.Errorf("PUT of a server whose command does not exist does not warn as validate does (%s): %s", val.Raw, a)
	}
	var d map[string]any
	for _, s := range seedServers(t, g) {
		if s["id"] == "d" {
			d = s
		}
	}
	tr, _ := d["transport"].(map[string]any)
	args, hasArgs := tr["args"].([]any)
	if d["description"] != "internal docs search" || !hasArgs || len(args) != 0 || d["createdAt"] != "2025-01-02T03:04:05.678Z" {
		t.Errorf("GET after PUT: %v", d)
	}
	if u, _ := d["updatedAt"].(string); u == "" {
		t.Errorf("GET after PUT has no updatedAt: %v", d)
	} else if ut, err := time.Parse(time.RFC3339Nano, u); err != nil || time.Since(ut) > time.Minute {
		t.Errorf("updatedAt %q is not the time of the PUT (%v)", u, err)
	}
	if s := g.API(t, http.MethodGet, "/api/servers/d", "", nil); !strings.Contains(string(s.Raw), `"description": "internal docs search"`) {
		t.Errorf("the description is not the server's meta.description: %s", s)
	}
	// A seed client that does not send description keeps it.
	if a := g.API(t, http.MethodPut, "/api/settings/global", strings.Replace(put, `"description":"internal docs search",`, "", 1), admin); a.Status != http.StatusOK ||
		!strings.Contains(string(a.Raw), `"description": "internal docs search"`) {
		t.Errorf("PUT without description lost it: %s", a)
	}
}
