package admin_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestAdminMCPConfigPlugins: an agent's MCP document names plugins as well as servers. A
// POST may enable a plugin under plugins (as GET shows it) or under servers (a plugin is
// enabled by name as a server is); GET lists it under plugins; the agent's session gets
// its tools; a name that is neither a server nor a plugin is refused.
func TestAdminMCPConfigPlugins(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, "")
	g := gatewaytest.Start(t, yaml)
	type doc struct {
		Servers map[string]map[string]any `json:"servers"`
		Plugins map[string]map[string]any `json:"plugins"`
	}
	get := func(agent string) doc {
		t.Helper()
		a := g.API(t, http.MethodGet, "/api/mcp-config?agent="+agent, "", nil)
		var d doc
		if a.Status != http.StatusOK || json.Unmarshal(a.Raw, &d) != nil {
			t.Fatalf("GET /api/mcp-config?agent=%s: %s", agent, a)
		}
		return d
	}
	for agent, body := range map[string]string{
		"kanban": `{"servers":{"everything":{}},"plugins":{"shop":{}}}`,
		"board":  `{"servers":{"shop":{}}}`,
	} {
		if a := g.API(t, http.MethodPost, "/api/mcp-config?agent="+agent, body, nil); a.Status != http.StatusOK {
			t.Fatalf("POST /api/mcp-config?agent=%s %s: %s", agent, body, a)
		}
		d := get(agent)
		if p := d.Plugins["shop"]; p == nil || p["type"] != "sql" || p["source"] != "file" {
			t.Errorf("GET for %s after %s: plugins %v, want shop (type sql, source file)", agent, body, d.Plugins)
		}
		if _, asServer := d.Servers["shop"]; asServer {
			t.Errorf("GET for %s lists the plugin shop under servers: %v", agent, d.Servers)
		}
		// The plugins GET answers are ones a POST takes back (servers named by reference).
		refs := map[string]any{}
		for n := range d.Servers {
			refs[n] = map[string]any{}
		}
		raw, _ := json.Marshal(map[string]any{"servers": refs, "plugins": d.Plugins})
		if a := g.API(t, http.MethodPost, "/api/mcp-config?agent="+agent, string(raw), nil); a.Status != http.StatusOK {
			t.Errorf("POST of the plugins GET answered for %s (%s): %s", agent, raw, a)
		}
	}
	if d := get("kanban"); d.Servers["everything"] == nil {
		t.Errorf("kanban's servers: %v", d.Servers)
	}
	sid := g.InitializeAs(t, "board")
	if names := g.ToolNames(t, sid); !slices.Contains(names, "shop_shop_v1_users_find") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "everything__") }) {
		t.Errorf("board's session lists %v, want the plugin's tools alone", names)
	}
	for _, body := range []string{`{"plugins":{"nope":{}}}`, `{"plugins":{"everything":{}}}`, `{"plugins":{"shop":{"mode":"shared"}}}`} {
		if a := g.API(t, http.MethodPost, "/api/mcp-config?agent=kanban", body, nil); a.Status != http.StatusBadRequest || !strings.Contains(strings.Join(a.FieldErrors(), "; "), "plugins.") {
			t.Errorf("POST %s: %s, want 400 naming the plugins field", body, a)
		}
	}
}
