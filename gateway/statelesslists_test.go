package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
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

// oneServerListsConfig is baseConfig with every list on one page.
var oneServerListsConfig = strings.Replace(baseConfig, "page_size: 7", "page_size: 500", 1)

// listMeta is a stateless _meta naming client name, with the given capabilities.
func listMeta(client, caps string) string {
	return `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"` + client +
		`","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}}`
}

// listBody is the whole HTTP body of a stateless tools/list, after checking it is a list.
func listBody(t *testing.T, g *testGW, params string, hdr map[string]string) string {
	t.Helper()
	r := g.do(t, modernReq("tools/list", params, hdr))
	modernResult(t, r)
	return string(r.body)
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
	g := startGateway(t, statelessListsConfig)
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
	g := startGateway(t, oneServerListsConfig)
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
