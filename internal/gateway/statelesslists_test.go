package gateway_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// A 2026-07-28 list is a function of the request's own input (its headers and _meta) and
// the caller's authorization: the same request with the same credential gets the same
// bytes, whoever listed before it and whatever they sent.

// statelessListsConfig serves the everything server under three keys, so that one view
// holds more tools than Cursor's built-in cap of 40.
const statelessListsConfig = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
http: {page_size: 500}
servers:
  e1: {type: streamable_http, url: "{{everything}}"}
  e2: {type: streamable_http, url: "{{everything}}"}
  e3: {type: streamable_http, url: "{{everything}}"}
`

// oneServerListsConfig is gatewaytest.BaseConfig with every list on one page.
var oneServerListsConfig = strings.Replace(gatewaytest.BaseConfig, "page_size: 7", "page_size: 500", 1)

// listMeta is a stateless _meta naming client name, with the given capabilities.
func listMeta(client, caps string) string {
	return `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"` + client +
		`","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}}`
}

// listBody is the whole HTTP body of a stateless tools/list, after checking it is a list.
func listBody(t *testing.T, g *gatewaytest.GW, params string, hdr map[string]string) string {
	t.Helper()
	r := g.Do(t, gatewaytest.StatelessReq("tools/list", params, hdr))
	gatewaytest.StatelessResult(t, r)
	return string(r.Body)
}

// listedNames are the tool names of a tools/list body.
func listedNames(t *testing.T, body string) []string {
	t.Helper()
	var m struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("list body %s: %v", body, err)
	}
	names := make([]string, len(m.Result.Tools))
	for i, tl := range m.Result.Tools {
		names[i] = tl.Name
	}
	return names
}

// TestStatelessListNotByWhoCameFirst: Cursor (cap 40 tools) listing under an agent id
// another client used first, with the same capabilities, gets the list it gets when it
// comes first, in its own shape (search form within its cap); and the other client's list
// does not change when Cursor came first either.
func TestStatelessListNotByWhoCameFirst(t *testing.T) {
	g := gatewaytest.Start(t, statelessListsConfig)
	caps := `{"sampling":{}}`
	agent := func(a string) map[string]string { return map[string]string{"X-Agent-ID": a} }

	cursorFirst := listBody(t, g, listMeta("cursor-vscode", caps), agent("one"))
	otherAfter := listBody(t, g, listMeta("claude-code", caps), agent("one"))
	otherFirst := listBody(t, g, listMeta("claude-code", caps), agent("two"))
	cursorAfter := listBody(t, g, listMeta("cursor-vscode", caps), agent("two"))

	if n := len(listedNames(t, otherFirst)); n <= 40 {
		t.Fatalf("the view lists %d tools; the test needs more than Cursor's 40", n)
	}
	if n := len(listedNames(t, cursorFirst)); n > 40 {
		t.Errorf("cursor-vscode, first under its agent id, got %d tools (its cap is 40)", n)
	}
	if cursorAfter != cursorFirst {
		t.Errorf("cursor-vscode after claude-code under the same agent id got %d tools, first %d: the list varies by who came first",
			len(listedNames(t, cursorAfter)), len(listedNames(t, cursorFirst)))
	}
	if otherAfter != otherFirst {
		t.Errorf("claude-code after cursor-vscode under the same agent id got %d tools, first %d: the list varies by who came first",
			len(listedNames(t, otherAfter)), len(listedNames(t, otherFirst)))
	}
}

// TestStatelessListFormFromHeader: X-Mcp-Handshake on a stateless request selects its
// form, as on an initialize; a request without it gets the configured form, whatever the
// same caller asked for before.
func TestStatelessListFormFromHeader(t *testing.T) {
	g := gatewaytest.Start(t, oneServerListsConfig)
	meta := listMeta("t", `{}`)
	plain := listBody(t, g, meta, nil)
	thin := listBody(t, g, meta, map[string]string{"X-Mcp-Handshake": "thin"})
	search := listBody(t, g, meta, map[string]string{"X-Mcp-Handshake": "search"})
	plainAgain := listBody(t, g, meta, nil)

	has := func(body, tool string) bool { return strings.Contains(body, `"name":"`+tool+`"`) }
	if has(plain, "mcpgw__describe_tools") || has(plain, "mcpgw__search_tools") {
		t.Errorf("the small view without a header is not full: %v", listedNames(t, plain))
	}
	if !has(thin, "mcpgw__describe_tools") {
		t.Errorf("X-Mcp-Handshake: thin gave no thin list: %v", listedNames(t, thin))
	}
	if names := listedNames(t, search); len(names) != 1 || names[0] != "mcpgw__search_tools" {
		t.Errorf("X-Mcp-Handshake: search gave %v", names)
	}
	if plainAgain != plain {
		t.Errorf("the same request without a header after thin and search ones got %v, first %v", listedNames(t, plainAgain), listedNames(t, plain))
	}
}

