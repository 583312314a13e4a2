package plugin

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSONGetter is implemented by a provider whose resources arrive as JSON already (an
// out-of-process plugin's do: package plugin/external): the dispatcher's get tools call
// GetJSON instead of Get and pass the object through to the result, instead of decoding it
// into a Resource only to write the same JSON again. The result must be one JSON object
// (or empty for none), as Get's Resource written by encoding/json; anything else is the
// plugin's error.
type JSONGetter interface {
	GetJSON(ctx context.Context, conn, key string, in GetInput) (json.RawMessage, error)
}

// MarshalResult writes a call's result as JSON, as json.Marshal does (byte for byte), with
// a short path for the results the dispatcher makes: one text content, structured content
// that is JSON already, isError. Anything else goes through json.Marshal.
func MarshalResult(r *mcp.CallToolResult) ([]byte, error) {
	if r == nil || r.Meta != nil || len(r.Content) != 1 {
		return json.Marshal(r)
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok || tc.Meta != nil || tc.Annotations != nil {
		return json.Marshal(r)
	}
	var sc json.RawMessage
	switch v := r.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		sc = v
	default:
		return json.Marshal(r)
	}
	text, err := json.Marshal(tc.Text)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(text)+len(sc)+80)
	out = append(out, `{"content":[{"type":"text","text":`...)
	out = append(out, text...)
	out = append(out, "}]"...)
	if sc != nil {
		out = append(out, `,"structuredContent":`...)
		// json.Marshal compacts a RawMessage and escapes HTML characters in it.
		var compact, escaped bytes.Buffer
		if err := json.Compact(&compact, sc); err != nil {
			return json.Marshal(r) // its error names the problem
		}
		json.HTMLEscape(&escaped, compact.Bytes())
		out = append(out, escaped.Bytes()...)
	}
	if r.IsError {
		out = append(out, `,"isError":true`...)
	}
	return append(out, '}'), nil
}
