package catalog

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/plugin"
)

// What the catalogue map buys, measured without a model (docs/performance.md, "The
// catalogue map"). On T1's catalogues (the tool lists its gateways served, as the ranker's
// own offline test reads them) and query sets:
//
//   - named: the intended tool's group is named in the map (its server, and the plugin
//     kind, or for another server a word of the tool's name, among that server's groups);
//   - top-3 as asked, and top-3 when the query is rewritten by one of two fixed rules:
//     "oracle" appends the intended tool's group as the map shows it when the map names it
//     (what a model that read the map and chose right would add: an upper bound), and
//     "prefix" appends the map group with the longest common prefix (≥ 4 letters) between
//     one of its words and one of the query's, the first in map order on a tie (a mechanical
//     reading of the map; no change when no group shares 4 letters).

// evalPluginTool reads a sql plugin tool's exposed name: plugin, plugin, v1, kind, op.
var evalPluginTool = regexp.MustCompile(`^([a-z]+)_([a-z]+)_v1_(.+)_(count|create|delete|find|get|list|truncate|update)$`)

// evalTools are the tools of T1's catalogue name as a view holds them: servers from the
// names, plugin tools with their resource keys.
func evalTools(t testing.TB, name string) []*Tool {
	f, err := os.Open(filepath.Join("..", "toolsearch", "testdata", "catalogues", name+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var raws []json.RawMessage
	if err := json.NewDecoder(zr).Decode(&raws); err != nil {
		t.Fatal(err)
	}
	out := make([]*Tool, 0, len(raws))
	for _, raw := range raws {
		var head struct {
			Name        string `json:"name"`
			Annotations struct {
				ReadOnly bool `json:"readOnlyHint"`
			} `json:"annotations"`
		}
		_ = json.Unmarshal(raw, &head)
		tl := &Tool{Name: head.Name, Exposed: head.Name, Def: raw, ReadOnly: head.Annotations.ReadOnly}
		switch m := evalPluginTool.FindStringSubmatch(head.Name); {
		case m != nil && m[1] == m[2]:
			tl.Server, tl.PluginTool = m[1], &plugin.Tool{Key: plugin.Key(m[1], "v1", m[3])}
		case strings.Contains(head.Name, "__"):
			tl.Server, tl.Name, _ = strings.Cut(head.Name, "__")
		default: // a plugin's utility tool
			tl.Server, _, _ = strings.Cut(head.Name, "_")
			tl.PluginTool = &plugin.Tool{}
		}
		out = append(out, tl)
	}
	return out
}

// evalView is a view of tools, one part per server.
func evalView(tools []*Tool) *View {
	var parts []Part
	by := map[string]*Catalog{}
	for _, tl := range tools {
		c := by[tl.Server]
		if c == nil {
			c = &Catalog{}
			by[tl.Server] = c
			parts = append(parts, Part{Name: tl.Server, Cat: c})
		}
		c.Tools = append(c.Tools, tl)
	}
	return BuildView("eval", parts, nil, nil)
}

// mapGroups reads a map back: each server's groups as shown.
func mapGroups(m string) map[string][]string {
	out := map[string][]string{}
	for _, part := range strings.Split(m, "; ") {
		server, groups, ok := strings.Cut(part, ": ")
		if !ok {
			continue
		}
		if i := strings.Index(groups, " +"); i >= 0 {
			groups = groups[:i]
		}
		out[server] = strings.Split(groups, ", ")
	}
	return out
}

// intendedGroup is the group of the map that holds tool tl, or "".
func intendedGroup(tl *Tool, groups map[string][]string) string {
	gs := groups[mapServerName(tl.Server)]
	if tl.PluginTool != nil {
		if k := pluginKind(tl.PluginTool); k != "" && slices.Contains(gs, k) {
			return k
		}
		return ""
	}
	for _, w := range mapWords(tl.Name) {
		for _, g := range gs {
			if foldPlural(g) == foldPlural(w) {
				return g
			}
		}
	}
	return ""
}

// prefixGroup is the map group the prefix rule picks for query q, or "".
func prefixGroup(q string, m string) string {
	best, bestLen := "", 3
	for _, part := range strings.Split(m, "; ") {
		_, groups, ok := strings.Cut(part, ": ")
		if !ok {
			continue
		}
		if i := strings.Index(groups, " +"); i >= 0 {
			groups = groups[:i]
		}
		for _, g := range strings.Split(groups, ", ") {
			for _, gw := range mapWords(g) {
				for _, qw := range mapWords(q) {
					if n := commonPrefix(gw, qw); n > bestLen {
						best, bestLen = g, n
					}
				}
			}
		}
	}
	return best
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestMapBuys logs, per T1 catalogue, the map, its tokens, and the proxy above; it holds
// what the map is built to give: within budget, and every query's group named on the
// catalogues whose groups all fit.
func TestMapBuys(t *testing.T) {
	sets := map[string]string{"small": "queries.json", "medium": "queries.json", "large": "queries.json",
		"services": "queries-services.json", "trades": "queries-trades.json",
		"care": "queries-care.json", "civic": "queries-civic.json", "travel": "queries-travel.json", "homes": "queries-homes.json"}
	for _, name := range []string{"small", "medium", "large", "services", "trades", "care", "civic", "travel", "homes"} {
		t.Run(name, func(t *testing.T) {
			tools := evalTools(t, name)
			v := evalView(tools)
			m := v.Map()
			tokens := CountTokens([]byte(m))
			t.Logf("map (%d tokens, %d bytes): %s", tokens, len(m), m)
			if tokens > MapBudget {
				t.Errorf("map of %d tokens, over the budget of %d", tokens, MapBudget)
			}
			b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "bench", "tokens", sets[name]))
			if err != nil {
				t.Fatal(err)
			}
			var qs []struct{ Query, Tool string }
			if err := json.Unmarshal(b, &qs); err != nil {
				t.Fatal(err)
			}
			groups := mapGroups(m)
			var asked, named, base, oracle, prefix, prefixChanged int
			hit := func(q, tool string) bool {
				got := v.Search(q, 5)
				for i, g := range got {
					if i < 3 && g.Exposed == tool {
						return true
					}
				}
				return false
			}
			for _, q := range qs {
				tl := v.Tool(q.Tool)
				if tl == nil {
					continue
				}
				asked++
				g := intendedGroup(tl, groups)
				if g != "" {
					named++
				} else {
					t.Logf("group not named: %q → %s", q.Query, q.Tool)
				}
				b := hit(q.Query, q.Tool)
				if b {
					base++
				}
				switch {
				case g == "" && b:
					oracle++
				case g != "" && hit(q.Query+" "+g, q.Tool):
					oracle++
				}
				if pg := prefixGroup(q.Query, m); pg != "" {
					prefixChanged++
					if hit(q.Query+" "+pg, q.Tool) {
						prefix++
					}
				} else if b {
					prefix++
				}
			}
			t.Logf("%s: %d queries; group named %d; top-3 as asked %d, oracle rewrite %d, prefix rewrite %d (%d rewritten)",
				name, asked, named, base, oracle, prefix, prefixChanged)
		})
	}
}

// BenchmarkMap is the build of one map over T1's large catalogue (502 tools), done once
// per view, on its first search-form list.
func BenchmarkMap(b *testing.B) {
	tools := evalTools(b, "large")
	b.ReportAllocs()
	for b.Loop() {
		_ = buildMap(tools)
	}
}
