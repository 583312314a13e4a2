package gateway_test

import (
	"database/sql"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway"
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
	yaml, dbPath := pluginConfig(t, holdPluginChanges)
	yaml = strings.Replace(yaml, "plugins:\n", "auth:\n  mode: api_key\n  api_keys:\n    - {agent: dev, sha256: "+auth.HashAPIKey(agentKey)+"}\nplugins:\n", 1)
	g := startGateway(t, yaml)
	agent := map[string]string{"Authorization": "Bearer " + agentKey}
	r := g.do(t, req{body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, header: agent})
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d %s", r.status, r.body)
	}
	list := func() (names []string, create json.RawMessage) {
		t.Helper()
		r := g.do(t, req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: map[string]string{"Authorization": "Bearer " + agentKey, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}})
		var res struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(r.message(t).Result, &res); err != nil {
			t.Fatalf("tools/list: %v in %s", err, r.body)
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

	execSQL(t, dbPath, `ALTER TABLE users ADD COLUMN note TEXT`)
	waitPluginHeld(t, g, "shop", `"note"`, 6)
	names, _ := list()
	if slices.Contains(names, "shop_shop_v1_users_create") || slices.Contains(names, "shop_shop_v1_users_update") {
		t.Errorf("held tools are listed: %v", names)
	}
	if !slices.Contains(names, "shop_shop_v1_users_count") {
		t.Errorf("an unchanged tool of the table is gone: %v", names)
	}
	call := g.do(t, req{body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"shop_shop_v1_users_create","arguments":{"connection":"main","name":"x"}}}`,
		header: map[string]string{"Authorization": "Bearer " + agentKey, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}})
	if res := string(call.message(t).Result); !strings.Contains(res, `"isError":true`) || !strings.Contains(res, "held") {
		t.Errorf("a call to a held tool: %s", call.body)
	}

	a := g.api(t, http.MethodGet, "/api/integrity?server=shop&state=held", "", g.localAuth(t))
	var held struct {
		Definitions []struct {
			Name, State string
			Diff        []struct{ Path, Op string }
		}
	}
	if err := json.Unmarshal(a.raw, &held); err != nil || a.status != http.StatusOK {
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
	if a := g.api(t, http.MethodPost, "/api/integrity/shop/approve", `{}`, agent); a.status < 400 {
		t.Fatalf("an agent's key approved: %s", a)
	}
	if g.reg.Integrity().HeldCount("shop") == 0 {
		t.Fatal("an agent's refused approval approved")
	}
	if a := g.api(t, http.MethodPost, "/api/integrity/shop/approve", `{"kind":"tool","nam":"x"}`, g.localAuth(t)); a.status != http.StatusBadRequest {
		t.Errorf("a misspelt member: %s", a)
	}
	reviewed := heldBody(g, "shop")
	if a := g.api(t, http.MethodPost, "/api/integrity/shop/approve", reviewed, g.localAuth(t)); a.status != http.StatusOK {
		t.Fatalf("approve: %s", a)
	}
	names, create := list()
	if !slices.Contains(names, "shop_shop_v1_users_create") || !strings.Contains(string(create), `"note"`) {
		t.Errorf("after approval: %v, create %s", names, create)
	}
	if a := g.api(t, http.MethodPost, "/api/integrity/shop/approve", reviewed, g.localAuth(t)); a.status != http.StatusNotFound {
		t.Errorf("approving again: %s", a)
	}
	if v := g.metricValue(t, `mcpgw_integrity_events_total{action="approved",reason="",server="shop"}`); v < 2 {
		t.Errorf("approvals counted: %v", v)
	}
}

// TestIntegrityNoPathServesHeld: with the users table's changed tools held, no path a
// client or model reaches serves them: the thin list, describe_tools (which says they are
// held), search_tools in the search form, a stateless (2026-07-28) tools/list and call,
// and the admin's explain of what an agent may see.
func TestIntegrityNoPathServesHeld(t *testing.T) {
	yaml, dbPath := pluginConfig(t, holdPluginChanges)
	yaml = strings.Replace(yaml, "http: {handshake: full}", "http: {handshake: thin}", 1)
	g := startGateway(t, yaml)
	thin := g.initialize(t, "2025-11-25", "")
	g.toolNames(t, thin)
	execSQL(t, dbPath, `ALTER TABLE users ADD COLUMN note TEXT`)
	waitPluginHeld(t, g, "shop", `"note"`, 6)
	const held = "shop_shop_v1_users_create"
	if names := g.toolNames(t, thin); slices.Contains(names, held) {
		t.Errorf("thin list: %v", names)
	}
	res := g.callTool(t, thin, "mcpgw__describe_tools", `{"names":["`+held+`","shop_shop_v1_users_count"]}`)
	if txt := res.text(); strings.Contains(txt, `"name":"`+held+`"`) || !strings.Contains(txt, "held until an admin approves") || !strings.Contains(txt, "shop_shop_v1_users_count") {
		t.Errorf("describe_tools: %s", txt)
	}

	// A stateless caller: its list and its call.
	r := g.do(t, modernReq("tools/list", `{`+modernMeta+`}`, nil))
	if strings.Contains(string(r.body), held) || !strings.Contains(string(r.body), "shop_shop_v1_users_count") {
		t.Errorf("stateless tools/list: %s", r.body)
	}
	r = g.do(t, modernReq("tools/call", `{"name":"`+held+`","arguments":{"connection":"main","name":"x"},`+modernMeta+`}`, map[string]string{"Mcp-Name": held}))
	if !strings.Contains(string(r.body), `"isError":true`) || !strings.Contains(string(r.body), "held") {
		t.Errorf("stateless call to a held tool: %s", r.body)
	}

	// The search form: a query that would match the held tool best.
	if a := g.api(t, http.MethodPut, "/api/settings", `{"handshake":"search"}`, g.localAuth(t)); a.status != http.StatusOK {
		t.Fatalf("settings: %s", a)
	}
	search := g.initialize(t, "2025-11-25", "")
	g.toolNames(t, search)
	res = g.callTool(t, search, "mcpgw__search_tools", `{"query":"create users","limit":20}`)
	if txt := res.text(); strings.Contains(txt, held) || strings.Contains(txt, "shop_shop_v1_users_update") {
		t.Errorf("search_tools returns a held tool: %s", txt)
	}

	// Explain: what an agent may see.
	a := g.api(t, http.MethodGet, "/api/agents/anyone/view", "", g.localAuth(t))
	if a.status != http.StatusOK || strings.Contains(string(a.raw), held) || !strings.Contains(string(a.raw), "shop_shop_v1_users_count") {
		t.Errorf("explain: %s", a)
	}
}

// TestUIIntegrityPageThroughGateway: the web UI's Integrity page reads the gateway's pins
// through its port: after ALTER TABLE it lists the held tools with their diff and counts
// them in the nav; "Approve all" through /ui/api (with the page's CSRF token) approves
// them, and the page then shows nothing waiting.
func TestUIIntegrityPageThroughGateway(t *testing.T) {
	yaml, dbPath := pluginConfig(t, holdPluginChanges)
	g := startGateway(t, yaml)
	c := newUIClient(t, g)
	if a := c.do("GET", "/ui/integrity", "", nil); a.status != http.StatusOK || !strings.Contains(a.body, "Nothing waits for a decision.") ||
		!strings.Contains(a.body, `data-server="shop"`) {
		t.Fatalf("the Integrity page before any change: %d\n%s", a.status, a.body)
	}
	execSQL(t, dbPath, `ALTER TABLE users ADD COLUMN note TEXT`)
	waitPluginHeld(t, g, "shop", `"note"`, 6)
	a := c.do("GET", "/ui/integrity", "", nil)
	for _, want := range []string{
		`<article class="held-def" data-kind="tool" data-name="shop_shop_v1_users_create"`,
		`data-op="added" data-path="/inputSchema/properties/note"`,
		`<span class="count">6<span class="sr-only"> waiting</span>`,
		`data-server="shop" data-action="approve">Approve all`,
	} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the Integrity page with held tools lacks %s", want)
		}
	}
	token := find(t, csrfMeta, a.body)
	if r := c.do("POST", "/ui/api/integrity/shop/approve", `{}`, map[string]string{"Content-Type": "application/json"}); r.status != http.StatusForbidden {
		t.Errorf("approving without the CSRF token: %d %s", r.status, r.body)
	}
	if r := c.do("POST", "/ui/api/integrity/shop/approve", heldBody(g, "shop"), map[string]string{"Content-Type": "application/json", "X-CSRF-Token": token}); r.status != http.StatusOK {
		t.Fatalf("Approve all through /ui/api: %d %s", r.status, r.body)
	}
	if n := g.reg.Integrity().HeldCount("shop"); n != 0 {
		t.Errorf("%d still held after Approve all", n)
	}
	if a := c.do("GET", "/ui/integrity", "", nil); !strings.Contains(a.body, "Nothing waits for a decision.") || strings.Contains(a.body, `class="count"`) {
		t.Errorf("the Integrity page after Approve all:\n%s", a.body)
	}
}

// heldBody is an approval of every definition of server held now, as reviewed (with
// its fingerprint).
func heldBody(g *testGW, server string) string {
	var defs []map[string]string
	for _, p := range g.reg.Integrity().Pins() {
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
func waitPluginHeld(t *testing.T, g *testGW, plugin, marker string, held int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := json.Marshal(g.reg.Plugin(plugin).Catalog())
		if strings.Contains(string(b), marker) && g.reg.Integrity().HeldCount(plugin) >= held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin %s: no catalogue with %s and %d held within 10s (refresh 100ms); held %d", plugin, marker, held, g.reg.Integrity().HeldCount(plugin))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIntegrityHeldPrompt: a prompt a stdio upstream adds on an established server (the
// everything-server's test_trigger_prompt_change) is held: absent from prompts/list, and
// prompts/get and completion/complete for it answer that no such prompt exists.
func TestIntegrityHeldPrompt(t *testing.T) {
	g := startGateway(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
http: {handshake: full}
servers:
  ev: {type: stdio, command: `+everythingBin+`}
`)
	sid := g.initialize(t, "2025-11-25", "")
	prompts := func() string {
		return string(g.call(t, sid, 3, "prompts/list", `{}`).message(t).Result)
	}
	before := prompts()
	if res := g.callTool(t, sid, "ev__test_trigger_prompt_change", `{}`); res.IsError {
		t.Fatalf("trigger: %s", res.text())
	}
	var name string // the held prompt's name at the upstream
	deadline := time.Now().Add(10 * time.Second)
	for name == "" {
		for _, p := range g.reg.Integrity().Pins() {
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
	for !gateway.OwnCatalogHasPrompt(g.gw, sid, "ev", name) {
		if time.Now().After(deadline) {
			t.Fatalf("the session's catalogue of ev has no prompt %s within 10s", name)
		}
		time.Sleep(10 * time.Millisecond)
	}
	held := "ev__" + name
	if after := prompts(); strings.Contains(after, held) || after != before {
		t.Errorf("prompts/list after the change: %s (before %s), held %s", after, before, held)
	}
	if m := g.call(t, sid, 4, "prompts/get", `{"name":"`+held+`"}`).message(t); m.Error == nil {
		t.Errorf("prompts/get of a held prompt: %s", m.Result)
	}
	if m := g.call(t, sid, 5, "completion/complete", `{"ref":{"type":"ref/prompt","name":"`+held+`"},"argument":{"name":"a","value":""}}`).message(t); m.Error == nil || !strings.Contains(string(m.Error), "Unknown prompt") {
		t.Errorf("completion/complete for a held prompt: %s %s", m.Error, m.Result)
	}
}

// execSQL runs one statement on the SQLite file at dbPath, as another program would,
// waiting for the lock the plugin's refresh may hold (busy_timeout).
func execSQL(t *testing.T, dbPath, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}
