package selfplugin_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The mcpgw plugin (type mcpgw) in the running gateway: only agents that list it see its
// tools, a read-only agent sees no actions, end and restart run the admin API's code.

const selfYAML = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
# The full list: these tests read the plugin's tools by name, whatever auto would pick.
http: {handshake: full}
servers:
  everything:
    type: streamable_http
    url: {{everything}}
plugins:
  mcpgw:
    type: mcpgw
agents:
  ops: {servers: [mcpgw, everything]}
  reader: {servers: [mcpgw], read_only: true}
  coder: {servers: [everything]}
  plain: {}
`

// isUnknownTool: the answer is the -32602 Unknown tool error a missing tool gets.
func isUnknownTool(m *wire.Msg) bool {
	var e wire.ErrorObject
	return m.Error != nil && json.Unmarshal(m.Error, &e) == nil && e.Code == wire.CodeInvalidParams && strings.Contains(e.Message, "Unknown tool")
}

func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

func TestSelfPluginVisibleOnlyToAgentsThatListIt(t *testing.T) {
	g := gatewaytest.Start(t, selfYAML)
	ops := g.InitAs(t, "ops", `{}`)
	got := withPrefix(g.ToolNames(t, ops), "mcpgw_")
	want := []string{"mcpgw_list_connections", "mcpgw_list_namespaces", "mcpgw_list_resource_types",
		"mcpgw_mcpgw_v1_Agent_get", "mcpgw_mcpgw_v1_Agent_list",
		"mcpgw_mcpgw_v1_Server_get", "mcpgw_mcpgw_v1_Server_list", "mcpgw_mcpgw_v1_Server_restart",
		"mcpgw_mcpgw_v1_Session_end", "mcpgw_mcpgw_v1_Session_get", "mcpgw_mcpgw_v1_Session_list"}
	if !slices.Equal(got, want) {
		t.Errorf("ops's mcpgw tools = %v, want %v", got, want)
	}

	reader := g.InitAs(t, "reader", `{}`)
	got = withPrefix(g.ToolNames(t, reader), "mcpgw_")
	wantRO := slices.DeleteFunc(slices.Clone(want), func(n string) bool {
		return strings.HasSuffix(n, "_restart") || strings.HasSuffix(n, "_end")
	})
	if !slices.Equal(got, wantRO) {
		t.Errorf("reader's mcpgw tools = %v, want %v (no restart, no end)", got, wantRO)
	}
	r := g.Call(t, reader, 9, "tools/call", `{"name":"mcpgw_mcpgw_v1_Session_end","arguments":{"connectionId":"gateway","id":"`+ops+`","confirm":true}}`)
	if m := r.Message(t); !isUnknownTool(m) {
		t.Errorf("a read-only agent calling end: %s, want Unknown tool", r.Body)
	}

	// An agent that does not list the plugin (one with servers, one with none: the
	// plugin is never enabled by default) sees none of its tools and cannot call them.
	for _, agent := range []string{"coder", "plain"} {
		sid := g.InitAs(t, agent, `{}`)
		if got := withPrefix(g.ToolNames(t, sid), "mcpgw_"); len(got) != 0 {
			t.Errorf("%s sees %v", agent, got)
		}
		r := g.Call(t, sid, 9, "tools/call", `{"name":"mcpgw_mcpgw_v1_Session_list","arguments":{"connectionId":"gateway"}}`)
		if m := r.Message(t); !isUnknownTool(m) {
			t.Errorf("%s calling a mcpgw tool: %s, want -32602 Unknown tool", agent, r.Body)
		}
	}
	// explain says why.
	a := g.API(t, "GET", "/api/agents/coder/view", "", nil)
	if !strings.Contains(string(a.Raw), `"server": "mcpgw"`) || !strings.Contains(string(a.Raw), "not in agent coder's servers") {
		t.Errorf("the coder's view does not explain the hidden mcpgw tools: %s", a.Raw)
	}
}

func TestSelfPluginSessionsAndEnd(t *testing.T) {
	g := gatewaytest.Start(t, selfYAML)
	ops := g.InitAs(t, "ops", `{}`)
	coder := g.InitAs(t, "coder", `{}`)

	res := g.CallTool(t, ops, "mcpgw_mcpgw_v1_Session_list", `{"connectionId":"gateway"}`)
	var pg gatewaytest.Page
	if res.IsError || json.Unmarshal(res.Structured, &pg) != nil {
		t.Fatalf("list sessions: %s %s", res.Text(), res.Structured)
	}
	var mine map[string]any
	for _, it := range pg.Items {
		if it["id"] == coder {
			mine = it
		}
	}
	if mine == nil || mine["agent"] != "coder" || mine["transport"] != "streamable" || mine["live"] != true {
		t.Fatalf("the coder's session is not listed as such: %v", pg.Items)
	}
	// Only what the schema shows: no principal, conversation or credential.
	keys := slices.Sorted(maps.Keys(mine))
	if !slices.Equal(keys, []string{"agent", "calls", "created", "id", "last_used", "live", "tools", "transport"}) {
		t.Errorf("a session shows %v", keys)
	}

	// Without confirm the call is refused and the session lives on.
	res = g.CallTool(t, ops, "mcpgw_mcpgw_v1_Session_end", `{"connectionId":"gateway","id":"`+coder+`"}`)
	if !res.IsError || !strings.Contains(res.Text(), `"confirm": true`) {
		t.Fatalf("end without confirm: %s", res.Text())
	}
	if names := g.ToolNames(t, coder); len(names) == 0 {
		t.Fatal("the coder's session has no tools")
	}
	// Ending one's own session is refused.
	res = g.CallTool(t, ops, "mcpgw_mcpgw_v1_Session_end", `{"connectionId":"gateway","id":"`+ops+`","confirm":true}`)
	if !res.IsError || !strings.Contains(res.Text(), "session making the call") {
		t.Errorf("ending one's own session: %s", res.Text())
	}
	res = g.CallTool(t, ops, "mcpgw_mcpgw_v1_Session_end", `{"connectionId":"gateway","id":"`+coder+`","confirm":true}`)
	if res.IsError || !strings.Contains(string(res.Structured), coder) {
		t.Fatalf("end: %s", res.Text())
	}
	r := g.Call(t, coder, 3, "tools/list", "{}")
	if r.Status != http.StatusNotFound {
		t.Errorf("the ended session's next request: HTTP %d %s, want 404", r.Status, r.Body)
	}
	res = g.CallTool(t, ops, "mcpgw_mcpgw_v1_Session_get", `{"connectionId":"gateway","id":"`+coder+`"}`)
	if !res.IsError || !strings.Contains(res.Text(), "no Session") {
		t.Errorf("get of the ended session: %s", res.Text())
	}
	if !strings.Contains(g.Log.String(), "ended through the mcpgw plugin (agent ops") {
		t.Error("the log does not say who ended the session")
	}

	// Agents: rules without keys.
	res = g.CallTool(t, ops, "mcpgw_mcpgw_v1_Agent_get", `{"connectionId":"gateway","id":"reader"}`)
	var ag map[string]any
	if res.IsError || json.Unmarshal(res.Structured, &ag) != nil || ag["read_only"] != true || ag["source"] != "file" {
		t.Errorf("get agent reader: %s %s", res.Text(), res.Structured)
	}
}

func TestSelfPluginAndAdminRestart(t *testing.T) {
	g := gatewaytest.Start(t, selfYAML)
	ops := g.InitAs(t, "ops", `{}`)
	restarts := func() float64 {
		res := g.CallTool(t, ops, "mcpgw_mcpgw_v1_Server_get", `{"connectionId":"gateway","id":"everything"}`)
		var s map[string]any
		if res.IsError || json.Unmarshal(res.Structured, &s) != nil {
			t.Fatalf("get server: %s", res.Text())
		}
		n, _ := s["restarts"].(float64)
		return n
	}
	before := restarts()
	res := g.CallTool(t, ops, "mcpgw_mcpgw_v1_Server_restart", `{"connectionId":"gateway","id":"everything","confirm":true}`)
	if res.IsError || !strings.Contains(string(res.Structured), `"restarted":"everything"`) {
		t.Fatalf("restart: %s %s", res.Text(), res.Structured)
	}
	if got := restarts(); got != before+1 {
		t.Errorf("restarts = %v after a restart, want %v", got, before+1)
	}
	// The admin API runs the same code.
	a := g.API(t, "POST", "/api/servers/everything/restart", "", nil)
	if a.Status != http.StatusAccepted {
		t.Fatalf("POST restart: %s", a)
	}
	if got := restarts(); got != before+2 {
		t.Errorf("restarts = %v after two restarts, want %v", got, before+2)
	}
	if a := g.API(t, "POST", "/api/servers/nope/restart", "", nil); a.Status != http.StatusNotFound {
		t.Errorf("restart of an unknown server: %s", a)
	}
	res = g.CallTool(t, ops, "mcpgw_mcpgw_v1_Server_restart", `{"connectionId":"gateway","id":"nope","confirm":true}`)
	if !res.IsError || !strings.Contains(res.Text(), `no server "nope"`) {
		t.Errorf("plugin restart of an unknown server: %s", res.Text())
	}
	// The restarted server serves calls again (its tools leave the view until the new
	// connection is up: a bounded wait).
	deadline := time.Now().Add(15 * time.Second)
	for i := 10; ; i++ {
		r := g.Call(t, ops, i, "tools/call", `{"name":"everything__test_simple_text","arguments":{}}`)
		m := r.Message(t)
		var res gatewaytest.ToolResult
		if m.Error == nil && json.Unmarshal(m.Result, &res) == nil && !res.IsError && res.Text() != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted server does not answer: %s", r.Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPluginsInReadyzAndAdminAPI: /readyz and /api/plugins report each plugin's state,
// tools and connections; a plugin that is down leaves the gateway ready unless required.
func TestPluginsInReadyzAndAdminAPI(t *testing.T) {
	yaml := strings.Replace(selfYAML, "plugins:\n", `plugins:
  broken:
    type: sql
    refresh: -1s
    connections:
      db: {driver: sqlite, dsn: "/dev/null/not/a/dir/x.db", seed: /dev/null}
