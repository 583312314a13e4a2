package e2e

// Structured search (docs/performance.md, "Plugin tools ranked by table and operation"):
// the TypeScript SDK client in search form asks search_tools in plain words for what a
// table's operations do, over the demo sql plugin and the npm filesystem server in one
// view: a count, a delete by a verb that is no operation's name and a question that finds
// rank their tool first, a file read in the top three, and the count tool found is called by
// its real name against the plugin's real database.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSearchStructuredPluginTools(t *testing.T) {
	needGatewayBin(t)
	work := t.TempDir()
	allowed := filepath.Join(work, "allowed")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	seed := filepath.Join(repoRoot(t), "examples", "shop.sql")
	g := startGateway(t, `
log: {level: info, format: text}
http: {page_size: 1000}
servers:
  filesystem: {type: stdio, command: {{node}}, args: [`+yamlQuote(npmServerScript(t, "server-filesystem"))+`, `+yamlQuote(allowed)+`]}
plugins:
  shop:
    type: sql
    connections:
      shop: {driver: sqlite, dsn: `+yamlQuote(filepath.Join(work, "shop.db"))+`, seed: `+yamlQuote(seed)+`}
`)
	// first: the tool must come first (the lexical ranking alone put the delete and the
	// find third, behind the table's create and get); else anywhere in the top 3.
	queries := []struct {
		query, want string
		first       bool
	}{
		{"how many products are in the shop", "shop_shop_v1_products_count", true},
		{"cancel an order", "shop_shop_v1_orders_delete", true},
		{"which customers live in Leeds", "shop_shop_v1_customers_find", true},
		{"read the contents of a text file", "filesystem__read_", false},
	}
	var steps []Step
	for _, q := range queries {
		steps = append(steps, Step{"op": "call", "name": lfSearch, "args": map[string]any{"query": q.query, "limit": 3}})
	}
	steps = append(steps, Step{"op": "call", "name": "shop_shop_v1_products_count", "args": map[string]any{"connectionId": "shop"}})
	rep := runAggregateClient(t, g.URL, steps, ClientOptions{Headers: []string{"X-MCP-Handshake: search"}, Timeout: 60 * time.Second})
	if !rep.OK || len(rep.Results) != len(steps) {
		t.Fatalf("client run: %+v", rep)
	}
	for i, q := range queries {
		if !rep.Results[i].OK {
			t.Fatalf("search %q: %+v", q.query, rep.Results[i])
		}
		names, _ := searchFound(t, rep.Results[i].Result)
		if len(names) > 3 || !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, q.want) }) {
			t.Errorf("search %q = %v; want %s… in the top 3", q.query, names, q.want)
		} else if q.first && names[0] != q.want {
			t.Errorf("search %q = %v; want %s first", q.query, names, q.want)
		}
	}
	count := rep.Results[len(queries)]
	if text, isErr := toolResultText(count.Result); !count.OK || isErr || !strings.ContainsAny(text, "0123456789") {
		t.Errorf("call of the count tool found by search: %+v (%s)", count, text)
	}
}
