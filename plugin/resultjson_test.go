package plugin

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MarshalResult writes what json.Marshal writes, byte for byte, on its short path and off it.
func TestMarshalResultSameAsJSONMarshal(t *testing.T) {
	results := []*mcp.CallToolResult{
		resultLimit{}.structured(map[string]any{"a": int64(1), "b": "<x>&\u2028", "c": []any{1.5, nil, true}}),
		errorResult("bad %q", "x<y"),
		resultLimit{}.raw(json.RawMessage(` {"a": 1,  "b":[1, 2], "h": "<&>"} `), nil),
		resultLimit{}.page(Page{Items: []Resource{{"id": "1"}}, NextCursor: "c"}, nil),
		{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"k": "v"}},
		{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, Meta: mcp.Meta{"m": 1}},
		{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}}},
		{Content: []mcp.Content{}},
	}
	for i, r := range results {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("%d: json.Marshal: %v", i, err)
		}
		got, err := MarshalResult(r)
		if err != nil {
			t.Fatalf("%d: MarshalResult: %v", i, err)
		}
		if string(got) != string(want) {
			t.Errorf("%d:\n got %s\nwant %s", i, got, want)
		}
	}
	bad := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(`{"a":`)}
	if _, err := MarshalResult(bad); err == nil {
		t.Error("MarshalResult of invalid structured content: no error")
	}
}

// A JSON resource passes through to the result only when it is one JSON object.
func TestRawResourceResult(t *testing.T) {
	for _, c := range []struct {
		raw  string
		err  error
		want string // "" for an isError result
	}{
		{`{"id":"1","n":9007199254740993}`, nil, `{"id":"1","n":9007199254740993}`},
		{``, nil, ""},
		{`null`, nil, ""},
		{`[1]`, nil, ""},
		{`{"a":`, nil, ""},
		{`{"a":1} {"b":2}`, nil, ""},
		{`{"a":1}`, errors.New("boom"), ""},
	} {
		r := resultLimit{}.raw(json.RawMessage(c.raw), c.err)
		if c.want == "" {
			if !r.IsError {
				t.Errorf("%q: not an error: %+v", c.raw, r)
			}
			continue
		}
		if r.IsError || string(r.StructuredContent.(json.RawMessage)) != c.want || r.Content[0].(*mcp.TextContent).Text != c.want {
			t.Errorf("%q: %+v", c.raw, r)
		}
	}
}
