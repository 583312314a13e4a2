package plugin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
)

// ErrTooLarge is wrapped by errors that refuse a result for its size: a provider that
// checked MaxResultBytes, or a plugin process that may not send that much. It survives the
// process boundary (package internal/pluginproc), so every refusal ends in the same isError
// result, naming the limit.
var ErrTooLarge = errors.New("result too large")

// ResultLimit bounds one call's result, as the client receives it (the tool result's JSON).
type ResultLimit struct {
	// Bytes is the bound; 0 is none.
	Bytes int
	// Setting names the setting that sets Bytes (the gateway's upstream.max_message_bytes),
	// so that a refusal says what to change; empty names none.
	Setting string
}

type resultLimitKey struct{}

// WithMaxResultBytes tells the providers a call reaches that its result may be at most n
// bytes of JSON (n <= 0: no bound).
func WithMaxResultBytes(ctx context.Context, n int) context.Context {
	if n <= 0 {
		return ctx
	}
	return context.WithValue(ctx, resultLimitKey{}, n)
}

// MaxResultBytes is the bound WithMaxResultBytes set on ctx, 0 for none. A provider that
// can tell a result's size before it reads the result (a database's length of a column)
// checks it and returns an error wrapping ErrTooLarge instead of reading what the gateway
// would refuse anyway.
func MaxResultBytes(ctx context.Context) int {
	n, _ := ctx.Value(resultLimitKey{}).(int)
	return n
}

// JSONSizeAtLeast reports whether v written as JSON takes at least n bytes. It walks the
// contract's values (maps, slices, strings, byte slices, numbers) without writing any of
// them, and stops as soon as it knows, so a huge value is refused at the cost of a look at
// its lengths. Values of other types count as one byte: the answer is a lower bound.
func JSONSizeAtLeast(v any, n int) bool {
	return jsonSize(v, n) >= n
}

// jsonSize is a lower bound of v's JSON length, exact for strings without characters to
// escape; it stops counting once it reaches stop.
func jsonSize(v any, stop int) int {
	switch x := v.(type) {
	case string:
		return len(x) + 2
	case []byte:
		return base64.StdEncoding.EncodedLen(len(x)) + 2
	case json.RawMessage:
		return len(x)
	case json.Number:
		return len(x)
	case map[string]any:
		// "{", each member with the "," or "}" after it ({} is counted as one byte short).
		size := 1
		for k, e := range x {
			size += len(k) + 4 + jsonSize(e, stop-size)
			if size >= stop {
				return size
			}
		}
		return size
	case []any:
		size := 1 // "[", each element with the "," or "]" after it
		for _, e := range x {
			size += 1 + jsonSize(e, stop-size)
			if size >= stop {
				return size
			}
		}
		return size
	case []Resource:
		size := 1
		for _, e := range x {
			size += 1 + jsonSize(e, stop-size)
			if size >= stop {
				return size
			}
		}
		return size
	}
	return 1
}

// toolResultSize is a lower bound of the size of the tool result the dispatcher makes of a
// structured JSON value b: b once as text (a JSON string: each quote and backslash
// escaped) and once as structuredContent.
func toolResultSize(b []byte) int {
	const frame = len(`{"content":[{"type":"text","text":""}],"structuredContent":}`)
	return frame + 2*len(b) + bytes.Count(b, []byte{'"'}) + bytes.Count(b, []byte{'\\'})
}

// resultLimit is a call's ResultLimit with the plugin it is for: the dispatcher's result
// builders check it before they write, and name both when they refuse.
type resultLimit struct {
	ResultLimit
	plugin string
}

// tooLarge is the refusal: which limit, whose result, what to do.
func (l resultLimit) tooLarge() *Result {
	setting := l.Setting
	if setting == "" {
		setting = "the gateway's result limit"
	}
	return errorResult("plugin %s: the result is larger than %d bytes, the limit %s sets; ask for less (one resource, a smaller pageSize, a narrower filter) or raise %s",
		l.plugin, l.Bytes, setting, setting)
}

// failed is the isError result for a provider's error.
func (l resultLimit) failed(err error) *Result {
	if errors.Is(err, ErrTooLarge) {
		return l.tooLarge()
	}
	return errorResult("%s", err.Error())
}

// structured is a result whose structuredContent is v, with the same JSON as text for
// clients that read only content. The result carries the JSON twice, so a value whose JSON
// is more than half the limit is refused before any of it is written.
func (l resultLimit) structured(v map[string]any) *Result {
	if l.Bytes > 0 && JSONSizeAtLeast(v, l.Bytes/2+1) {
		return l.tooLarge()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return errorResult("the plugin's result cannot be written as JSON: %v", err)
	}
	if l.Bytes > 0 && toolResultSize(b) > l.Bytes {
		return l.tooLarge()
	}
	return &Result{Content: []Content{{Type: "text", Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

func (l resultLimit) resource(r Resource, err error) *Result {
	if err != nil {
		return l.failed(err)
	}
	if r == nil {
		return errorResult("the plugin returned no resource")
	}
	return l.structured(r)
}

func (l resultLimit) page(p Page, err error) *Result {
	if err != nil {
		return l.failed(err)
	}
	items := make([]any, len(p.Items))
	for i, r := range p.Items {
		items[i] = r
	}
	m := map[string]any{"items": items}
	if p.NextCursor != "" {
		m["nextCursor"] = p.NextCursor
	}
	return l.structured(m)
}

// raw is resource for a resource that is JSON already.
func (l resultLimit) raw(b json.RawMessage, err error) *Result {
	if err != nil {
		return l.failed(err)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || string(b) == "null" {
		return errorResult("the plugin returned no resource")
	}
	if l.Bytes > 0 && toolResultSize(b) > l.Bytes {
		return l.tooLarge() // before json.Valid reads it
	}
	if b[0] != '{' || !json.Valid(b) {
		return errorResult("the plugin returned a resource that is not a JSON object")
	}
	return &Result{Content: []Content{{Type: "text", Text: string(b)}}, StructuredContent: b}
}
