package e2e

// List forms and clients' limits (docs/sessions.md, "List forms"; docs/config.md,
// "Clients"): the TypeScript SDK client in search form finds a tool with search_tools and
// calls it by its real name, which it was never listed; the audit log and the metrics carry
// that real name; the search list's bytes are the same for two sessions with the same view.
// A client announcing itself as Cursor gets names within its profile's limit (54: 60 less
// the "mcpgw" key Cursor counts with them) and at most 40 tools, and a shortened name is
// callable; every name VS Code gets matches its pattern.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// listFormsConfig serves the npm everything, filesystem and memory servers and the demo sql
// plugin; everything runs under a long server name, so its longer tool names pass Cursor's
// limit while staying within naming.max_length (64).
func listFormsConfig(t *testing.T, extra string) string {
	work := t.TempDir()
	allowed := filepath.Join(work, "allowed")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "notes.txt"), []byte("search form e2e\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(repoRoot(t), "examples", "shop.sql")
	return `
log: {level: info, format: text}
http: {page_size: 1000}
upstream: {call_timeout: 60s}
servers:
  everything-reference-server-long:
    type: stdio
    command: {{node}}
    args: [` + yamlQuote(serverEverythingScript(t)) + `]
  filesystem: {type: stdio, command: {{node}}, args: [` + yamlQuote(npmServerScript(t, "server-filesystem")) + `, ` + yamlQuote(allowed) + `]}
  memory:
    type: stdio
    command: {{node}}
    args: [` + yamlQuote(npmServerScript(t, "server-memory")) + `]
    env: {MEMORY_FILE_PATH: ` + yamlQuote(filepath.Join(work, "memory.jsonl")) + `}
plugins:
  shop:
    type: sql
    connections:
      shop: {driver: sqlite, dsn: ` + yamlQuote(filepath.Join(work, "shop.db")) + `, seed: ` + yamlQuote(seed) + `}
` + extra
}

// gatewayOwnTool reports a tool the gateway itself lists (a thin list's describe_tools, a
// search list's search_tools): it is no server's, and every session may list it.
func gatewayOwnTool(name string) bool {
	return name == "mcpgw__describe_tools" || name == lfSearch
}

const (
	lfLong   = "everything-reference-server-long"
	lfSearch = "mcpgw__search_tools"
)

