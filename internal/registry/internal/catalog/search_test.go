package catalog

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// searchFixture is testdata/search/tools.json: tool definitions as servers list them
// (exposed as server__name) and as the sql plugin generates them (already exposed).
type searchFixture struct {
	Servers map[string][]json.RawMessage `json:"servers"`
	Plugins map[string][]json.RawMessage `json:"plugins"`
}

// searchQuery is one query of testdata/search/queries.json and the tool it is meant to find.
type searchQuery struct {
	Query string `json:"query"`
	Want  string `json:"want"`
}

func readJSON(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// fixtureView is the view over every server and plugin of testdata/search/tools.json,
// built the way a session's is.
func fixtureView(t *testing.T) *View {
	t.Helper()
	var fx searchFixture
	readJSON(t, "testdata/search/tools.json", &fx)
	cats := map[string]*Catalog{}
	for server, defs := range fx.Servers {
		cat := &Catalog{Seq: NextSeq()}
		for _, raw := range defs {
			tool, err := ExposeTool(server, raw, testNaming)
			if err != nil {
				t.Fatal(err)
			}
			cat.Tools = append(cat.Tools, tool)
		}
		cats[server] = cat
	}
	for plugin, defs := range fx.Plugins {
		cat := &Catalog{Seq: NextSeq()}
		for _, raw := range defs {
			var head struct{ Name string }
			if err := json.Unmarshal(raw, &head); err != nil {
				t.Fatal(err)
			}
			cat.Tools = append(cat.Tools, &Tool{Server: plugin, Name: head.Name, Exposed: head.Name, Def: raw})
		}
		cats[plugin] = cat
	}
	for _, cat := range cats {
		sort.Slice(cat.Tools, func(i, j int) bool { return cat.Tools[i].Exposed < cat.Tools[j].Exposed })
	}
	servers := slices.Sorted(maps.Keys(cats))
	return newTestViews(t, cats, servers...).ViewFor(servers, nil, nil, nil)
}

func exposedNames(tools []*Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Exposed
	}
	return out
}

// TestSearchHitRate: for the queries of testdata/search/queries.json, written in a user's
// words rather than the tools', the intended tool is among the first three at least 90%
// of the time. Misses are logged, so a change to the ranking shows what it costs.
func TestSearchHitRate(t *testing.T) {
	v := fixtureView(t)
	if len(v.Tools) < 60 {
		t.Fatalf("the fixture view has %d tools, want 60 or more", len(v.Tools))
	}
	var queries []searchQuery
	readJSON(t, "testdata/search/queries.json", &queries)
	if len(queries) < 30 {
		t.Fatalf("%d queries, want 30 or more", len(queries))
	}
	hits, firsts := 0, 0
	for _, q := range queries {
		if v.Tool(q.Want) == nil {
			t.Fatalf("query %q wants %q, which the fixture does not have", q.Query, q.Want)
		}
		got := exposedNames(v.Search(q.Query, 3))
		if slices.Contains(got, q.Want) {
			hits++
			if got[0] == q.Want {
				firsts++
			}
			continue
		}
		t.Logf("miss: %q wants %s, got %v", q.Query, q.Want, got)
	}
	rate := float64(hits) / float64(len(queries))
	t.Logf("top-3 hit rate %.1f%% (%d of %d); first: %d", 100*rate, hits, len(queries), firsts)
	if rate < 0.9 {
		t.Errorf("top-3 hit rate %.1f%% is below 90%%", 100*rate)
	}
}

func TestViewSearch(t *testing.T) {
	v := fixtureView(t)
	got := v.Search("filesystem read file", 5)
	if len(got) == 0 || got[0].Exposed != "filesystem__read_file" {
		t.Fatalf("Search(filesystem read file) = %v, want filesystem__read_file first", exposedNames(got))
	}
	if len(got) != 5 {
		t.Errorf("k=5 gave %d tools", len(got))
	}
	if v.Tool(got[0].Exposed) != got[0] {
		t.Errorf("Search returned a tool that is not the view's own")
	}
	ix := v.search.ix
	if again := v.Search("filesystem read file", 5); !slices.Equal(again, got) || v.search.ix != ix {
		t.Errorf("a second search rebuilt the index or answered differently: %v", exposedNames(again))
	}
	for _, q := range []string{"", "the of a", "qqqzzz"} {
		if got := v.Search(q, 5); got != nil {
			t.Errorf("Search(%q) = %v, want none", q, exposedNames(got))
		}
	}
	if got := v.Search("file", 0); got != nil {
		t.Errorf("k=0 gave %v", exposedNames(got))
	}
	empty := newTestViews(t, nil).ViewFor(nil, nil, nil, nil)
	if got := empty.Search("file", 3); got != nil {
		t.Errorf("an empty view found %v", exposedNames(got))
	}
}

// TestViewSearchConcurrent: the first searches of a view may come at once (-race): the
// index is built once and every goroutine gets the same answer.
func TestViewSearchConcurrent(t *testing.T) {
	v := fixtureView(t)
	want := exposedNames(fixtureView(t).Search("delete a customer", 3))
	if len(want) == 0 {
		t.Fatal("no tool found for the query")
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			if got := exposedNames(v.Search("delete a customer", 3)); !slices.Equal(got, want) {
				errs <- fmt.Sprintf("goroutine %d got %v, want %v", g, got, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestSearchDoc(t *testing.T) {
	tool := &Tool{Exposed: "fs__read_file", Def: json.RawMessage(`{"name":"fs__read_file","description":"Read a file.",` +
		`"inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"Where it is"},` +
		`"head":{"type":"number"},"encoding":{"type":"string","description":"utf-8 or base64"}}}}`)}
	d := searchDoc(tool)
	if d.Name != "fs__read_file" || d.Description != "Read a file." {
		t.Errorf("name %q, description %q", d.Name, d.Description)
	}
	if !slices.Equal(d.Params, []string{"encoding", "head", "path"}) {
		t.Errorf("params %q, want encoding, head, path (sorted)", d.Params)
	}
	if !strings.Contains(d.ParamText, "Where it is") || !strings.Contains(d.ParamText, "utf-8 or base64") {
		t.Errorf("param text %q lacks the properties' descriptions", d.ParamText)
	}
	bad := searchDoc(&Tool{Exposed: "x__y", Def: json.RawMessage(`not json`)})
	if bad.Name != "x__y" || len(bad.Params) != 0 {
		t.Errorf("an unreadable definition gave %+v", bad)
	}
}