`, 1)
	g := gatewaytest.Start(t, yaml)
	type row struct {
		Name           string `json:"name"`
		State          string `json:"state"`
		Error          string `json:"error"`
		Tools          int    `json:"tools"`
		Required       bool   `json:"required"`
		ConnectionList []struct {
			ID, Status string
		} `json:"connection_list"`
	}
	var ready struct {
		Ready   bool  `json:"ready"`
		Plugins []row `json:"plugins"`
	}
	r := g.Do(t, gatewaytest.Req{Method: "GET", Path: "/readyz"})
	if err := json.Unmarshal(r.Body, &ready); err != nil || r.Status != http.StatusOK || !ready.Ready {
		t.Fatalf("/readyz: HTTP %d %s", r.Status, r.Body)
	}
	if len(ready.Plugins) != 2 || ready.Plugins[0].Name != "broken" || ready.Plugins[0].State != "down" || ready.Plugins[0].Error == "" {
		t.Fatalf("/readyz plugins = %+v, want broken down with its error, then mcpgw", ready.Plugins)
	}
	if p := ready.Plugins[1]; p.Name != "mcpgw" || p.State != "up" || p.Tools != 11 || len(p.ConnectionList) != 1 || p.ConnectionList[0].ID != "gateway" {
		t.Errorf("/readyz mcpgw = %+v, want up with 11 tools and the gateway connection", p)
	}
	var rows []row
	a := g.API(t, "GET", "/api/plugins", "", nil)
	if a.Status != http.StatusOK || json.Unmarshal(a.Raw, &rows) != nil || len(rows) != 2 || rows[1].Tools != 11 {
		t.Errorf("GET /api/plugins: %s", a)
	}
	if a := g.API(t, "GET", "/api/plugins/mcpgw", "", nil); a.Status != http.StatusOK || a.Obj["state"] != "up" {
		t.Errorf("GET /api/plugins/mcpgw: %s", a)
	}
	if a := g.API(t, "GET", "/api/plugins/nope", "", nil); a.Status != http.StatusNotFound {
		t.Errorf("GET /api/plugins/nope: %s", a)
	}

	// required: true makes a plugin that is down a reason to be unready.
	g2 := gatewaytest.Start(t, strings.Replace(yaml, "    refresh: -1s\n", "    refresh: -1s\n    required: true\n", 1))
	r = g2.Do(t, gatewaytest.Req{Method: "GET", Path: "/readyz"})
	if err := json.Unmarshal(r.Body, &ready); err != nil || r.Status != http.StatusServiceUnavailable || ready.Ready || !ready.Plugins[0].Required {
		t.Errorf("/readyz with a required plugin down: HTTP %d %s, want 503", r.Status, r.Body)
	}
}

// TestAdminAgentConnectionScope: connection_scope on agents of the admin API: kept as
// given ([] is none, absent is every one), refused when an id is malformed.
func TestAdminAgentConnectionScope(t *testing.T) {
	g := gatewaytest.Start(t, selfYAML)
	a := g.API(t, "PUT", "/api/agents/scoped", `{"servers":["mcpgw"],"connection_scope":["bad id!"]}`, nil)
	if a.Status != http.StatusBadRequest || !strings.Contains(string(a.Raw), "is not a connection id") {
		t.Errorf("a malformed connection id: %s", a)
	}
	a = g.API(t, "PUT", "/api/agents/scoped", `{"servers":["mcpgw"],"connection_scope":[]}`, nil)
	if a.Status != http.StatusCreated {
		t.Fatalf("PUT scoped: %s", a)
	}
	if cs, ok := a.Obj["connection_scope"].([]any); !ok || len(cs) != 0 {
		t.Errorf("connection_scope [] came back as %v", a.Obj["connection_scope"])
	}
	// With no connection, the plugin has no tools at all.
	sid := g.InitAs(t, "scoped", `{}`)
	if got := withPrefix(g.ToolNames(t, sid), "mcpgw_"); len(got) != 0 {
		t.Errorf("an agent with connection_scope [] sees %v", got)
	}
	a = g.API(t, "PUT", "/api/agents/scoped", `{"servers":["mcpgw"],"connection_scope":["gateway"]}`, nil)
	if a.Status != http.StatusOK || len(a.FieldErrors()) != 0 {
		t.Fatalf("PUT scoped to gateway: %s", a)
	}
	sid = g.InitAs(t, "scoped", `{}`)
	if got := withPrefix(g.ToolNames(t, sid), "mcpgw_"); len(got) != 11 {
		t.Errorf("an agent scoped to the gateway connection sees %v", got)
	}
	if a := g.API(t, "GET", "/api/agents/scoped", "", nil); !strings.Contains(string(a.Raw), `"gateway"`) {
		t.Errorf("GET scoped: %s", a)
	}
}

// TestCredentialScopeNarrowsPluginTools: in api_key mode, a key's connection_scope and
// read_only narrow the plugin tools its agent's sessions get.
func TestCredentialScopeNarrowsPluginTools(t *testing.T) {
	const full, none, ro = "mcpgw_full_key_0123456789", "mcpgw_none_key_0123456789", "mcpgw_ro_key_0123456789"
	yaml := strings.Replace(selfYAML, "plugins:\n", `auth:
  mode: api_key
  api_keys:
    - {agent: ops, sha256: `+auth.HashAPIKey(full)+`}
    - {agent: ops, sha256: `+auth.HashAPIKey(none)+`, connection_scope: []}
    - {agent: ops, sha256: `+auth.HashAPIKey(ro)+`, read_only: true, connection_scope: [gateway]}
