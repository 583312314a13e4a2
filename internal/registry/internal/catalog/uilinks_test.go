package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// appTool is the get-time tool the MCP Apps example servers list: both link keys.
const appTool = `{"name":"get-time","description":"Returns the current server time.","inputSchema":{"type":"object"},` +
	`"_meta":{"ui":{"resourceUri":"ui://get-time/mcp-app.html","visibility":["model","app"]},"ui/resourceUri":"ui://get-time/mcp-app.html","other":"<b>&"}}`

// appCatalog is a catalogue of an Apps server: the linking tool, an app-only helper, the
// UI resource and a plain resource.
func appCatalog(t *testing.T, server string, n config.Naming) *Catalog {
	t.Helper()
	cat := &Catalog{Seq: NextSeq()}
	for _, raw := range []string{appTool, `{"name":"refresh","inputSchema":{"type":"object"},"_meta":{"ui":{"visibility":["app"]}}}`} {
		tool, err := ExposeTool(server, json.RawMessage(raw), n)
		if err != nil {
			t.Fatal(err)
		}
		cat.Tools = append(cat.Tools, tool)
	}
	cat.Resources = append(cat.Resources,
		ExposeResource(server, "ui://get-time/mcp-app.html", json.RawMessage(`{"uri":"ui://get-time/mcp-app.html","name":"Get Time","mimeType":"text/html;profile=mcp-app"}`), n),
		ExposeResource(server, "file:///notes.txt", json.RawMessage(`{"name":"notes","uri":"file:///notes.txt"}`), n))
	return cat
}