// searchFound is the names in a search_tools result's structured content, best first,
// with their definitions.
func searchFound(t *testing.T, res json.RawMessage) ([]string, map[string]json.RawMessage) {
	t.Helper()
	var r struct {
		StructuredContent struct {
			Tools []json.RawMessage `json:"tools"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.IsError {
		t.Fatalf("search_tools result: %v (isError %v): %s", err, r.IsError, res)
	}
	var names []string
	defs := map[string]json.RawMessage{}
	for _, d := range r.StructuredContent.Tools {
		var def struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(d, &def); err != nil {
			t.Fatalf("search_tools definition: %v: %s", err, d)
		}
		names = append(names, def.Name)
		defs[def.Name] = d
	}
	return names, defs
}

func TestSearchFormTSClient(t *testing.T) {
	needGatewayBin(t)
	g := startGateway(t, listFormsConfig(t, `
agents:
  a1: {servers: [`+lfLong+`, filesystem, memory, shop], pinned_tools: ["memory__read_graph"]}
  a2: {servers: [`+lfLong+`, filesystem, memory], tools: {deny: ["memory__*"]}}
`))
	sum := lfLong + "__get-sum"
	rep := runAggregateClient(t, g.URL, []Step{
		{"op": "call", "name": lfSearch, "args": map[string]any{"query": "add two numbers and return the sum"}},
		{"op": "call", "name": sum, "args": map[string]any{"a": 2, "b": 40}},
		{"op": "call", "name": lfSearch, "args": map[string]any{"query": "read the contents of a text file", "limit": 3}},
		{"op": "call", "name": lfSearch, "args": map[string]any{"query": "x", "limit": 99}},
		{"op": "call", "name": lfSearch, "args": map[string]any{"query": "qqqzzz wwwxxx"}},
	}, ClientOptions{Headers: []string{"X-Agent-ID: a1", "X-MCP-Handshake: search"}, Timeout: 90 * time.Second})
	if !rep.OK || len(rep.Results) != 5 {
		t.Fatalf("client run: %+v", rep)
	}
	slices.Sort(rep.Tools)
	if want := []string{lfSearch, "memory__read_graph"}; !slices.Equal(rep.Tools, want) {
		t.Fatalf("search-form list = %v, want the pinned tool and the search tool %v", rep.Tools, want)
	}
	for i, r := range rep.Results[:3] {
		if !r.OK {
			t.Fatalf("step %d: %+v", i, r)
		}
	}
	names, defs := searchFound(t, rep.Results[0].Result)
	if i := slices.Index(names, sum); i < 0 || i > 2 {
		t.Fatalf("search for adding numbers: %s not in the top 3 of %v", sum, names)
	}
	var def struct {
		Description string `json:"description"`
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
	}
	if err := json.Unmarshal(defs[sum], &def); err != nil || def.Description == "" || def.InputSchema.Properties["a"] == nil {
		t.Errorf("search returned no full definition of %s: %s", sum, defs[sum])
	}
	if text, isErr := toolResultText(rep.Results[1].Result); isErr || !strings.Contains(text, "42") {
		t.Errorf("call of %s by its real name, found by search and never listed: %s", sum, rep.Results[1].Result)
	}
	if names, _ := searchFound(t, rep.Results[2].Result); len(names) > 3 || !slices.ContainsFunc(names, func(n string) bool {
		return strings.HasPrefix(n, "filesystem__read_")
	}) {
		t.Errorf("search for reading a file with limit 3: %v", names)
	}
	if text, isErr := toolResultText(rep.Results[3].Result); !isErr || !strings.Contains(text, "limit") {
		t.Errorf("search with limit 99: want an isError result naming limit, got %s", rep.Results[3].Result)
	}
	// Words that match nothing get the agent's most-used tool, the one it called above.
	if names, _ := searchFound(t, rep.Results[4].Result); len(names) != 1 || names[0] != sum {
		t.Errorf("search for words that match nothing after calling %s: %v, want it alone", sum, names)
	}

	// The audit log and the metrics carry the real name of the call made after a search.
	deadline := time.Now().Add(10 * time.Second)
	var lines []auditLine
	for {
		lines = readAudit(t, filepath.Join(g.StateDir, "audit.jsonl"))
		if slices.ContainsFunc(lines, func(l auditLine) bool { return l.Kind == "call" && l.Tool == sum && l.Outcome == "ok" }) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !slices.ContainsFunc(lines, func(l auditLine) bool { return l.Kind == "call" && l.Tool == sum && l.Outcome == "ok" }) {
		t.Errorf("audit log has no ok call of %s: %+v", sum, lines)
	}
	text, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := metricValue(text, "mcpgw_tool_calls_total", map[string]string{"server": lfLong, "tool": "get-sum", "outcome": "ok"}); !ok || v != 1 {
		t.Errorf("mcpgw_tool_calls_total for get-sum = %v (found %v), want 1", v, ok)
	}
	if v, ok := metricSum(text, "mcpgw_tools_list_estimated_tokens_total", map[string]string{"form": "search"}); !ok || v <= 0 {
		t.Errorf("no search-form list tokens counted: %v %v", v, ok)
	}

	// Search reaches only the session's own view: a2, denied memory's tools, finds none of
	// them however it asks, and calling one by its real name is refused.
	deny := runAggregateClient(t, g.URL, []Step{
		{"op": "call", "name": lfSearch, "args": map[string]any{"query": "read the knowledge graph entities and relations", "limit": 20}},
		{"op": "call", "name": "memory__read_graph", "args": map[string]any{}},
	}, ClientOptions{Headers: []string{"X-Agent-ID: a2", "X-MCP-Handshake: search"}, Timeout: 60 * time.Second})
	if !deny.OK || len(deny.Results) != 2 {
		t.Fatalf("a2's run: %+v", deny)
	}
	if names, _ := searchFound(t, deny.Results[0].Result); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "memory__") }) {
		t.Errorf("a2, denied memory's tools, found %v", names)
	}
	if r := deny.Results[1]; r.OK || r.Error == nil || !strings.Contains(r.Error.Message, "Unknown tool") {
		t.Errorf("a2 calling memory__read_graph: %+v", r)
	}

	// Two sessions with the same view get the same search-list bytes (prompt caches hit).
	hdr := map[string]string{"X-Agent-ID": "a1", "X-MCP-Handshake": "search"}
	raw1, l1s := sessOpen(t, g.URL, hdr).list(t)
	raw2, _ := sessOpen(t, g.URL, hdr).list(t)
	if string(raw1) != string(raw2) {
		t.Errorf("search lists of two sessions differ:\n%s\n%s", raw1, raw2)
	}
	// The search tool's description maps the session's catalogue (docs/sessions.md, "The
	// catalogue map"): a1's names the shop plugin's tables; a2's, denied memory's tools,
	// names no memory.
	if d := searchDescription(t, l1s); !strings.Contains(d, "shop: customers, orders, products") || !strings.Contains(d, "memory: ") {
		t.Errorf("a1's search tool does not map its catalogue: %q", d)
	}
	_, l2s := sessOpen(t, g.URL, map[string]string{"X-Agent-ID": "a2", "X-MCP-Handshake": "search"}).list(t)
	if d := searchDescription(t, l2s); strings.Contains(d, "memory") || !strings.Contains(d, "filesystem: ") {
		t.Errorf("a2's search tool (memory denied) maps %q", d)
	}
	thin := map[string]string{"X-Agent-ID": "a1", "X-MCP-Handshake": "thin"}
	thin1, l1 := sessOpen(t, g.URL, thin).list(t)
	thin2, _ := sessOpen(t, g.URL, thin).list(t)
	if string(thin1) != string(thin2) || !strings.Contains(string(thin1), `"mcpgw__describe_tools"`) || len(l1.Tools) < 40 {
		t.Errorf("thin lists of two sessions differ, or are not thin (%d tools):\n%.300s\n%.300s", len(l1.Tools), thin1, thin2)
	}
}

// searchDescription is the description of the search tool on list l.
func searchDescription(t *testing.T, l sessList) string {
	t.Helper()
	for _, raw := range l.Tools {
		var d struct{ Name, Description string }
		if json.Unmarshal(raw, &d) == nil && d.Name == lfSearch {
			return d.Description
		}
	}
	t.Fatalf("no %s on the search list", lfSearch)
	return ""
}

// TestClientShapedLists: clients announcing themselves by clientInfo.name get lists within
// their limits, from the built-in client table.
func TestClientShapedLists(t *testing.T) {
	needGatewayBin(t)
	g := startGateway(t, listFormsConfig(t, ""))

	// A client with no profile sees every tool, some names over 60 characters.
	plain := runAggregateClient(t, g.URL, nil, ClientOptions{Timeout: 60 * time.Second})
	if !plain.OK {
		t.Fatalf("plain client: %+v", plain)
	}
	const cursorMax = 54
	long := 0
	for _, n := range plain.Tools {
		if len(n) > cursorMax {
			long++
		}
	}
	if long == 0 || len(plain.Tools) <= 40 {
		t.Fatalf("the catalogue does not exercise Cursor's limits: %d tools, %d names over %d", len(plain.Tools), long, cursorMax)
	}

	// Cursor: names ≤ 60, tools ≤ 40 (over its cap: the search form); a shortened name
	// found by search is callable, and so is the real name.
	const annotated = lfLong + "__get-annotated-message" // 55 characters
	msgArgs := map[string]any{"messageType": "success"}
	cur := runAggregateClient(t, g.URL, []Step{
		{"op": "call", "name": lfSearch, "args": map[string]any{"query": "tiny image logo"}},
		{"op": "call", "name": lfSearch, "args": map[string]any{"query": "message with annotations metadata"}},
		{"op": "call", "name": annotated, "args": msgArgs},
	}, ClientOptions{Name: "cursor-vscode", Timeout: 60 * time.Second})
	if !cur.OK || len(cur.Results) != 3 {
		t.Fatalf("cursor client: %+v", cur)
	}
	if len(cur.Tools) > 40 || !slices.Contains(cur.Tools, lfSearch) {
		t.Errorf("Cursor got %d tools (want ≤ 40, with %s): %v", len(cur.Tools), lfSearch, cur.Tools)
	}
	var found []string
	for _, r := range cur.Results[:2] {
		names, _ := searchFound(t, r.Result)
		found = append(found, names...)
	}
	shortened := ""
	for _, n := range append(slices.Clone(cur.Tools), found...) {
		if len(n) > cursorMax {
			t.Errorf("Cursor got a %d-character name: %s", len(n), n)
		}
		if strings.Contains(n, "get-annotated-message") && n != annotated {
			shortened = n
		}
	}
	if shortened == "" {
		t.Fatalf("no shortened name keeping the tool's own name among %v", found)
	}
	if r := cur.Results[2]; !r.OK {
		t.Errorf("Cursor calling %s by its real name: %+v %+v", annotated, r, r.Error)
	}
	again := runAggregateClient(t, g.URL, []Step{{"op": "call", "name": shortened, "args": msgArgs}},
		ClientOptions{Name: "cursor-vscode", Timeout: 60 * time.Second})
	if !again.OK || len(again.Results) != 1 || !again.Results[0].OK {
		t.Errorf("calling the shortened name %s: %+v", shortened, again)
	}

	// VS Code / Copilot: every name it gets matches ^[a-zA-Z0-9_-]{1,128}$.
	copilot := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
	vs := runAggregateClient(t, g.URL, nil, ClientOptions{Name: "Visual Studio Code", Timeout: 60 * time.Second})
	if !vs.OK || len(vs.Tools) == 0 {
		t.Fatalf("VS Code client: %+v", vs)
	}
	for _, n := range vs.Tools {
		if !copilot.MatchString(n) {
			t.Errorf("VS Code got %q, which its pattern refuses", n)
		}
	}
}
