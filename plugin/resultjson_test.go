package plugin

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MarshalResult writes what json.Marshal writes, byte for byte, on its short path and off
// it, and that is what go-sdk writes for the same CallToolResult: the contract's own type
// changed no byte on the wire.
func TestMarshalResultSameAsJSONMarshal(t *testing.T) {
	results := []*Result{
		resultLimit{}.structured(map[string]any{"a": int64(1), "b": "<x>&\u2028", "c": []any{1.5, nil, true}}),
		errorResult("bad %q", "x<y"),
		resultLimit{}.raw(json.RawMessage(` {"a": 1,  "b":[1, 2], "h": "<&>"} `), nil),
		resultLimit{}.page(Page{Items: []Resource{{"id": "1"}}, NextCursor: "c"}, nil),
		TextResult("done"),
		TextResult(""),
		{Content: []Content{{Type: "text", Text: "a"}, {Type: "text", Text: "b"}}},
		{Content: []Content{}},
		{Content: []Content{{Type: "text", Text: "x"}}, StructuredContent: json.RawMessage(`{"k":"v"}`), IsError: true},
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
		sdk, err := json.Marshal(sdkResult(r))
		if err != nil {
			t.Fatalf("%d: json.Marshal of the go-sdk result: %v", i, err)
		}
		if string(got) != string(sdk) {
			t.Errorf("%d: not what go-sdk writes:\n got %s\n sdk %s", i, got, sdk)
		}
	}
	bad := &Result{Content: []Content{{Type: "text", Text: "x"}}, StructuredContent: json.RawMessage(`{"a":`)}
	if _, err := MarshalResult(bad); err == nil {
		t.Error("MarshalResult of invalid structured content: no error")
	}
}

// sdkResult is r as go-sdk's CallToolResult, as the dispatcher built it before the
// contract had a result type of its own.
func sdkResult(r *Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: r.IsError, Content: []mcp.Content{}}
	if r.Content == nil {
		out.Content = nil
	}
	for _, c := range r.Content {
		out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
	}
	if r.StructuredContent != nil {
		out.StructuredContent = r.StructuredContent
	}
	return out
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
		if r.IsError || string(r.StructuredContent) != c.want || r.Content[0].Text != c.want {
			t.Errorf("%q: %+v", c.raw, r)
		}
	}
}
