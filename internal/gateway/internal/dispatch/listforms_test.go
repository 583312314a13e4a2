package dispatch_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// The search form through the stateless (2026-07-28) front: the list holds the search tool
// alone, a query returns full definitions, and a found tool is called by its real name
// without a session; thin on the same front carries describe_tools.
func TestStatelessSearchForm(t *testing.T) {
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.BaseConfig, "http: {max_body_bytes: 65536, page_size: 7}",
		"http: {max_body_bytes: 65536, page_size: 7, handshake: search}", 1))
	res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/list", "{"+gatewaytest.StatelessMeta+"}", nil)))
	var tools []struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(res["tools"], &tools)
	if len(tools) != 1 || tools[0].Name != "mcpgw__search_tools" {
		t.Fatalf("search-form list on the stateless front: %s", res["tools"])
	}
	if _, more := res["nextCursor"]; more {
		t.Errorf("the search list has a next page: %s", res["nextCursor"])
	}
	res = gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"mcpgw__search_tools","arguments":{"query":"simple text"},`+gatewaytest.StatelessMeta+"}",
		map[string]string{"Mcp-Name": "mcpgw__search_tools"})))
	var sc struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res["structuredContent"], &sc); err != nil || len(sc.Tools) == 0 || len(sc.Tools) > 3 {
		t.Fatalf("search result: %v %s", err, res["structuredContent"])
	}
	names := make([]string, len(sc.Tools))
	for i, tl := range sc.Tools {
		names[i] = tl.Name
	}
	if !slices.Contains(names, "everything__test_simple_text") {
		t.Fatalf("search for simple text found %v", names)
	}
	res = gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"everything__test_simple_text","arguments":{},`+gatewaytest.StatelessMeta+"}",
		map[string]string{"Mcp-Name": "everything__test_simple_text"})))
	if !strings.Contains(string(res["content"]), "text") || string(res["isError"]) == "true" {
		t.Errorf("the found tool, called unlisted: %v", res)
	}
	// A cursor on the one-page search list is refused, not read as a thin or full page's.
	r := g.Do(t, gatewaytest.StatelessReq("tools/list", `{"cursor":"dG9vbHMAeA",`+gatewaytest.StatelessMeta+"}", nil))
	if m := r.Message(t); m.Error == nil || !strings.Contains(string(m.Error), "cursor") {
		t.Errorf("a cursor on the search list: %s", r.Body)
	}
}