// TestStatelessListNotByConversationHistory: auto serves a session conversation's second
// handshake thin; a stateless list has no handshake, and is the same for a conversation
// whatever was listed in it before (here under other capabilities, another gateway-side
// session).
func TestStatelessListNotByConversationHistory(t *testing.T) {
	g := gatewaytest.Start(t, oneServerListsConfig)
	conv := map[string]string{"X-Conversation-ID": "c1"}
	first := listBody(t, g, listMeta("t", `{}`), conv)
	listBody(t, g, listMeta("t", `{"sampling":{}}`), conv)
	again := listBody(t, g, listMeta("t", `{"roots":{}}`), conv)
	fresh := listBody(t, g, listMeta("t", `{"roots":{}}`), map[string]string{"X-Conversation-ID": "c2"})
	if strings.Contains(again, "mcpgw__describe_tools") || again != fresh {
		t.Errorf("a conversation's later list differs from a new conversation's: %v, want %v", listedNames(t, again), listedNames(t, fresh))
	}
	if strings.Contains(first, "mcpgw__describe_tools") {
		t.Errorf("the first list is not full: %v", listedNames(t, first))
	}
}

// TestStatelessListFormAfterReload: a config reload that changes http.handshake changes
// the form of every stateless caller's next list alike, those that listed before it too.
func TestStatelessListFormAfterReload(t *testing.T) {
	g := gatewaytest.Start(t, oneServerListsConfig)
	before := listBody(t, g, listMeta("t", `{}`), nil)
	if strings.Contains(before, "mcpgw__describe_tools") {
		t.Fatalf("the small view's default list is not full: %v", listedNames(t, before))
	}
	file := *g.Gateway.FileConfig()
	file.HTTP.Handshake = "thin"
	if err := g.Gateway.ReloadFile(&file); err != nil {
		t.Fatal(err)
	}
	after := listBody(t, g, listMeta("t", `{}`), nil)
	fresh := listBody(t, g, listMeta("t", `{"roots":{}}`), nil)
	if !strings.Contains(fresh, "mcpgw__describe_tools") {
		t.Fatalf("after a reload to thin, a new caller's list is not thin: %v", listedNames(t, fresh))
	}
	if after != fresh {
		t.Errorf("after a reload to thin, a caller that listed before got %v, a new one %v", listedNames(t, after), listedNames(t, fresh))
	}
}

// TestStatelessThinCallWithoutList: a stateless call that asks for the thin form gets the
// thin form's answer to arguments its full schema refuses (that schema, so the model can
// retry) whether or not a list was served before; one that asks for full gets the
// upstream's own answer.
func TestStatelessThinCallWithoutList(t *testing.T) {
	g := gatewaytest.Start(t, oneServerListsConfig)
	const tool = "everything__test_x_mcp_header"
	call := func(form string) string {
		hdr := map[string]string{"Mcp-Name": tool}
		if form != "" {
			hdr["X-Mcp-Handshake"] = form
		}
		r := g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"`+tool+`","arguments":{"level":"high"},`+gatewaytest.StatelessMeta+`}`, hdr))
		return string(r.Body)
	}
	if body := call("thin"); !strings.Contains(body, "full input schema") {
		t.Errorf("a thin call with arguments its schema refuses, before any list: %s", body)
	}
	if body := call("full"); strings.Contains(body, "full input schema") {
		t.Errorf("a full-form call got the thin form's schema answer: %s", body)
	}
}

// TestStatelessListFollowsAgentServers: a reload that gives an agent another server
// shows its tools in every stateless caller's next list alike, those that listed before it
// too.
func TestStatelessListFollowsAgentServers(t *testing.T) {
	g := gatewaytest.Start(t, statelessListsConfig+"agents:\n  a: {servers: [e1]}\n")
	agent := map[string]string{"X-Agent-ID": "a"}
	before := listBody(t, g, listMeta("t", `{}`), agent)
	if strings.Contains(before, `"e2__`) || !strings.Contains(before, `"e1__`) {
		t.Fatalf("agent a with servers [e1] lists %v", listedNames(t, before))
	}
	file := *g.Gateway.FileConfig()
	a := *file.Agents["a"]
	a.Servers = append(slices.Clone(a.Servers), a.Servers[0])
	a.Servers[1].Name = "e2"
	file.Agents = maps.Clone(file.Agents)
	file.Agents["a"] = &a
	if err := g.Gateway.ReloadFile(&file); err != nil {
		t.Fatal(err)
	}
	after := listBody(t, g, listMeta("t", `{}`), agent)
	fresh := listBody(t, g, listMeta("t", `{"roots":{}}`), agent)
	if !strings.Contains(fresh, `"e2__`) {
		t.Fatalf("after the reload, a new caller of agent a does not list e2: %v", listedNames(t, fresh))
	}
	if after != fresh {
		t.Errorf("after the reload, a caller of agent a that listed before got %v, a new one %v", listedNames(t, after), listedNames(t, fresh))
	}
}

// TestStatelessClientInfoVariantsBounded: client info keys the gateway-side session too,
// and stays within the bound of sessions per caller: a caller that names another client
// (or version) on every request holds at most 8 sessions.
func TestStatelessClientInfoVariantsBounded(t *testing.T) {
	g := gatewaytest.Start(t, oneServerListsConfig)
	for i := range 20 {
		listBody(t, g, listMeta("client-"+strconv.Itoa(i), `{}`), nil)
	}
	if n := g.MetricValue(t, `mcpgw_sessions_active{agent="default",transport="stateless"}`); n < 1 || n > 8 {
		t.Errorf("one caller naming 20 clients holds %v gateway-side sessions, want 1 to 8", n)
	}
}
