package dispatch_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The sql plugin in the running gateway: its tools in tools/list next to upstream tools,
// calls through the plugin's dispatcher, the agent rules, confirmation by elicitation and
// by "confirm": true, cancellation, and list_changed when a table appears.

func TestPluginToolsListAndCall(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, "")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", "")
	names := g.ToolNames(t, sid)
	for _, want := range []string{"everything__test_simple_text", "shop_shop_v1_users_find", "shop_shop_v1_users_create",
		"shop_shop_v1_users_delete", "shop_scratch_v1_users_get", "shop_list_connections", "shop_shop_v1_users_truncate"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s; it has %v", want, names)
		}
	}

	// find with two predicates, a page at a time.
	var got []string
	cursor := ""
	for i := 0; i < 10; i++ {
		args := `{"connectionId":"main","filter":[{"field":"team","operator":"eq","value":"core"},{"field":"age","operator":"gte","value":33}],"pageSize":2`
		if cursor != "" {
			args += `,"cursor":` + string(wire.Quote(cursor))
		}
		res := g.CallTool(t, sid, "shop_shop_v1_users_find", args+"}")
		if res.IsError {
			t.Fatalf("find: %s", res.Text())
		}
		var p gatewaytest.Page
		if err := json.Unmarshal(res.Structured, &p); err != nil {
			t.Fatalf("find: structuredContent %s: %v", res.Structured, err)
		}
		if len(p.Items) > 2 {
			t.Fatalf("find: %d items on a page of 2", len(p.Items))
		}
		for _, it := range p.Items {
			got = append(got, it["name"].(string))
		}
		if cursor = p.NextCursor; cursor == "" {
			break
		}
	}
	if want := []string{"ada", "grace", "margaret", "ken"}; !slices.Equal(got, want) {
		t.Errorf("find team=core AND age>=33: %v, want %v", got, want)
	}

	// create, update, delete (with confirm: true).
	res := g.CallTool(t, sid, "shop_shop_v1_users_create", `{"connectionId":"main","name":"barbara","age":50,"team":"db"}`)
	if res.IsError {
		t.Fatalf("create: %s", res.Text())
	}
	var row map[string]any
	_ = json.Unmarshal(res.Structured, &row)
	id := fmt.Sprint(row["id"])
	if res = g.CallTool(t, sid, "shop_shop_v1_users_update", `{"connectionId":"main","id":"`+id+`","age":51}`); res.IsError || !strings.Contains(res.Text(), `"age":51`) {
		t.Fatalf("update: %s", res.Text())
	}
	if res = g.CallTool(t, sid, "shop_shop_v1_users_delete", `{"connectionId":"main","id":"`+id+`"}`); !res.IsError || !strings.Contains(res.Text(), `"confirm": true`) {
		t.Fatalf("delete without confirm: %v %s, want a refusal asking for confirm", res.IsError, res.Text())
	}
	if res = g.CallTool(t, sid, "shop_shop_v1_users_get", `{"connectionId":"main","id":"`+id+`"}`); res.IsError {
		t.Fatalf("the refused delete removed the row: %s", res.Text())
	}
	if res = g.CallTool(t, sid, "shop_shop_v1_users_delete", `{"connectionId":"main","id":"`+id+`","confirm":true}`); res.IsError || !strings.Contains(res.Text(), "barbara") {
		t.Fatalf("delete with confirm: %s", res.Text())
	}
	if res = g.CallTool(t, sid, "shop_shop_v1_users_get", `{"connectionId":"main","id":"`+id+`"}`); !res.IsError {
		t.Fatalf("get after delete: %s", res.Text())
	}

	// SQL in values, ids, field names and connection ids is refused or harmless.
	for _, c := range []struct{ tool, args, want string }{
		{"shop_shop_v1_users_get", `{"connectionId":"main","id":"1 OR 1=1"}`, "integer"},
		{"shop_shop_v1_users_find", `{"connectionId":"main","filter":[{"field":"name; DROP TABLE users","operator":"eq","value":"x"}]}`, "invalid arguments"},
		{"shop_shop_v1_users_find", `{"connectionId":"main","filter":[{"field":"name","operator":"eq) OR 1=1 --","value":"x"}]}`, "invalid arguments"},
		{"shop_shop_v1_users_list", `{"connectionId":"main; DROP TABLE users"}`, "not available"},
	} {
		if res := g.CallTool(t, sid, c.tool, c.args); !res.IsError || !strings.Contains(res.Text(), c.want) {
			t.Errorf("%s %s: isError %v %q, want a refusal containing %q", c.tool, c.args, res.IsError, res.Text(), c.want)
		}
	}
	res = g.CallTool(t, sid, "shop_shop_v1_users_find", `{"connectionId":"main","filter":[{"field":"name","operator":"eq","value":"x' OR '1'='1"}]}`)
	if res.IsError || !strings.Contains(res.Text(), `"items":[]`) {
		t.Errorf("find with SQL in a value: %s, want no rows", res.Text())
	}
	if res = g.CallTool(t, sid, "shop_shop_v1_users_count", `{"connectionId":"main"}`); res.IsError || !strings.Contains(res.Text(), `"count":5`) {
		t.Errorf("count after the injection attempts: %s, want 5", res.Text())
	}

	// Plugin calls are counted like tool calls.
	mr := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/metrics"})
	if !bytes.Contains(mr.Body, []byte(`mcpgw_tool_calls_total{agent="default",outcome="ok",server="shop",tool="shop_shop_v1_users_find"} 3`)) {
		t.Errorf("metrics lack the plugin's find calls:\n%s", gatewaytest.GrepLines(mr.Body, "shop"))
	}
}

