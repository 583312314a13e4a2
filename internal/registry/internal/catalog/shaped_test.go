package catalog

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// shapedFixture is a view whose server has a long name, so some exposed names pass 40.
func shapedFixture(t *testing.T) *View {
	t.Helper()
	const srv = "a-rather-long-server-name"
	cat := testCatalog(t, srv, []string{"x", "read_a_file_with_a_long_name", "list_everything_there_is"}, nil, nil, nil)
	return newTestViews(t, map[string]*Catalog{srv: cat}, srv).ViewFor([]string{srv}, nil, nil, nil)
}

func TestShapedViewNamesFitAndStayCallable(t *testing.T) {
	v := shapedFixture(t)
	rule := NameRule{Max: 40}
	sv := v.Shaped(rule, "__")
	if sv == v {
		t.Fatal("a rule that cuts names returned the view itself")
	}
	if again := v.Shaped(rule, "__"); again != sv {
		t.Error("the shaped view is not cached per rule")
	}
	page, ok := listPage(sv, "tools", "", 0)
	if !ok {
		t.Fatal("shaped view lists no page")
	}
	var l struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(page, &l); err != nil || len(l.Tools) != 3 {
		t.Fatalf("shaped page: %v %s", err, page)
	}
	for i, lt := range l.Tools {
		if len(lt.Name) > 40 {
			t.Errorf("listed name %q is %d bytes, rule says 40", lt.Name, len(lt.Name))
		}
		byListed := sv.Tool(lt.Name)
		real := v.Tools[i]
		if byListed == nil || byListed.Exposed != real.Exposed || byListed.Name != real.Name || byListed.Server != real.Server {
			t.Errorf("listed name %q does not find tool %s: %+v", lt.Name, real.Exposed, byListed)
		}
		if sv.Tool(real.Exposed) != byListed {
			t.Errorf("real name %s does not find the same tool as %s", real.Exposed, lt.Name)
		}
		if len(real.Exposed) > 40 && (!strings.Contains(lt.Name, real.Name) || lt.Name == real.Exposed) {
			t.Errorf("%s shaped to %q, which loses the tool's own name", real.Exposed, lt.Name)
		}
	}
	if sv.Hash() == v.Hash() {
		t.Error("a shaped view has the hash of the unshaped one: forms and list_changed would mix them")
	}
	// Another registry with the same catalogue shapes the same bytes (stable across
	// restarts and replicas).
	page2, _ := listPage(shapedFixture(t).Shaped(rule, "__"), "tools", "", 0)
	if string(page2) != string(page) {
		t.Errorf("shaped pages differ between two registries:\n%s\n%s", page, page2)
	}
}

func TestShapedViewUnchangedWhenNamesFit(t *testing.T) {
	v := shapedFixture(t)
	for _, r := range []NameRule{{}, {Max: 64}, {Pattern: regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)}} {
		if sv := v.Shaped(r, "__"); sv != v {
			t.Errorf("rule %+v shaped a view whose names all fit", r)
		}
	}
	// A pattern that refuses '-': shaped names keep to it.
	sv := v.Shaped(NameRule{Pattern: regexp.MustCompile(`^[a-z0-9_]+$`)}, "__")
	for _, tl := range sv.Tools {
		if n := tl.ListedName(); !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(n) || sv.Tool(n) != tl {
			t.Errorf("name %q under a no-dash pattern (found back: %v)", n, sv.Tool(n) == tl)
		}
	}
}

func TestSearchPage(t *testing.T) {
	v := shapedFixture(t)
	search := json.RawMessage(`{"name":"mcpgw__search_tools"}`)
	pin := func(tl *Tool) bool {
		return strings.HasSuffix(tl.Exposed, "__x") || strings.HasSuffix(tl.Exposed, "_name")
	}
	p := v.SearchPage("k", pin, 0, search)
	var l struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal(p.Bytes, &l); err != nil || len(l.Tools) != 3 || l.Tools[2].Name != "mcpgw__search_tools" || l.NextCursor != "" {
		t.Fatalf("search page: %v %s", err, p.Bytes)
	}
	if p.Tokens <= 0 {
		t.Errorf("search page has %d tokens", p.Tokens)
	}
	if again := v.SearchPage("k", pin, 0, search); again != p {
		t.Error("search page not cached by key")
	}
	capped := v.SearchPage("k", pin, 1, search)
	if err := json.Unmarshal(capped.Bytes, &l); err != nil || len(l.Tools) != 2 {
		t.Errorf("search page with max 1 pinned: %s", capped.Bytes)
	}
	if v.FullListTokens() <= p.Tokens {
		t.Errorf("full list %d tokens, search page %d", v.FullListTokens(), p.Tokens)
	}
}

