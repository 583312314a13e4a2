package gateway_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// searchNames is a search_tools result's tool names, best first, and its confidence.
func searchNames(t *testing.T, result json.RawMessage) ([]string, string) {
	t.Helper()
	var r struct {
		Structured struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			Confidence string `json:"confidence"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("search result %s: %v", result, err)
	}
	var names []string
	for _, tl := range r.Structured.Tools {
		names = append(names, tl.Name)
	}
	return names, r.Structured.Confidence
}

// A search whose words match nothing (not even a word's first letters) answers with the
// agent's most-used tools, most used first, at confidence none, rather than the view's
// first tool: the likeliest candidates the gateway knows. Another agent, with no usage,
// still gets the first tool; a stateless request gets it too, since its answer follows
// from its own input and authorization alone.
func TestSearchMatchingNothingOffersMostUsed(t *testing.T) {
	g := gatewaytest.Start(t, cappedConfig)
	const nonsense = `{"name":"mcpgw__search_tools","arguments":{"query":"qqqzzz wwwxxx"}}`
	search := func(s capSess) ([]string, string) {
		t.Helper()
		m := agentCall(t, g, s, 60, "tools/call", nonsense)
		if m.Error != nil {
			t.Fatalf("search_tools: %s", m.Error)
		}
		return searchNames(t, m.Result)
	}
	all := g.ToolNames(t, g.Initialize(t, "2025-11-25", ""))

	s := openCapped(t, g, "ag")
	if names, conf := search(s); conf != "none" || !slices.Equal(names, all[:1]) {
		t.Fatalf("cold search for nonsense = %v at %q, want the view's first tool %v at none", names, conf, all[:1])
	}
	image, multi, text := "e1__test_image_content", "e1__test_multiple_content_types", "e1__test_simple_text"
	callCapped(t, g, s, multi, `{}`, 1)
	callCapped(t, g, s, image, `{}`, 3)
	callCapped(t, g, s, text, `{}`, 2)
	if names, conf := search(s); conf != "none" || !slices.Equal(names, []string{image, text, multi}) {
		t.Errorf("search for nonsense after use = %v at %q, want %v (most used first) at none", names, conf, []string{image, text, multi})
	}
	// A query whose words do match is ranked by them, usage aside.
	m := agentCall(t, g, s, 61, "tools/call", `{"name":"mcpgw__search_tools","arguments":{"query":"simple text"}}`)
	if names, conf := searchNames(t, m.Result); conf == "none" || len(names) == 0 || names[0] != text {
		t.Errorf("search for simple text = %v at %q, want %s first, matched", names, conf, text)
	}
	// The limit bounds the usual tools too.
	m = agentCall(t, g, s, 62, "tools/call", `{"name":"mcpgw__search_tools","arguments":{"query":"qqqzzz","limit":2}}`)
	if names, _ := searchNames(t, m.Result); !slices.Equal(names, []string{image, text}) {
		t.Errorf("nonsense with limit 2 = %v, want %v", names, []string{image, text})
	}

	if names, _ := search(openCapped(t, g, "fresh")); !slices.Equal(names, all[:1]) {
		t.Errorf("another agent's search for nonsense = %v, want the view's first tool %v", names, all[:1])
	}
	res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call",
		`{"name":"mcpgw__search_tools","arguments":{"query":"qqqzzz wwwxxx"},`+gatewaytest.StatelessMeta+"}",
		map[string]string{"Mcp-Name": "mcpgw__search_tools", "X-Agent-ID": "ag"})))
	b, _ := json.Marshal(res)
	if names, _ := searchNames(t, b); !slices.Equal(names, all[:1]) {
		t.Errorf("a stateless search for nonsense = %v, want the view's first tool %v (no usage)", names, all[:1])
	}
}