func TestPluginAgentRules(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, `
agents:
  reader: {servers: [shop], read_only: true}
  scoped: {servers: [shop, everything], connection_scope: [scratch], tools: {deny: ["shop_*_truncate"]}}
  upstream-only: {servers: [everything]}
  thin: {servers: [shop], handshake: thin}
  tasked: {}
tasks:
  t1: {enabled_mcp_servers: [shop]}
`)
	g := gatewaytest.Start(t, yaml)

	reader := g.ToolNames(t, g.InitAs(t, "reader", "{}"))
	for _, n := range reader {
		for _, w := range []string{"_create", "_update", "_delete", "_truncate", "everything__"} {
			if strings.Contains(n, w) {
				t.Errorf("read-only agent sees %s", n)
			}
		}
	}
	if !slices.Contains(reader, "shop_shop_v1_users_find") || !slices.Contains(reader, "shop_shop_v1_users_count") {
		t.Errorf("read-only agent lacks find or count (a read-only action): %v", reader)
	}

	ssid := g.InitAs(t, "scoped", "{}")
	scoped := g.ToolNames(t, ssid)
	if slices.Contains(scoped, "shop_shop_v1_users_get") || !slices.Contains(scoped, "shop_scratch_v1_users_get") {
		t.Errorf("connection_scope [scratch]: tools %v", scoped)
	}
	if slices.Contains(scoped, "shop_scratch_v1_users_truncate") || !slices.Contains(scoped, "shop_scratch_v1_users_delete") {
		t.Errorf("tools.deny shop_*_truncate: tools %v", scoped)
	}
	if res := g.CallTool(t, ssid, "shop_scratch_v1_users_get", `{"connectionId":"main","id":"1"}`); !res.IsError || !strings.Contains(res.Text(), "not available") {
		t.Errorf("a connection outside the scope: %s", res.Text())
	}
	if r := g.Call(t, ssid, 3, "tools/call", `{"name":"shop_scratch_v1_users_truncate","arguments":{"connectionId":"scratch","confirm":true}}`); r.Message(t).Error == nil {
		t.Errorf("a denied plugin tool was called: %s", r.Body)
	}

	up := g.ToolNames(t, g.InitAs(t, "upstream-only", "{}"))
	for _, n := range up {
		if strings.HasPrefix(n, "shop_") {
			t.Errorf("an agent without the plugin sees %s", n)
		}
	}

	// A thin session that sends bad arguments gets the tool's full schema, as for upstream
	// tools; good arguments reach the plugin.
	thin := g.InitAs(t, "thin", "{}")
	g.ToolNames(t, thin)
	if res := g.CallTool(t, thin, "shop_shop_v1_users_get", `{"connectionId":"main"}`); !res.IsError || !strings.Contains(string(res.Structured), "inputSchema") {
		t.Errorf("thin session, bad arguments: %s %s", res.Text(), res.Structured)
	}
	if res := g.CallTool(t, thin, "shop_shop_v1_users_get", `{"connectionId":"main","id":"3"}`); res.IsError || !strings.Contains(res.Text(), "linus") {
		t.Errorf("thin session, good arguments: %s", res.Text())
	}

	// A task enables the plugin like a server.
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"plugins_test","version":"1"}}}`,
		Header: map[string]string{"X-Agent-ID": "tasked", "X-Task-ID": "t1"}})
	tsid := r.Header.Get("Mcp-Session-Id")
	tasked := g.ToolNames(t, tsid)
	if !slices.Contains(tasked, "shop_shop_v1_users_find") || slices.ContainsFunc(tasked, func(n string) bool { return strings.HasPrefix(n, "everything__") }) {
		t.Errorf("task enabling only shop: tools %v", tasked)
	}

	// explain and the admin view list plugin tools with their decisions.
	v := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/api/agents/scoped/view"})
	var view struct {
		Tools []struct {
			Tool     string `json:"tool"`
			Server   string `json:"server"`
			Admitted bool   `json:"admitted"`
			Rule     string `json:"rule"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(v.Body, &view); err != nil {
		t.Fatalf("/api/agents/scoped/view: HTTP %d %s", v.Status, v.Body)
	}
	seen := map[string]bool{}
	for _, d := range view.Tools {
		switch d.Tool {
		case "shop_scratch_v1_users_find":
			seen[d.Tool] = d.Admitted && d.Server == "shop"
		case "shop_scratch_v1_users_truncate":
			seen[d.Tool] = !d.Admitted && strings.Contains(d.Rule, "deny")
		}
	}
	if !seen["shop_scratch_v1_users_find"] || !seen["shop_scratch_v1_users_truncate"] {
		t.Errorf("agent view: plugin decisions %v in %s", seen, v.Body)
	}
}

