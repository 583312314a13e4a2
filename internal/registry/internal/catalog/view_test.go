package catalog

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

var testNaming = config.Naming{Prefix: "always", Separator: "__", MaxLength: 64}

// testViews stands for the registry in the view tests: it builds views over the
// catalogues it was given, by server name, as Registry.ViewFor does for servers that are up.
type testViews struct{ cats map[string]*Catalog }

func newTestViews(t *testing.T, cats map[string]*Catalog, _ ...string) *testViews {
	t.Helper()
	return &testViews{cats: cats}
}

// ViewFor is the view over servers (but those in exclude) with their catalogues.
func (r *testViews) ViewFor(servers []string, exclude map[string]bool, filter ViewFilter, _ map[string]*Catalog) *View {
	var parts []Part
	for _, name := range servers {
		if cat := r.cats[name]; cat != nil && !exclude[name] {
			parts = append(parts, Part{Name: name, Cat: cat})
		}
	}
	return BuildView("test", parts, filter, nil)
}

// testCatalog builds a catalogue the way fetchCatalog does, from upstream definitions.
func testCatalog(t *testing.T, server string, tools, prompts, resources, templates []string) *Catalog {
	t.Helper()
	cat := &Catalog{Seq: NextSeq()}
	for _, name := range tools {
		tool, err := ExposeTool(server, json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"%s on %s","inputSchema":{"type":"object"}}`, name, name, server)), testNaming)
		if err != nil {
			t.Fatal(err)
		}
		cat.Tools = append(cat.Tools, tool)
	}
	sort.Slice(cat.Tools, func(i, j int) bool { return cat.Tools[i].Exposed < cat.Tools[j].Exposed })
	for _, name := range prompts {
		ex := ExposedName(server, name, testNaming)
		cat.Prompts = append(cat.Prompts, &Prompt{Server: server, Name: name, Exposed: ex, Def: Rename(json.RawMessage(fmt.Sprintf(`{"name":%q}`, name)), ex)})
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

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", prefix, i)
	}
	return out
}

// listPage is View.ListPage for the full form, the one place that knows its signature.
func listPage(v *View, kind, cursor string, size int) ([]byte, bool) {
	return v.ListPage(kind, false, cursor, size)
}

type page struct {
	Tools             []json.RawMessage `json:"tools"`
	Prompts           []json.RawMessage `json:"prompts"`
	Resources         []json.RawMessage `json:"resources"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates"`
	NextCursor        *string           `json:"nextCursor"`
}

func (p page) items(kind string) []json.RawMessage {
	switch kind {
	case "tools":
		return p.Tools
	case "prompts":
		return p.Prompts
	case "resources":
		return p.Resources
	}
	return p.ResourceTemplates
}

// listAll follows nextCursor through a view and returns each page's item keys.
func listAll(t *testing.T, v *View, kind string, size int) [][]string {
	t.Helper()
	var pages [][]string
	cursor := ""
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("pagination does not end")
		}
		b, ok := listPage(v, kind, cursor, size)
		if !ok {
			t.Fatalf("ListPage(%s, %q, %d): cursor rejected", kind, cursor, size)
		}
		var p page
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatalf("page is not JSON: %v\n%s", err, b)
		}
		var keys []string
		for _, it := range p.items(kind) {
			var head struct{ Name, URI, URITemplate string }
			if err := json.Unmarshal(it, &head); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, head.Name+head.URI+head.URITemplate)
		}
		if p.items(kind) == nil {
			t.Fatalf("page %d has no %q array: %s", i, kind, b)
		}
		pages = append(pages, keys)
		if p.NextCursor == nil {
			return pages
		}
		if *p.NextCursor == "" {
			t.Fatalf("empty nextCursor on page %d", i)
		}
		cursor = *p.NextCursor
	}
}

func TestListPagePagination(t *testing.T) {
	r := newTestViews(t, map[string]*Catalog{
		"a": testCatalog(t, "a", names("t", 7), names("p", 3), []string{"file:///a1", "file:///a2"}, []string{"a://{x}"}),
		"b": testCatalog(t, "b", names("t", 5), names("p", 2), []string{"file:///b1"}, []string{"b://{y}"}),
	}, "a", "b")
	v := r.ViewFor([]string{"a", "b"}, nil, nil, nil)
	var want []string
	for _, s := range []string{"a", "b"} {
		for _, n := range names("t", map[string]int{"a": 7, "b": 5}[s]) {
			want = append(want, s+"__"+n)
		}
	}
	sort.Strings(want)
	for _, size := range []int{0, 1, 2, 5, 11, 12, 13, 1000} {
		t.Run(fmt.Sprintf("size%d", size), func(t *testing.T) {
			// A fresh view per size: ListPage caches pages by cursor.
			v := r.ViewFor([]string{"a", "b"}, nil, nil, nil)
			v = &View{Tools: v.Tools}
			pages := listAll(t, v, "tools", size)
			got := slices.Concat(pages...)
			if !slices.Equal(got, want) {
				t.Fatalf("items %v\nwant  %v", got, want)
			}
			wantPages := 1
			if size > 0 {
				wantPages = max(1, (len(want)+size-1)/size)
			}
			if len(pages) != wantPages {
				t.Errorf("%d pages, want %d", len(pages), wantPages)
			}
			for i, p := range pages {
				if size > 0 && len(p) > size {
					t.Errorf("page %d has %d items > %d", i, len(p), size)
				}
			}
		})
	}
	for kind, n := range map[string]int{"prompts": 5, "resources": 3, "resourceTemplates": 2} {
		pages := listAll(t, v, kind, 2)
		if got := len(slices.Concat(pages...)); got != n {
			t.Errorf("%s: %d items over %d pages, want %d", kind, got, len(pages), n)
		}
	}
}

