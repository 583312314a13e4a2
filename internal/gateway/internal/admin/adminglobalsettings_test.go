package admin_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// seedServers is GET /api/settings/global's answer as a client written against the
// orchestrator seed reads it: a list of plain JSON objects.
func seedServers(t *testing.T, g *gatewaytest.GW) []map[string]any {
	t.Helper()
	a := g.API(t, "GET", "/api/settings/global", "", nil)
	var doc struct {
		MCPServers []map[string]any `json:"mcpServers"`
	}
	if a.Status != http.StatusOK || json.Unmarshal(a.Raw, &doc) != nil || doc.MCPServers == nil {
		t.Fatalf("GET /api/settings/global: %s", a)
	}
	return doc.MCPServers
}

func sameJSON(t *testing.T, got, want any) bool {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	return string(g) == string(w)
}

// A client written against the seed's API: it PUTs {"mcpServers": [...]} in the seed's
// McpServerConfig shape as raw JSON and reads back the same objects; the new server is an
// API server of /api/servers and its tools reach a session; a file server listed as read
// is kept, one changed is a 409 naming it; a server left out of the next PUT is deleted.
func TestGlobalSettingsSeedClient(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	withFilePath(t, g, "/etc/mcpgw/test.yaml")
	admin := g.LocalAuth(t) // a stdio server's command needs an admin credential

	before := seedServers(t, g)
	wantFile := map[string]any{"id": "everything", "name": "everything", "transport": map[string]any{"type": "streamable-http", "url": gatewaytest.EverythingURL()}, "enabled": true}
	if len(before) != 1 || !sameJSON(t, before[0], wantFile) {
		t.Fatalf("the file server in the seed's shape: %v, want %v", before, wantFile)
	}

	put := `{"mcpServers":[
	  {"id":"everything","name":"everything","transport":{"type":"streamable-http","url":"` + gatewaytest.EverythingURL() + `"},"enabled":true},
	  {"id":"web","name":"Web tools","transport":{"type":"http","url":"` + gatewaytest.EverythingURL() + `"},"enabled":true,"createdAt":"2025-01-02T03:04:05.678Z"},
	  {"id":"local","name":"local","transport":{"type":"stdio","command":"/bin/true","args":["-x"],"env":{"TOKEN":"s3cret"}},"enabled":false,"createdAt":"2025-02-03T04:05:06.000Z"}
	]}`
	a := g.API(t, "PUT", "/api/settings/global", put, admin)
	if a.Status != http.StatusOK {
		t.Fatalf("PUT /api/settings/global: %s", a)
	}
	if strings.Contains(string(a.Raw), "s3cret") {
		t.Errorf("the answer echoes an env value: %s", a.Raw)
	}
	var sent struct {
		MCPServers []map[string]any `json:"mcpServers"`
	}
	_ = json.Unmarshal([]byte(put), &sent)
	// The secret reads back redacted, as everywhere in the admin API.
	sent.MCPServers[2]["transport"].(map[string]any)["env"] = map[string]any{"TOKEN": "***redacted***"}
	slices.SortFunc(sent.MCPServers, func(x, y map[string]any) int { return strings.Compare(x["id"].(string), y["id"].(string)) })
	got := seedServers(t, g)
	for _, s := range got {
		// updatedAt is the gateway's (TestGlobalSettingsSeedFields checks it): not sent.
		if _, ok := s["updatedAt"]; !ok && s["createdAt"] != nil {
			t.Errorf("API server %v has no updatedAt", s["id"])
		}
		delete(s, "updatedAt")
	}
	if !sameJSON(t, got, sent.MCPServers) {
		t.Fatalf("GET after PUT:\n got %v\nwant %v", got, sent.MCPServers)
	}

	// The servers are the gateway's own: API servers in /api/servers, run and listed.
	if a := g.API(t, "GET", "/api/servers/web", "", nil); a.Status != http.StatusOK || a.Obj["source"] != "api" {
		t.Errorf("GET /api/servers/web: %s", a)
	}
	if a := g.API(t, "GET", "/api/servers/local", "", nil); a.Status != http.StatusOK || a.Obj["default_enabled"] != false {
		t.Errorf("a server the seed disables is off by default: %s", a)
	}
	if s := g.Reg.Server("local"); s == nil || s.Def.Env["TOKEN"] != "s3cret" {
		t.Errorf("local's env did not reach the registry: %+v", s)
	}
	gatewaytest.WaitLive(t, g, "web", "up")
	if names := g.ToolNames(t, g.Initialize(t, "2025-11-25", "")); !slices.Contains(names, "web__test_simple_text") {
		t.Errorf("a session does not list the new server's tools: %v", names)
	}

	// PUT of what GET answered changes nothing, and keeps the secret behind its marker.
	again, _ := json.Marshal(map[string]any{"mcpServers": got})
	if a := g.API(t, "PUT", "/api/settings/global", string(again), admin); a.Status != http.StatusOK {
		t.Fatalf("PUT of the GET answer: %s", a)
	}
	if s := g.Reg.Server("local"); s == nil || s.Def.Env["TOKEN"] != "s3cret" {
		t.Errorf("PUT of the redacted answer lost local's env: %+v", s)
	}

	// A file server is read-only here.
	changed := strings.Replace(put, `"name":"everything"`, `"name":"Renamed"`, 1)
	if a := g.API(t, "PUT", "/api/settings/global", changed, admin); a.Status != http.StatusConflict ||
		!strings.Contains(string(a.Raw), `server everything is managed by the config file /etc/mcpgw/test.yaml`) {
		t.Errorf("PUT changing a file server: %s", a)
	}
	if a := g.API(t, "PUT", "/api/settings/global", `{"mcpServers":[{"id":"x","transport":{"type":"carrier-pigeon"}}]}`, admin); a.Status != http.StatusBadRequest ||
		!slices.Contains(a.FieldErrors(), `mcpServers[0].transport.type: "carrier-pigeon" is not stdio, http, sse or streamable-http`) {
		t.Errorf("PUT with an unknown type: %s", a)
	}

	// Left out: an API server is deleted, a file server stays.
	if a := g.API(t, "PUT", "/api/settings/global", `{"mcpServers":[{"id":"web","name":"Web tools","transport":{"type":"http","url":"`+gatewaytest.EverythingURL()+`"}}]}`, admin); a.Status != http.StatusOK {
		t.Fatalf("PUT without local: %s", a)
	}
	var ids []string
	for _, s := range seedServers(t, g) {
		ids = append(ids, s["id"].(string))
	}
	if !slices.Equal(ids, []string{"everything", "web"}) {
		t.Errorf("servers after the last PUT: %v, want [everything web]", ids)
	}
	if a := g.API(t, "GET", "/api/servers/local", "", nil); a.Status != http.StatusNotFound {
		t.Errorf("local after it was left out: %s", a)
	}
}
