package plugin

import (
	"bytes"
	"context"
	"encoding/json"
)

// JSONGetter is implemented by a provider whose resources arrive as JSON already (an
// out-of-process plugin's do: package internal/pluginproc): the dispatcher's get tools call
// GetJSON instead of Get and pass the object through to the result, instead of decoding it
// into a Resource only to write the same JSON again. The result must be one JSON object
// (or empty for none), as Get's Resource written by encoding/json; anything else is the
// plugin's error.
type JSONGetter interface {
	// GetJSON is Get with the resource as the JSON object it is written as.
	GetJSON(ctx context.Context, conn, key string, in GetInput) (json.RawMessage, error)
}

// MarshalResult writes a call's result as JSON, as json.Marshal does (byte for byte), with
// a short path for the results the dispatcher makes: one text content, structured
// content, isError. Anything else goes through json.Marshal.
func MarshalResult(r *Result) ([]byte, error) {
	if r == nil || len(r.Content) != 1 || r.Content[0].Type != "text" {
		return json.Marshal(r)
	}
	sc := r.StructuredContent
	text, err := json.Marshal(r.Content[0].Text)
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