func TestListPageCursors(t *testing.T) {
	r := newTestViews(t, map[string]*Catalog{
		"a": testCatalog(t, "a", names("t", 4), names("p", 2), nil, nil),
		"c": testCatalog(t, "c", names("t", 2), nil, nil, nil),
	}, "a", "b", "c")
	v := r.ViewFor([]string{"a"}, nil, nil, nil)
	first, ok := listPage(v, "tools", "", 2)
	if !ok {
		t.Fatal("first page")
	}
	var p page
	_ = json.Unmarshal(first, &p)
	if p.NextCursor == nil {
		t.Fatal("no nextCursor")
	}
	cur := *p.NextCursor
	second, ok := listPage(v, "tools", cur, 2)
	again, ok2 := listPage(v, "tools", cur, 2)
	if !ok || !ok2 || string(second) != string(again) {
		t.Fatalf("the same cursor gave different pages:\n%s\n%s", second, again)
	}
	// The cursor stays valid in another view that still holds the item.
	wider := r.ViewFor([]string{"a", "c"}, nil, nil, nil)
	if _, ok := listPage(wider, "tools", cur, 2); !ok {
		t.Error("cursor rejected by a view that still holds its item")
	}
	promptCur := base64.RawURLEncoding.EncodeToString([]byte("prompts\x01a__p00"))
	if _, ok := listPage(v, "prompts", promptCur, 1); !ok {
		t.Error("a prompts cursor was rejected by prompts/list")
	}

	for name, bad := range map[string]string{
		"not base64":              "%%%not-base64%%%",
		"padded std base64":       base64.StdEncoding.EncodeToString([]byte("tools\x01a__t01")) + "==",
		"no separator":            base64.RawURLEncoding.EncodeToString([]byte("tools")),
		"other kind":              promptCur,
		"item not in view":        base64.RawURLEncoding.EncodeToString([]byte("tools\x01c__t00")),
		"unknown item":            base64.RawURLEncoding.EncodeToString([]byte("tools\x01ghost")),
		"empty after separator":   base64.RawURLEncoding.EncodeToString([]byte("tools\x01")),
		"cursor of another kind2": base64.RawURLEncoding.EncodeToString([]byte("resources\x01a\x00file:///x")),
	} {
		if b, ok := listPage(v, "tools", bad, 2); ok {
			t.Errorf("%s: cursor %q accepted, page %s", name, bad, b)
		}
	}
}

// TestListPageHonoursPageSize: the page size is a parameter, so a second call on the
// same view with another size must not get the first call's page.
func TestListPageHonoursPageSize(t *testing.T) {
	r := newTestViews(t, map[string]*Catalog{"a": testCatalog(t, "a", names("t", 6), nil, nil, nil)}, "a")
	v := r.ViewFor([]string{"a"}, nil, nil, nil)
	_ = listAll(t, v, "tools", 2)
	if pages := listAll(t, v, "tools", 3); len(pages) != 2 {
		t.Fatalf("page size 3 over 6 tools gave %d pages", len(pages))
	}
}

// TestListPageThinPaginatesLikeFull: the thin form lists the same names in the same
// pages, so a client can switch forms between sessions without surprises.
func TestListPageThinPaginatesLikeFull(t *testing.T) {
	r := newTestViews(t, map[string]*Catalog{"a": testCatalog(t, "a", names("t", 9), nil, nil, nil)}, "a")
	v := r.ViewFor([]string{"a"}, nil, nil, nil)
	collect := func(thin bool) (out []string) {
		cursor := ""
		for i := 0; i < 20; i++ {
			b, ok := v.ListPage("tools", thin, cursor, 4)
			if !ok {
				t.Fatalf("thin=%v: cursor %q rejected", thin, cursor)
			}
			var p page
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatalf("thin=%v: %v\n%s", thin, err, b)
			}
			for _, it := range p.Tools {
				var head struct{ Name string }
				_ = json.Unmarshal(it, &head)
				out = append(out, head.Name)
			}
			if p.NextCursor == nil {
				return out
			}
			cursor = *p.NextCursor
		}
		t.Fatal("pagination does not end")
		return nil
	}
	full, thin := collect(false), collect(true)
	if !slices.Equal(full, thin) || len(full) != 9 {
		t.Fatalf("full %v\nthin %v", full, thin)
	}
}
