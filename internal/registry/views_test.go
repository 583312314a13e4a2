package registry

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
)

var testNaming = config.Naming{Prefix: "always", Separator: "__", MaxLength: 64}

// testRegistry is a registry over HTTP servers that never start, with the given
// catalogues installed as if each server had been listed.
func testRegistry(t *testing.T, cats map[string]*Catalog, servers ...string) *Registry {
	t.Helper()
	cfg := &config.Config{Naming: testNaming, Servers: map[string]*config.ServerDef{}}
	for _, s := range servers {
		cfg.Servers[s] = &config.ServerDef{Type: "streamable_http", URL: "http://127.0.0.1:1/mcp"}
	}
	r := New(cfg, slog.New(slog.DiscardHandler))
	t.Cleanup(r.cancel)
	for name, cat := range cats {
		r.integ.observe(name, cat) // as readCatalog does
		r.Server(name).SetCatalog(cat)
	}
	return r
}

// testCatalog builds a catalogue the way fetchCatalog does, from upstream definitions.
func testCatalog(t *testing.T, server string, tools, prompts, resources, templates []string) *Catalog {
	t.Helper()
	cat := &Catalog{Seq: catalog.NextSeq()}
	for _, name := range tools {
		tool, err := catalog.ExposeTool(server, json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"%s on %s","inputSchema":{"type":"object"}}`, name, name, server)), testNaming)
		if err != nil {
			t.Fatal(err)
		}
		cat.Tools = append(cat.Tools, tool)
	}
	sort.Slice(cat.Tools, func(i, j int) bool { return cat.Tools[i].Exposed < cat.Tools[j].Exposed })
	for _, name := range prompts {
		ex := ExposedName(server, name, testNaming)
		cat.Prompts = append(cat.Prompts, &Prompt{Server: server, Name: name, Exposed: ex, Def: catalog.Rename(json.RawMessage(fmt.Sprintf(`{"name":%q}`, name)), ex)})
	}
	sort.Slice(cat.Prompts, func(i, j int) bool { return cat.Prompts[i].Exposed < cat.Prompts[j].Exposed })
	for _, uri := range resources {
		cat.Resources = append(cat.Resources, &Resource{Server: server, URI: uri, Def: json.RawMessage(fmt.Sprintf(`{"uri":%q,"name":"r"}`, uri))})
	}
	for _, uri := range templates {
		cat.Templates = append(cat.Templates, &Resource{Server: server, URI: uri, Def: json.RawMessage(fmt.Sprintf(`{"uriTemplate":%q,"name":"t"}`, uri))})
	}
	return cat
}

// listPage is View.ListPage for the full form.
func listPage(v *View, kind, cursor string, size int) ([]byte, bool) {
	return v.ListPage(kind, false, cursor, size)
}

func TestListPageDeterministicBytes(t *testing.T) {
	build := func() *Registry {
		return testRegistry(t, map[string]*Catalog{
			"a": testCatalog(t, "a", []string{"zeta", "alpha", "mid"}, nil, nil, nil),
			"b": testCatalog(t, "b", []string{"beta", "omega"}, nil, nil, nil),
		}, "a", "b")
	}
	r1, r2 := build(), build()
	p1, _ := listPage(r1.ViewFor([]string{"a", "b"}, nil, nil, nil), "tools", "", 0)
	p2, _ := listPage(r1.ViewFor([]string{"b", "a"}, nil, nil, nil), "tools", "", 0)
	p3, _ := listPage(r2.ViewFor([]string{"a", "b"}, nil, nil, nil), "tools", "", 0)
	if string(p1) != string(p2) || string(p1) != string(p3) {
		t.Fatalf("list bytes differ by server order or registry instance:\n%s\n%s\n%s", p1, p2, p3)
	}
	if !json.Valid(p1) {
		t.Fatalf("not JSON: %s", p1)
	}
	if v1, v2 := r1.ViewFor([]string{"a", "b"}, nil, nil, nil), r1.ViewFor([]string{"a", "b"}, nil, nil, nil); v1 != v2 {
		t.Error("the same servers and catalogues did not give the cached view")
	}
}

func TestViewForFiltersServers(t *testing.T) {
	r := testRegistry(t, map[string]*Catalog{
		"a": testCatalog(t, "a", []string{"x"}, nil, nil, nil),
		"b": testCatalog(t, "b", []string{"y"}, nil, nil, nil),
		// "down" has no catalogue: it is not up.
	}, "a", "b", "down")
	v := r.ViewFor([]string{"a", "b", "down", "unknown"}, map[string]bool{"b": true}, nil, nil)
	if len(v.Tools) != 1 || v.Tool("a__x") == nil || v.Tool("b__y") != nil {
		t.Fatalf("view tools = %v", v.Tools)
	}
	if !slices.Equal(v.Servers, []string{"a"}) {
		t.Errorf("view servers = %v", v.Servers)
	}
	empty := r.ViewFor(nil, nil, nil, nil)
	if b, ok := listPage(empty, "tools", "", 10); !ok || string(b) != `{"tools":[]}` {
		t.Errorf("empty view page = %s, %v", b, ok)
	}
}