// streamCall posts a request and returns the SSE messages of its answer as they come.
func streamCall(g *gatewaytest.GW, t *testing.T, sid, body string) (next func() (*wire.Msg, error)) {
	t.Helper()
	hr, err := http.NewRequest(http.MethodPost, g.Base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range gatewaytest.SessionHeaders(sid, "2025-11-25") {
		hr.Header.Set(k, v)
	}
	hresp, err := gatewaytest.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hresp.Body.Close() })
	if !strings.HasPrefix(hresp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(hresp.Body)
		t.Fatalf("want an event stream, got HTTP %d %s", hresp.StatusCode, b)
	}
	sr := wire.NewSSEReader(bufio.NewReader(hresp.Body), 1<<20)
	return func() (*wire.Msg, error) {
		for {
			ev, err := sr.Next()
			if err != nil {
				return nil, err
			}
			if len(bytes.TrimSpace(ev.Data)) == 0 {
				continue
			}
			return wire.Parse(ev.Data)
		}
	}
}

// elicitationOf reads a call's stream up to its elicitation request.
func elicitationOf(t *testing.T, next func() (*wire.Msg, error)) *wire.Msg {
	t.Helper()
	for {
		m, err := next()
		if err != nil {
			t.Fatalf("the call's stream ended before an elicitation request: %v", err)
		}
		if m.Method == "elicitation/create" {
			return m
		}
		if m.IsResponse() {
			t.Fatalf("the call answered without asking: %s %s", m.Result, m.Error)
		}
	}
}

func responseOf(t *testing.T, next func() (*wire.Msg, error)) *wire.Msg {
	t.Helper()
	for {
		m, err := next()
		if err != nil {
			t.Fatalf("the call's stream ended before its response: %v", err)
		}
		if m.IsResponse() {
			return m
		}
	}
}

