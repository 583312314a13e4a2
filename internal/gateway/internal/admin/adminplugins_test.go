package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestAdminPluginsInOperatorViews: the sql plugin is in every operator view next to the
// servers: a row of kind plugin in GET /api/servers (state, connections, resource types,
// tools, restarts, last error), a server of kind plugin in GET /api/resolve (kept by an
// executor's allowlist that skips the upstream), a row in /readyz's detail, and the web
// UI's Plugins page, linked from the nav. POST /api/plugins/{name}/restart restarts it:
// restarts counts it, it comes up again, and its tools answer.
func TestAdminPluginsInOperatorViews(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, `executors:
  box: {type: local_docker, mcp_policy: {allowlist_servers: [shop]}}
agents:
  coder: {servers: [shop, everything]}
`)
	g := gatewaytest.Start(t, yaml)

	servers := func() map[string]map[string]any {
		t.Helper()
		a := g.API(t, "GET", "/api/servers", "", nil)
		var rows []map[string]any
		if a.Status != 200 || json.Unmarshal(a.Raw, &rows) != nil {
			t.Fatalf("GET /api/servers: %s", a)
		}
		out := map[string]map[string]any{}
		var names []string
		for _, r := range rows {
			out[r["name"].(string)] = r
			names = append(names, r["name"].(string))
		}
		if strings.Join(names, ",") != "everything,shop" {
			t.Errorf("GET /api/servers rows %v, want everything and shop by name", names)
		}
		return out
	}
	rows := servers()
	if s := rows["everything"]; s["kind"] != "server" {
		t.Errorf("the upstream's row: kind %v", s["kind"])
	}
	shop := rows["shop"]
	live, _ := shop["live"].(map[string]any)
	if shop["kind"] != "plugin" || shop["type"] != "sql" || shop["source"] != "file" || live == nil {
		t.Fatalf("the plugin's row: %v", shop)
	}
	if live["state"] != "up" || live["connections"] != float64(2) || live["resource_types"].(float64) < 1 ||
		live["tools"].(float64) < 5 || live["restarts"] != float64(0) {
		t.Errorf("the plugin's live state: %v", live)
	}
	if _, has := live["error"]; has {
		t.Errorf("an up plugin shows a last error: %v", live)
	}

	// /api/resolve: the plugin is one of the agent's servers, of kind plugin.
	type resolved struct {
		Servers []struct {
			Name, Kind, Type, Transport string
		}
		Warnings []string
	}
	resolve := func(q string) resolved {
		t.Helper()
		a := g.API(t, "GET", "/api/resolve?"+q, "", nil)
		var r resolved
		if a.Status != 200 || json.Unmarshal(a.Raw, &r) != nil {
			t.Fatalf("GET /api/resolve?%s: %s", q, a)
		}
		return r
	}
	r := resolve("agent=coder")
	if len(r.Servers) != 2 || r.Servers[0].Name != "everything" || r.Servers[0].Kind != "server" ||
		r.Servers[1].Name != "shop" || r.Servers[1].Kind != "plugin" || r.Servers[1].Type != "sql" || r.Servers[1].Transport != "" {
		t.Errorf("resolve coder: %+v", r)
	}
	r = resolve("agent=coder&executor=box")
	if len(r.Servers) != 1 || r.Servers[0].Name != "shop" || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], `"everything"`) {
		t.Errorf("resolve coder with box (allowlist shop): %+v", r)
	}

	// /readyz's detail has the plugin next to the upstreams.
	var ready struct {
		Upstreams []struct{ Name string }
		Plugins   []struct {
			Name  string
			State string
			Tools int
		}
	}
	if rr := g.Do(t, gatewaytest.Req{Method: "GET", Path: "/readyz"}); json.Unmarshal(rr.Body, &ready) != nil || len(ready.Upstreams) != 1 ||
		len(ready.Plugins) != 1 || ready.Plugins[0].Name != "shop" || ready.Plugins[0].State != "up" || ready.Plugins[0].Tools < 5 {
		t.Errorf("/readyz: %s", rr.Body)
	}

	// The UI's Plugins page, linked from every page's nav.
	c := gatewaytest.NewUIClient(t, g)
	p := c.Do("GET", "/ui/plugins", "", nil)
	if p.Status != 200 || !strings.Contains(p.Body, `<tr data-name="shop">`) || !strings.Contains(p.Body, `<span class="state state-up">up</span>`) ||
		!strings.Contains(p.Body, `<td data-col="connections">2`) {
		t.Errorf("the Plugins page: %d\n%s", p.Status, p.Body)
	}
	if s := c.Do("GET", "/ui/servers", "", nil); !strings.Contains(s.Body, `<a href="/ui/plugins">Plugins</a>`) {
		t.Errorf("the nav has no link to the Plugins page:\n%s", s.Body)
	}

	// Restart: a new provider, restarts 1, up again, its tools answer.
	sid := g.InitAs(t, "coder", "{}")
	if a := g.API(t, "POST", "/api/plugins/shop/restart", "", nil); a.Status != http.StatusAccepted || a.Obj["restarted"] != "shop" {
		t.Fatalf("POST /api/plugins/shop/restart: %s", a)
	}
	if a := g.API(t, "POST", "/api/plugins/nope/restart", "", nil); a.Status != http.StatusNotFound {
		t.Errorf("restart of an unknown plugin: %s", a)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		live, _ = servers()["shop"]["live"].(map[string]any)
		if live["state"] == "up" && live["restarts"] == float64(1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin after its restart: %v, want up with 1 restart", live)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res := g.CallTool(t, sid, "shop_shop_v1_users_count", `{"connectionId":"main"}`); res.IsError || !strings.Contains(res.Text(), `"count":5`) {
		t.Errorf("a plugin call after the restart: %s", res.Text())
	}
}
