package dispatch

import (
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/wire"
)

func TestRenameContents(t *testing.T) {
	const own, ex = "ui://get-time/mcp-app.html", "ui://clock__get-time/mcp-app.html"
	for _, c := range []struct{ in, want string }{
		{`{"contents":[{"uri":"ui://get-time/mcp-app.html","mimeType":"text/html;profile=mcp-app","text":"<p>&amp;</p>"}],"_meta":{"x":1}}`,
			`{"contents":[{"uri":"ui://clock__get-time/mcp-app.html","mimeType":"text/html;profile=mcp-app","text":"<p>&amp;</p>"}],"_meta":{"x":1}}`},
		// A content of another URI (the upstream answered for something else) keeps its own.
		{`{"contents":[{"uri":"ui://other"},{"text":"x","uri":"ui://get-time/mcp-app.html"}]}`,
			`{"contents":[{"uri":"ui://other"},{"text":"x","uri":"ui://clock__get-time/mcp-app.html"}]}`},
		// Results that are not what they should be pass as they came.
		{`{"contents":"nope"}`, `{"contents":"nope"}`},
		{`[1,2]`, `[1,2]`},
		{`{"contents":[1,{"uri":5}]}`, `{"contents":[1,{"uri":5}]}`},
		{`{"contents":[{"uri":"ui://get-time/mcp-app.html"`, `{"contents":[{"uri":"ui://get-time/mcp-app.html"`},
	} {
		if got := string(renameContents([]byte(c.in), own, ex)); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestRenameUpdated(t *testing.T) {
	m, err := wire.Parse([]byte(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"ui://a","_meta":{"k":"v"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(renameUpdated(m, "ui://s__a"))
	if !strings.Contains(got, `"params":{"uri":"ui://s__a","_meta":{"k":"v"}}`) {
		t.Errorf("got %s", got)
	}
}

func TestUnknownToolNamesTheCandidates(t *testing.T) {
	if got := unknownTool("x", nil); got != "Unknown tool: x" {
		t.Errorf("%q", got)
	}
	if got := unknownTool("get-time", []string{"a__get-time", "b__get-time"}); !strings.Contains(got, "a__get-time, b__get-time") {
		t.Errorf("%q", got)
	}
}
