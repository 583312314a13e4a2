package integrity

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Ambiguous reports whether def (JSON) names a member twice in any object, at any depth,
// or does not parse. JSON parsers disagree on which of two members counts (most take the
// last, some the first), so a client may read such a definition differently from the
// fingerprint and from the admin who approved it: it is never trusted on sight.
func Ambiguous(def json.RawMessage) bool {
	d := json.NewDecoder(bytes.NewReader(def))
	d.UseNumber()
	type frame struct {
		object bool
		key    bool // the next token of an object is a member name
		seen   map[string]bool
	}
	var stack []*frame
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return len(stack) != 0
		}
		if err != nil {
			return true
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if delim, ok := tok.(json.Delim); ok && delim == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			name, _ := tok.(string)
			if top.seen[name] {
				return true
			}
			top.seen[name] = true
			top.key = false
			continue
		}
		if top != nil && top.object {
			top.key = true // this token is the member's value (or opens it)
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, key: true, seen: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}