func TestPluginConfirmByElicitation(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, "")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", `{"elicitation":{}}`)

	// The client declared elicitation: delete has no confirm argument and asks instead.
	r := g.Call(t, sid, 2, "tools/list", "{}")
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(r.Message(t).Result, &list)
	for _, tl := range list.Tools {
		if tl.Name == "shop_shop_v1_users_delete" && bytes.Contains(tl.InputSchema, []byte(`"confirm"`)) {
			t.Errorf("an elicitation session's delete still takes confirm: %s", tl.InputSchema)
		}
	}

	answer := func(m *wire.Msg, result string) {
		t.Helper()
		a := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")})
		if a.Status != http.StatusAccepted {
			t.Fatalf("answering the elicitation: HTTP %d %s", a.Status, a.Body)
		}
	}

	// Declined: nothing is deleted.
	next := streamCall(g, t, sid, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"shop_shop_v1_users_delete","arguments":{"connectionId":"main","id":"1"}}}`)
	el := elicitationOf(t, next)
	if !strings.Contains(string(el.Params), "users") || !strings.Contains(string(el.Params), "requestedSchema") {
		t.Errorf("elicitation params: %s", el.Params)
	}
	answer(el, `{"action":"decline"}`)
	m := responseOf(t, next)
	var res gatewaytest.ToolResult
	_ = json.Unmarshal(m.Result, &res)
	if !res.IsError || !strings.Contains(res.Text(), "declined") {
		t.Fatalf("declined delete: %s", m.Result)
	}
	if res := g.CallTool(t, sid, "shop_shop_v1_users_get", `{"connectionId":"main","id":"1"}`); res.IsError {
		t.Fatalf("a declined delete removed the row: %s", res.Text())
	}

	// Accepted: deleted.
	next = streamCall(g, t, sid, `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"shop_shop_v1_users_delete","arguments":{"connectionId":"main","id":"1"}}}`)
	answer(elicitationOf(t, next), `{"action":"accept","content":{"confirm":true}}`)
	m = responseOf(t, next)
	res = gatewaytest.ToolResult{}
	_ = json.Unmarshal(m.Result, &res)
	if res.IsError || !strings.Contains(res.Text(), "ada") {
		t.Fatalf("accepted delete: %s", m.Result)
	}

	// Cancelled by the client while the user is asked: the stream ends with no answer,
	// and nothing is deleted.
	next = streamCall(g, t, sid, `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"shop_shop_v1_users_delete","arguments":{"connectionId":"main","id":"2"}}}`)
	elicitationOf(t, next)
	c := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":13}}`, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")})
	if c.Status != http.StatusAccepted {
		t.Fatalf("cancellation: HTTP %d", c.Status)
	}
	for {
		m, err := next()
		if err != nil {
			break
		}
		if m.IsResponse() {
			t.Errorf("a cancelled plugin call got a response: %s", m.Result)
		}
	}
	if res := g.CallTool(t, sid, "shop_shop_v1_users_get", `{"connectionId":"main","id":"2"}`); res.IsError {
		t.Fatalf("a cancelled delete removed the row: %s", res.Text())
	}
}

func TestPluginListChanged(t *testing.T) {
	yaml, dbPath := gatewaytest.PluginConfig(t, `
agents:
  with: {servers: [shop]}
  without: {servers: [everything]}
`)
	g := gatewaytest.Start(t, yaml)
	sid := g.InitAs(t, "with", "{}")
	other := g.InitAs(t, "without", "{}")
	before := g.ToolNames(t, sid)
	g.ToolNames(t, other)
	if slices.Contains(before, "shop_shop_v1_teams_list") {
		t.Fatal("teams listed before the table exists")
	}
	hr, err := http.NewRequest(http.MethodGet, g.Base+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Accept", "text/event-stream")
	for k, v := range gatewaytest.SessionHeaders(sid, "2025-11-25") {
		hr.Header.Set(k, v)
	}
	stream, err := gatewaytest.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()

	gatewaytest.ExecSQL(t, dbPath, `CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT)`)

	// In the default config (integrity.plugin_changes: follow) the new table's tools
	// appear at once, announced with list_changed: no admin approves them first.
	sr := wire.NewSSEReader(bufio.NewReader(stream.Body), 1<<20)
	got := make(chan string, 1)
	go func() {
		for {
			ev, err := sr.Next()
			if err != nil {
				got <- "stream ended: " + err.Error()
				return
			}
			if m, err := wire.Parse(ev.Data); err == nil && m.Method != "" {
				got <- m.Method
				return
			}
		}
	}()
	select {
	case m := <-got:
		if m != "notifications/tools/list_changed" {
			t.Fatalf("GET stream: %s, want notifications/tools/list_changed", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed within 10s of the new table")
	}
	if after := g.ToolNames(t, sid); !slices.Contains(after, "shop_shop_v1_teams_list") {
		t.Errorf("after list_changed: %v lacks the new table's tools", after)
	}
	// Only the session whose view changed was told.
	mr := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/metrics"})
	if !bytes.Contains(mr.Body, []byte("mcpgw_list_changed_sent_total 1\n")) {
		t.Errorf("list_changed sent:\n%s", gatewaytest.GrepLines(mr.Body, "list_changed"))
	}
}