plugins:
`, 1)
	g := gatewaytest.Start(t, yaml)
	names := func(key string) []string {
		r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			Header: map[string]string{"Authorization": "Bearer " + key}})
		sid := r.Header.Get("Mcp-Session-Id")
		if r.Status != http.StatusOK || sid == "" {
			t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
		}
		r = g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			Header: map[string]string{"Authorization": "Bearer " + key, "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}})
		var res struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal(r.Message(t).Result, &res); err != nil {
			t.Fatalf("tools/list: %s", r.Body)
		}
		var out []string
		for _, tl := range res.Tools {
			if strings.HasPrefix(tl.Name, "mcpgw_") {
				out = append(out, tl.Name)
			}
		}
		return out
	}
	if got := names(full); len(got) != 11 {
		t.Errorf("the unnarrowed key's mcpgw tools: %v", got)
	}
	if got := names(none); len(got) != 0 {
		t.Errorf("a key with connection_scope [] sees %v", got)
	}
	got := names(ro)
	if len(got) != 9 || slices.Contains(got, "mcpgw_mcpgw_v1_Session_end") || !slices.Contains(got, "mcpgw_mcpgw_v1_Session_list") {
		t.Errorf("a read-only key sees %v, want list and get without restart and end", got)
	}
}

// TestRestartStopsPerSessionInstances: a restart stops each session's own instance of a
// per_session server, so the session's next call starts a new one.
func TestRestartStopsPerSessionInstances(t *testing.T) {
	g := gatewaytest.Start(t, strings.Replace(selfYAML, "    url: {{everything}}\n", "    url: {{everything}}\n    mode: per_session\n", 1))
	ops := g.InitAs(t, "ops", `{}`)
	const started = `mcpgw_upstream_instances_started_total{server="everything"}`
	callOK := func(id int) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for ; ; id++ {
			r := g.Call(t, ops, id, "tools/call", `{"name":"everything__test_simple_text","arguments":{}}`)
			var res gatewaytest.ToolResult
			if m := r.Message(t); m.Error == nil && json.Unmarshal(m.Result, &res) == nil && !res.IsError {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the call does not succeed: %s", r.Body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	callOK(10)
	callOK(100)
	before := g.MetricValue(t, started)
	if before < 1 {
		t.Fatalf("%s = %v after two calls, want the session's instance counted", started, before)
	}
	if a := g.API(t, "POST", "/api/servers/everything/restart", "", nil); a.Status != http.StatusAccepted {
		t.Fatalf("restart: %s", a)
	}
	callOK(200)
	if after := g.MetricValue(t, started); after != before+1 {
		t.Errorf("%s = %v after a restart and a call, want %v (a new instance)", started, after, before+1)
	}
}