func links(t *testing.T, def json.RawMessage) (ui, legacy string) {
	t.Helper()
	var d struct {
		Meta struct {
			UI struct {
				ResourceURI string `json:"resourceUri"`
			} `json:"ui"`
			Legacy string `json:"ui/resourceUri"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(def, &d); err != nil {
		t.Fatalf("%s: %v", def, err)
	}
	return d.Meta.UI.ResourceURI, d.Meta.Legacy
}

// Two servers of one kind link the same ui:// URI: each tool's link names its own server's
// resource, listed and found under that name, in every form of the list.
func TestUILinksResolvePerServer(t *testing.T) {
	v := BuildView("k", []Part{{"react", appCatalog(t, "react", testNaming)}, {"vanilla", appCatalog(t, "vanilla", testNaming)}}, nil, nil)
	for _, server := range []string{"react", "vanilla"} {
		tool := v.Tool(server + "__get-time")
		if tool == nil {
			t.Fatalf("no %s__get-time", server)
		}
		want := "ui://" + server + "__get-time/mcp-app.html"
		forms := map[string]json.RawMessage{"full": tool.Def, "thin": tool.Thin()}
		if sv := v.Shaped(NameRule{Max: 12}, "__"); sv != v {
			forms["shaped"] = sv.Tools[slicesIndex(sv.Tools, tool)].Def
		}
		for form, def := range forms {
			ui, legacy := links(t, def)
			if ui != want || legacy != want {
				t.Errorf("%s form of %s: links %q and %q, want %q", form, server, ui, legacy, want)
			}
		}
		r := v.Resource(want)
		if r == nil || r.Server != server || r.URI != "ui://get-time/mcp-app.html" {
			t.Fatalf("resource %s: %+v", want, r)
		}
		if !strings.Contains(string(r.Def), `"uri":"`+want+`"`) || !strings.Contains(string(r.Def), `"mimeType":"text/html;profile=mcp-app"`) {
			t.Errorf("listed as %s", r.Def)
		}
		if !strings.Contains(string(tool.Def), `"other":"<b>&"`) || !strings.Contains(string(tool.Def), `"visibility":["model","app"]`) {
			t.Errorf("other _meta members changed: %s", tool.Def)
		}
		if ui, _ := links(t, tool.OwnDef()); ui != "ui://get-time/mcp-app.html" {
			t.Errorf("the own definition (fingerprinted) links %q", ui)
		}
	}
	if v.Resource("ui://get-time/mcp-app.html") != nil {
		t.Error("the upstreams' own URI is listed")
	}
	if r := v.Resource("file:///notes.txt"); r == nil || r.Server != "react" || r.Exposed != "" {
		t.Errorf("a file:// URI is renamed or not first-wins: %+v", r)
	}
	page, _ := v.ListPage("resources", false, "", 0)
	for _, want := range []string{"ui://react__get-time/mcp-app.html", "ui://vanilla__get-time/mcp-app.html"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("resources/list lacks %s: %s", want, page)
		}
	}
}

func slicesIndex(ts []*Tool, t *Tool) int {
	for i, x := range ts {
		if x.Exposed == t.Exposed {
			return i
		}
	}
	return -1
}

func TestUpstreamURIInvertsExposedURI(t *testing.T) {
	servers := []string{"a", "a__b", "clock"}
	for _, c := range []struct{ server, uri string }{
		{"clock", "ui://get-time/mcp-app.html"}, {"a", "ui://b__x/y"}, {"a__b", "ui://x/y"}, {"clock", "UI://Up/Case"}, {"clock", "ui:///"},
	} {
		ex := ExposedURI(c.server, c.uri, testNaming)
		s, own, ok := UpstreamURI(servers, ex, testNaming)
		if c.server == "a" && c.uri == "ui://b__x/y" {
			// ui://a__b__x/y is also a__b's x/y: the longer server name wins, as documented.
			if s != "a__b" {
				t.Errorf("%s: %s", ex, s)
			}
			continue
		}
		if !ok || s != c.server || !strings.EqualFold(own[:5], "ui://") || own[5:] != c.uri[5:] {
			t.Errorf("%s of %s: exposed %s, back %s %s %v", c.uri, c.server, ex, s, own, ok)
		}
	}
	never := config.Naming{Prefix: "never", Separator: "__"}
	if ExposedURI("clock", "ui://x", never) != "ui://x" {
		t.Error("prefix never renamed a ui:// URI")
	}
	if _, _, ok := UpstreamURI(servers, "ui://nobody__x", testNaming); ok {
		t.Error("a URI naming no server was routed")
	}
	if ExposedURI("clock", "https://ui//x", testNaming) != "https://ui//x" {
		t.Error("renamed a non-ui URI")
	}
}

// Links that are not what they should be leave the definition as it was and lose nothing.
func TestUILinksOddInput(t *testing.T) {
	for _, raw := range []string{
		`{"name":"t","_meta":{"ui":{"resourceUri":42}}}`,
		`{"name":"t","_meta":{"ui":"ui://x"}}`,
		`{"name":"t","_meta":["ui://x"]}`,
		`{"name":"t","_meta":{"ui":{"resourceUri":"https://example.com/x"}}}`,
		`{"name":"t","_meta":{"UI":{"resourceUri":"ui://x"},"Ui/ResourceUri":"ui://x"}}`,
	} {
		tool, err := ExposeTool("s", json.RawMessage(raw), testNaming)
		if err != nil {
			t.Fatal(err)
		}
		if tool.Own != nil || !strings.Contains(string(tool.Def), strings.TrimPrefix(strings.TrimSuffix(raw, "}"), `{"name":"t",`)) {
			t.Errorf("%s became %s", raw, tool.Def)
		}
	}
	// A member given twice: the last is what a JavaScript host reads, and what is renamed.
	tool, err := ExposeTool("s", json.RawMessage(`{"name":"t","_meta":{"ui":{"resourceUri":"ui://a","resourceUri":"ui://b"}}}`), testNaming)
	if err != nil {
		t.Fatal(err)
	}
	if ui, _ := links(t, tool.Def); ui != "ui://s__b" {
		t.Errorf("duplicate member: %s", tool.Def)
	}
}

// An app calls its server's tools by their own names; two servers with one such name are
// told apart by neither, and the call is refused with both names.
func TestAppTool(t *testing.T) {
	plain := testCatalog(t, "plain", []string{"refresh"}, nil, nil, nil)
	v := BuildView("k", []Part{{"plain", plain}, {"react", appCatalog(t, "react", testNaming)}, {"vanilla", appCatalog(t, "vanilla", testNaming)}}, nil, nil)
	if tool, also := v.AppTool("get-time"); tool != nil || len(also) != 2 || also[0] != "react__get-time" {
		t.Errorf("ambiguous: %v %v", tool, also)
	}
	one := BuildView("k", []Part{{"plain", plain}, {"vanilla", appCatalog(t, "vanilla", testNaming)}}, nil, nil)
	if tool, _ := one.AppTool("refresh"); tool == nil || tool.Server != "vanilla" {
		t.Errorf("app-only helper of the one UI server: %v", tool)
	}
	if tool, also := one.AppTool("nothing"); tool != nil || also != nil {
		t.Error("found a tool nobody has")
	}
	if tool, _ := BuildView("k", []Part{{"plain", plain}}, nil, nil).AppTool("refresh"); tool != nil {
		t.Error("a server without UI answers by its own names")
	}
}

// A server that links a URI shaped like another server's name for a resource still links
// its own: the gateway puts the linking server's name first, and routes by it.
func TestUILinkCannotReachAnotherServer(t *testing.T) {
	tool, err := ExposeTool("evil", json.RawMessage(`{"name":"t","_meta":{"ui":{"resourceUri":"ui://victim__get-time/mcp-app.html"}}}`), testNaming)
	if err != nil {
		t.Fatal(err)
	}
	link, _ := links(t, tool.Def)
	server, own, ok := UpstreamURI([]string{"evil", "victim"}, link, testNaming)
	if !ok || server != "evil" || own != "ui://victim__get-time/mcp-app.html" {
		t.Errorf("link %s routes to %s (%s)", link, server, own)
	}
}
