package gateway_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// PUT /api/settings/global keeps every field of the seed's McpServerConfig it is sent:
// description (the server's meta.description), args even when empty, and answers
// updatedAt next to createdAt. It answers the warnings /api/servers/validate gives for the
// same server (a command the gateway cannot find), and a description left out of a later
// PUT is kept, not lost.
func TestGlobalSettingsSeedFields(t *testing.T) {
	g := startGateway(t, adminYAML)
	admin := g.localAuth(t)
	put := `{"mcpServers":[{"id":"d","name":"Docs","description":"internal docs search","enabled":true,"createdAt":"2025-01-02T03:04:05.678Z",
	  "transport":{"type":"stdio","command":"/no/such/mcp-command","args":[]}}]}`
	val := g.api(t, http.MethodPost, "/api/servers/validate", `{"name":"d","type":"stdio","command":"/no/such/mcp-command"}`, admin)
	if val.status != http.StatusOK || !strings.Contains(string(val.raw), "servers.d.command") {
		t.Fatalf("POST /api/servers/validate: %s", val)
	}
	a := g.api(t, http.MethodPut, "/api/settings/global", put, admin)
	if a.status != http.StatusOK {
		t.Fatalf("PUT /api/settings/global: %s", a)
	}
	if !slices.ContainsFunc(a.warnings(), func(w string) bool { return strings.HasPrefix(w, "servers.d.command: ") }) {
		t.Errorf("PUT of a server whose command does not exist does not warn as validate does (%s): %s", val.raw, a)
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
	if s := g.api(t, http.MethodGet, "/api/servers/d", "", nil); !strings.Contains(string(s.raw), `"description": "internal docs search"`) {
		t.Errorf("the description is not the server's meta.description: %s", s)
	}
	// A seed client that does not send description keeps it.
	if a := g.api(t, http.MethodPut, "/api/settings/global", strings.Replace(put, `"description":"internal docs search",`, "", 1), admin); a.status != http.StatusOK ||
		!strings.Contains(string(a.raw), `"description": "internal docs search"`) {
		t.Errorf("PUT without description lost it: %s", a)
	}
}

// warnings are the answer's warnings as field: message strings.
func (a apiAnswer) warnings() []string {
	var b struct {
		Warnings []struct{ Field, Message string }
	}
	_ = json.Unmarshal(a.raw, &b)
	var out []string
	for _, e := range b.Warnings {
		out = append(out, e.Field+": "+e.Message)
	}
	return out
}
