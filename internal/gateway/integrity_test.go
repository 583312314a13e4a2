package gateway_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestIntegrityAlterTable: the sql plugin's tools are pinned on first sight; a column added
// to a table changes that table's create and update tools (their input) and its find, get,
// list and delete tools (the rows they answer with), which are then held: absent
// from tools/list, refused when called, shown with a field-level diff by GET
// /api/integrity. An agent's key cannot approve them; the admin's local token can, and
// then they are listed again, with the new column.
// holdPluginChanges is the config line that holds a plugin's changes until an admin
// approves them, as a server's (the default follows the plugin's catalogue).
const holdPluginChanges = "\nintegrity: {plugin_changes: hold}\n"

func TestIntegrityAlterTable(t *testing.T) {
	const agentKey = "mcpgw_agent_key_0123456789"
	yaml, dbPath := gatewaytest.PluginConfig(t, holdPluginChanges)
	yaml = strings.Replace(yaml, "plugins:\n", "auth:\n  mode: api_key\n  api_keys:\n    - {agent: dev, sha256: "+auth.HashAPIKey(agentKey)+"}\nplugins:\n", 1)
	g := gatewaytest.Start(t, yaml)
	agent := map[string]string{"Authorization": "Bearer " + agentKey}
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, Header: agent})
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
	}
	list := func() (names []string, create json.RawMessage) {
		t.Helper()
		r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, Header: map[string]string{"Authorization": "Bearer " + agentKey, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}})
		var res struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(r.Message(t).Result, &res); err != nil {
			t.Fatalf("tools/list: %v in %s", err, r.Body)
		}
		for _, raw := range res.Tools {
			var d struct{ Name string }
			_ = json.Unmarshal(raw, &d)
			names = append(names, d.Name)
			if d.Name == "shop_shop_v1_users_create" {
				create = raw
			}
		}
		return names, create
	}
	if names, _ := list(); !slices.Contains(names, "shop_shop_v1_users_create") {
		t.Fatalf("first sight: %v", names)
	}

	gatewaytest.ExecSQL(t, dbPath, `ALTER TABLE users ADD COLUMN note TEXT`)
	waitPluginHeld(t, g, "shop", `"note"`, 6)
	names, _ := list()
	if slices.Contains(names, "shop_shop_v1_users_create") || slices.Contains(names, "shop_shop_v1_users_update") {
		t.Errorf("held tools are listed: %v", names)
	}
	if !slices.Contains(names, "shop_shop_v1_users_count") {
		t.Errorf("an unchanged tool of the table is gone: %v", names)
	}
	call := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shop_shop_v1_users_create","arguments":{"connection":"main","name":"x"}}}`,
		Header: map[string]string{"Authorization": "Bearer " + agentKey, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}})
	if res := string(call.Message(t).Result); !strings.Contains(res, `"isError":true`) || !strings.Contains(res, "held") {
		t.Errorf("a call to a held tool: %s", call.Body)
	}

	a := g.API(t, http.MethodGet, "/api/integrity?server=shop&state=held", "", g.LocalAuth(t))
	var held struct {
		Definitions []struct {
			Name, State string
			Diff        []struct{ Path, Op string }
		}
	}
	if err := json.Unmarshal(a.Raw, &held); err != nil || a.Status != http.StatusOK {
		t.Fatalf("GET /api/integrity: %s", a)
	}
	diffs := map[string]string{}
	for _, d := range held.Definitions {
		for _, c := range d.Diff {
			diffs[d.Name] += c.Op + " " + c.Path + ";"
		}
	}
	if got := diffs["shop_shop_v1_users_create"]; got != "added /inputSchema/properties/note;added /outputSchema/properties/note;" {
		t.Errorf("create's diff: %q (all: %v)", got, diffs)
	}
	if _, ok := diffs["shop_shop_v1_users_count"]; ok || len(held.Definitions) != 6 {
		t.Errorf("held: %v", diffs)
	}
	if a := g.API(t, http.MethodPost, "/api/integrity/shop/approve", `{}`, agent); a.Status < 400 {
		t.Fatalf("an agent's key approved: %s", a)
	}
	if g.Reg.Integrity().HeldCount("shop") == 0 {
		t.Fatal("an agent's refused approval approved")
	}
	if a := g.API(t, http.MethodPost, "/api/integrity/shop/approve", `{"kind":"tool","nam":"x"}`, g.LocalAuth(t)); a.Status != http.StatusBadRequest {
		t.Errorf("a misspelt member: %s", a)
	}
	reviewed := heldBody(g, "shop")
	if a := g.API(t, http.MethodPost, "/api/integrity/shop/approve", reviewed, g.LocalAuth(t)); a.Status != http.StatusOK {
		t.Fatalf("approve: %s", a)
	}
	names, create := list()
	if !slices.Contains(names, "shop_shop_v1_users_create") || !strings.Contains(string(create), `"note"`) {
		t.Errorf("after approval: %v, create %s", names, create)
	}
	if a := g.API(t, http.MethodPost, "/api/integrity/shop/approve", reviewed, g.LocalAuth(t)); a.Status != http.StatusNotFound {
		t.Errorf("approving again: %s", a)
	}
	if v := g.MetricValue(t, `mcpgw_integrity_events_total{action="approved",reason="",server="shop"}`); v < 2 {
		t.Errorf("approvals counted: %v", v)
	}
}