// The thin form keeps what a call must send: required arguments with their types, short
// enums and consts, and any argument bound to a header (x-mcp-header), optional or not.
func TestThinToolKeepsWhatACallNeeds(t *testing.T) {
	full := json.RawMessage(`{"name":"s__t","title":"T","description":"Does a thing. Then more words follow here.","annotations":{"readOnlyHint":true},
		"inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,
		"properties":{"id":{"type":"string","description":"the id","minLength":1},"mode":{"type":"string","enum":["a","b"]},
		"region":{"type":"string","x-mcp-header":"Region"},"verbose":{"type":"boolean"},"kind":{"enum":["1","2","3","4"],"type":"string"}},
		"required":["id","mode","kind"]}}`)
	var got map[string]any
	if err := json.Unmarshal(thinTool(full), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "s__t", "description": "Does a thing.", "inputSchema": map[string]any{"type": "object",
		"properties": map[string]any{
			"id":     map[string]any{"type": "string"},
			"mode":   map[string]any{"type": "string", "enum": []any{"a", "b"}},
			"kind":   map[string]any{"type": "string"},
			"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		}}}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("thin tool:\n got %s\nwant %s", gb, wb)
	}
	for in, want := range map[string]string{
		"A very long first sentence that goes on and on well past the limit of the thin form.": "A very long first sentence that goes on and on well past…",
		"Returns all environment variables, helpful for debugging MCP server configuration":    "Returns all environment variables",
		"Short. Second sentence.": "Short.",
	} {
		if got := shortDescription(in, 60); got != want {
			t.Errorf("shortDescription(%q) = %q, want %q", in, got, want)
		}
	}
}

// A schema whose requirements hang on more than a list of required arguments ($defs and
// $ref, composition, conditionals, anchors: the conformance suite's json_schema_2020_12_tool)
// is listed whole in the thin form, every keyword and value as written, without its free
// text; a property named like an annotation is a name, and stays.
func TestThinToolKeepsSchemaItCannotReduce(t *testing.T) {
	full := json.RawMessage(`{"name":"s__t","description":"Does a thing. More.","inputSchema":{
		"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:t","type":"object","title":"T","description":"the args",
		"$defs":{"address":{"$anchor":"addressDef","type":"object","description":"where","properties":{"street":{"type":"string","examples":["Main"]}}}},
		"properties":{"name":{"type":"string","$comment":"c"},"address":{"$ref":"#/$defs/address"},
			"description":{"type":"string","description":"a property named description"},
			"contactMethod":{"type":"string","enum":["phone","email"],"default":"phone"},
			"big":{"const":12345678901234567890},"phone":{"type":"string"},"email":{"type":"string"}},
		"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
		"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},
		"additionalProperties":false}}`)
	var got struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(thinTool(full), &got); err != nil {
		t.Fatal(err)
	}
	want := `{"$defs":{"address":{"$anchor":"addressDef","properties":{"street":{"type":"string"}},"type":"object"}},` +
		`"$id":"urn:t","$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,` +
		`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"else":{"required":["email"]},` +
		`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
		`"properties":{"address":{"$ref":"#/$defs/address"},"big":{"const":12345678901234567890},` +
		`"contactMethod":{"default":"phone","enum":["phone","email"],"type":"string"},"description":{"type":"string"},` +
		`"email":{"type":"string"},"name":{"type":"string"},"phone":{"type":"string"}},"then":{"required":["phone"]},"type":"object"}`
	if string(got.InputSchema) != want {
		t.Errorf("thin schema:\n got %s\nwant %s", got.InputSchema, want)
	}
}

// After a catalogue changes one tool, the thin and search pages of the new view differ from
// the old only in that tool's definition: a client's prompt cache keeps the rest.
func TestListRefreshChangesOnlyWhatChanged(t *testing.T) {
	old := testCatalog(t, "s", []string{"a", "b", "c"}, nil, nil, nil)
	changed := testCatalog(t, "s", []string{"a", "b", "c"}, nil, nil, nil)
	for i, tl := range changed.Tools {
		if tl.Name == "b" {
			nt, err := ExposeTool("s", json.RawMessage(`{"name":"b","description":"b, now different","inputSchema":{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}}`), testNaming)
			if err != nil {
				t.Fatal(err)
			}
			changed.Tools[i] = nt
		}
	}
	v1 := newTestViews(t, map[string]*Catalog{"s": old}, "s").ViewFor([]string{"s"}, nil, nil, nil)
	v2 := newTestViews(t, map[string]*Catalog{"s": changed}, "s").ViewFor([]string{"s"}, nil, nil, nil)
	p1, _ := v1.ListPageCounted("tools", true, "", 0)
	p2, _ := v2.ListPageCounted("tools", true, "", 0)
	var l1, l2 struct{ Tools []json.RawMessage }
	if json.Unmarshal(p1.Bytes, &l1) != nil || json.Unmarshal(p2.Bytes, &l2) != nil || len(l1.Tools) != 3 || len(l2.Tools) != 3 {
		t.Fatalf("thin pages: %s / %s", p1.Bytes, p2.Bytes)
	}
	for i := range l1.Tools {
		same := string(l1.Tools[i]) == string(l2.Tools[i])
		if isB := strings.Contains(string(l1.Tools[i]), `"s__b"`); same == isB {
			t.Errorf("tool %d: unchanged %v, but changed tool %v:\n%s\n%s", i, same, isB, l1.Tools[i], l2.Tools[i])
		}
	}
	pin := func(tl *Tool) bool { return tl.Name == "a" }
	if s1, s2 := v1.SearchPage("a", pin, 0), v2.SearchPage("a", pin, 0); string(s1.Bytes) != string(s2.Bytes) {
		t.Errorf("search pages differ though the pinned tool did not change:\n%s\n%s", s1.Bytes, s2.Bytes)
	}
}

// A tool whose exposed name naming.max_length cut keeps its plain name for tool globs.
func TestPlainNameOfACutName(t *testing.T) {
	const server = "a-very-long-server-name-that-goes-on-and-on"
	tool, err := ExposeTool(server, json.RawMessage(`{"name":"delete_repository_and_everything_in_it"}`), testNaming)
	if err != nil {
		t.Fatal(err)
	}
	plain := server + "__delete_repository_and_everything_in_it"
	if tool.Exposed == plain || len(tool.Exposed) > 64 || !slices.Equal(tool.OtherNames(), []string{plain}) {
		t.Errorf("exposed %q, other names %v; want a cut name and the plain %q", tool.Exposed, tool.OtherNames(), plain)
	}
	short, _ := ExposeTool("gh", json.RawMessage(`{"name":"read"}`), testNaming)
	if short.OtherNames() != nil {
		t.Errorf("a name that was not cut has other names: %v", short.OtherNames())
	}
}

// An upstream that names a tool after another tool's shortened name does not capture it:
// the shortened name is made again, and each listed name finds its own tool.
func TestShapedNameNeverCollides(t *testing.T) {
	const srv = "a-rather-long-server-name"
	long := "read_a_file_with_a_long_name"
	first := ShapeName(srv+"__"+long, "__", 40, nil)
	// A second tool whose exposed name is exactly the first one's shortening.
	_, impostor, _ := strings.Cut(first, "__")
	cat := testCatalog(t, srv, []string{long}, nil, nil, nil)
	other := testCatalog(t, "x", nil, nil, nil, nil)
	tl, err := ExposeTool("x", json.RawMessage(`{"name":"`+impostor+`"}`), config.Naming{Prefix: "never", Separator: "__", MaxLength: 64})
	if err != nil {
		t.Fatal(err)
	}
	tl.Exposed, tl.Def = first, Rename(tl.Def, first)
	other.Tools = append(other.Tools, tl)
	v := newTestViews(t, map[string]*Catalog{srv: cat, "x": other}, srv, "x").ViewFor([]string{srv, "x"}, nil, nil, nil)
	sv := v.Shaped(NameRule{Max: 40}, "__")
	seen := map[string]bool{}
	for _, st := range sv.Tools {
		n := st.ListedName()
		if seen[n] {
			t.Errorf("two tools listed as %q", n)
		}
		seen[n] = true
		if sv.Tool(n) != st {
			t.Errorf("listed name %q finds %+v, not its own tool %s", n, sv.Tool(n), st.Exposed)
		}
	}
	if sv.Tool(first).Server != "x" {
		t.Errorf("the name %q no longer reaches the tool that has it", first)
	}
}
