package e2e

// Capped clients (docs/performance.md, "Capped clients"): the TypeScript SDK client,
// announcing itself as Cursor over a view of more tools than its cap (here 12, the
// config's cursor profile replacing the built-in 40, so that the view's first tools do
// not cover the ones the agent uses), gets at most its cap, the search tool among them;
// search_tools finds a tool for a query in plain words, which the client calls by its
// real name; once its agent has called tools its first list did not show, a later
// session lists them directly and calls them.

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCappedClientMostUsed(t *testing.T) {
	needGatewayBin(t)
	const capN = 12
	g := startGateway(t, listFormsConfig(t, `
clients:
  cursor: {match: ["cursor*"], name_max: 54, max_tools: 12}
agents:
  capped: {servers: [`+lfLong+`, filesystem, memory, shop]}
`))
	opts := ClientOptions{Name: "cursor-vscode", Headers: []string{"X-Agent-ID: capped"}, Timeout: 90 * time.Second}
	readGraph, allowed := "memory__read_graph", "filesystem__list_allowed_directories"

	// The first session: no usage yet. Its list fills the cap; a search in plain words
	// finds memory's read_graph, which the list does not show, and the agent calls it and
	// another unlisted tool by their real names.
	first := runAggregateClient(t, g.URL, []Step{
		{"op": "call", "name": lfSearch, "args": map[string]any{"query": "read the whole knowledge graph", "limit": 10}},
		{"op": "call", "name": readGraph, "args": map[string]any{}},
		{"op": "call", "name": readGraph, "args": map[string]any{}},
		{"op": "call", "name": allowed, "args": map[string]any{}},
	}, opts)
	if !first.OK || len(first.Results) != 4 {
		t.Fatalf("first run: %+v", first)
	}
	if len(first.Tools) != capN || !slices.Contains(first.Tools, lfSearch) {
		t.Fatalf("Cursor got %d tools (want its cap, %d, filled, with %s): %v", len(first.Tools), capN, lfSearch, first.Tools)
	}
	for _, n := range []string{readGraph, allowed} {
		if slices.Contains(first.Tools, n) {
			t.Fatalf("%s is in the cold list already; the test needs tools it does not show: %v", n, first.Tools)
		}
	}
	for i, r := range first.Results {
		if !r.OK {
			t.Fatalf("first run, step %d: %+v", i, r)
		}
	}
	if names, _ := searchFound(t, first.Results[0].Result); !slices.Contains(names, readGraph) {
		t.Errorf("search for reading the knowledge graph found %v, not %s", names, readGraph)
	}
	if text, isErr := toolResultText(first.Results[1].Result); isErr || !strings.Contains(text, "entities") {
		t.Errorf("call of %s by its real name after the search: %s", readGraph, first.Results[1].Result)
	}

	// A later session of the agent: the tools it used are listed directly, within the
	// cap, and calling them works.
	later := runAggregateClient(t, g.URL, []Step{
		{"op": "call", "name": readGraph, "args": map[string]any{}},
		{"op": "call", "name": allowed, "args": map[string]any{}},
	}, opts)
	if !later.OK || len(later.Results) != 2 {
		t.Fatalf("later run: %+v", later)
	}
	if len(later.Tools) != capN || !slices.Contains(later.Tools, lfSearch) {
		t.Errorf("later list: %d tools (want %d, with %s)", len(later.Tools), capN, lfSearch)
	}
	for _, n := range []string{readGraph, allowed} {
		if !slices.Contains(later.Tools, n) {
			t.Errorf("the agent's most used %s is not listed after use: %v", n, later.Tools)
		}
	}
	for i, r := range later.Results {
		if !r.OK {
			t.Errorf("later run, step %d: %+v", i, r)
		}
	}
}