// TestIntegrityNoPathServesHeld: with the users table's changed tools held, no path a
// client or model reaches serves them: the thin list, describe_tools (which says they are
// held), search_tools in the search form, a stateless (2026-07-28) tools/list and call,
// and the admin's explain of what an agent may see.
func TestIntegrityNoPathServesHeld(t *testing.T) {
	yaml, dbPath := gatewaytest.PluginConfig(t, holdPluginChanges)
	yaml = strings.Replace(yaml, "http: {handshake: full}", "http: {handshake: thin}", 1)
	g := gatewaytest.Start(t, yaml)
	thin := g.Initialize(t, "2025-11-25", "")
	g.ToolNames(t, thin)
	gatewaytest.ExecSQL(t, dbPath, `ALTER TABLE users ADD COLUMN note TEXT`)
	waitPluginHeld(t, g, "shop", `"note"`, 6)
	const held = "shop_shop_v1_users_create"
	if names := g.ToolNames(t, thin); slices.Contains(names, held) {
		t.Errorf("thin list: %v", names)
	}
	res := g.CallTool(t, thin, "mcpgw__describe_tools", `{"names":["`+held+`","shop_shop_v1_users_count"]}`)
	if txt := res.Text(); strings.Contains(txt, `"name":"`+held+`"`) || !strings.Contains(txt, "held until an admin approves") || !strings.Contains(txt, "shop_shop_v1_users_count") {
		t.Errorf("describe_tools: %s", txt)
	}

	// A stateless caller: its list and its call.
	r := g.Do(t, gatewaytest.StatelessReq("tools/list", `{`+gatewaytest.StatelessMeta+`}`, nil))
	if strings.Contains(string(r.Body), held) || !strings.Contains(string(r.Body), "shop_shop_v1_users_count") {
		t.Errorf("stateless tools/list: %s", r.Body)
	}
	r = g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"`+held+`","arguments":{"connection":"main","name":"x"},`+gatewaytest.StatelessMeta+`}`, map[string]string{"Mcp-Name": held}))
	if !strings.Contains(string(r.Body), `"isError":true`) || !strings.Contains(string(r.Body), "held") {
		t.Errorf("stateless call to a held tool: %s", r.Body)
	}

	// The search form: a query that would match the held tool best.
	if a := g.API(t, http.MethodPut, "/api/settings", `{"handshake":"search"}`, g.LocalAuth(t)); a.Status != http.StatusOK {
		t.Fatalf("settings: %s", a)
	}
	search := g.Initialize(t, "2025-11-25", "")
	g.ToolNames(t, search)
	res = g.CallTool(t, search, "mcpgw__search_tools", `{"query":"create users","limit":20}`)
	if txt := res.Text(); strings.Contains(txt, held) || strings.Contains(txt, "shop_shop_v1_users_update") {
		t.Errorf("search_tools returns a held tool: %s", txt)
	}

	// Explain: what an agent may see.
	a := g.API(t, http.MethodGet, "/api/agents/anyone/view", "", g.LocalAuth(t))
	if a.Status != http.StatusOK || strings.Contains(string(a.Raw), held) || !strings.Contains(string(a.Raw), "shop_shop_v1_users_count") {
		t.Errorf("explain: %s", a)
	}
}

// TestUIIntegrityPageThroughGateway: the web UI's Integrity page reads the gateway's pins
// through its port: after ALTER TABLE it lists the held tools with their diff and counts
// them in the nav; "Approve all" through /ui/api (with the page's CSRF token) approves
// them, and the page then shows nothing waiting.
func TestUIIntegrityPageThroughGateway(t *testing.T) {
	yaml, dbPath := gatewaytest.PluginConfig(t, holdPluginChanges)
	g := gatewaytest.Start(t, yaml)
	c := gatewaytest.NewUIClient(t, g)
	if a := c.Do("GET", "/ui/integrity", "", nil); a.Status != http.StatusOK || !strings.Contains(a.Body, "Nothing waits for a decision.") ||
		!strings.Contains(a.Body, `data-server="shop"`) {
		t.Fatalf("the Integrity page before any change: %d\n%s", a.Status, a.Body)
	}
	gatewaytest.ExecSQL(t, dbPath, `ALTER TABLE users ADD COLUMN note TEXT`)
	waitPluginHeld(t, g, "shop", `"note"`, 6)
	a := c.Do("GET", "/ui/integrity", "", nil)
	for _, want := range []string{
		`<article class="held-def" data-kind="tool" data-name="shop_shop_v1_users_create"`,
		`data-op="added" data-path="/inputSchema/properties/note"`,
		`<span class="count">6<span class="sr-only"> waiting</span>`,
		`data-server="shop" data-action="approve">Approve all`,
	} {
		if !strings.Contains(a.Body, want) {
			t.Errorf("the Integrity page with held tools lacks %s", want)
		}
	}
	token := gatewaytest.Find(t, gatewaytest.CSRFMeta, a.Body)
	if r := c.Do("POST", "/ui/api/integrity/shop/approve", `{}`, map[string]string{"Content-Type": "application/json"}); r.Status != http.StatusForbidden {
		t.Errorf("approving without the CSRF token: %d %s", r.Status, r.Body)
	}
	if r := c.Do("POST", "/ui/api/integrity/shop/approve", heldBody(g, "shop"), map[string]string{"Content-Type": "application/json", "X-CSRF-Token": token}); r.Status != http.StatusOK {
		t.Fatalf("Approve all through /ui/api: %d %s", r.Status, r.Body)
	}
	if n := g.Reg.Integrity().HeldCount("shop"); n != 0 {
		t.Errorf("%d still held after Approve all", n)
	}
	if a := c.Do("GET", "/ui/integrity", "", nil); !strings.Contains(a.Body, "Nothing waits for a decision.") || strings.Contains(a.Body, `class="count"`) {
		t.Errorf("the Integrity page after Approve all:\n%s", a.Body)
	}
}

// heldBody is an approval of every definition of server held now, as reviewed (with
// its fingerprint).
func heldBody(g *gatewaytest.GW, server string) string {
	var defs []map[string]string
	for _, p := range g.Reg.Integrity().Pins() {
		if p.Server == server && p.Held != nil && !p.Held.Rejected {
			defs = append(defs, map[string]string{"kind": p.Kind, "name": p.Name, "hash": p.Held.Hash})
		}
	}
	b, _ := json.Marshal(map[string]any{"definitions": defs})
	return string(b)
}

// waitPluginHeld waits (10 s at most) until plugin's loaded catalogue holds marker (its
// JSON) and held definitions of it wait: the hold is recorded before the new catalogue
// replaces the old, whose approved tools are served until then.
func waitPluginHeld(t *testing.T, g *gatewaytest.GW, plugin, marker string, held int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := json.Marshal(g.Reg.Plugin(plugin).Catalog())
		if strings.Contains(string(b), marker) && g.Reg.Integrity().HeldCount(plugin) >= held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin %s: no catalogue with %s and %d held within 10s (refresh 100ms); held %d", plugin, marker, held, g.Reg.Integrity().HeldCount(plugin))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIntegrityHeldPrompt: a prompt a stdio upstream adds on an established server (the
// everything-server's test_trigger_prompt_change) is held: absent from prompts/list, and
// prompts/get and completion/complete for it answer that no such prompt exists.
func TestIntegrityHeldPrompt(t *testing.T) {
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
http: {handshake: full}
servers:
  ev: {type: stdio, command: `+gatewaytest.EverythingBin()+`}
`)
	sid := g.Initialize(t, "2025-11-25", "")
	prompts := func() string {
		return string(g.Call(t, sid, 3, "prompts/list", `{}`).Message(t).Result)
	}
	before := prompts()
	if res := g.CallTool(t, sid, "ev__test_trigger_prompt_change", `{}`); res.IsError {
		t.Fatalf("trigger: %s", res.Text())
	}
	var name string // the held prompt's name at the upstream
	deadline := time.Now().Add(10 * time.Second)
	for name == "" {
		for _, p := range g.Reg.Integrity().Pins() {
			if p.Kind == "prompt" && p.Held != nil {
				name = p.Name
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no prompt held within 10s; prompts %s", prompts())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The hold is recorded before the session's own instance's re-listed catalogue reaches
	// its view; until then prompts/list is the old one whatever the hold does.
	for !gateway.OwnCatalogHasPrompt(g.Gateway, sid, "ev", name) {
		if time.Now().After(deadline) {
			t.Fatalf("the session's catalogue of ev has no prompt %s within 10s", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	held := "ev__" + name
	if after := prompts(); strings.Contains(after, held) || after != before {
		t.Errorf("prompts/list after the change: %s (before %s), held %s", after, before, held)
	}
	if m := g.Call(t, sid, 4, "prompts/get", `{"name":"`+held+`"}`).Message(t); m.Error == nil {
		t.Errorf("prompts/get of a held prompt: %s", m.Result)
	}
	if m := g.Call(t, sid, 5, "completion/complete", `{"ref":{"type":"ref/prompt","name":"`+held+`"},"argument":{"name":"a","value":""}}`).Message(t); m.Error == nil || !strings.Contains(string(m.Error), "Unknown prompt") {
		t.Errorf("completion/complete for a held prompt: %s %s", m.Error, m.Result)
	}
}
