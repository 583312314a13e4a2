package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The envelope reader: a hand-written scan of one JSON object's top-level members that
// validates the whole text but builds nothing. Member values are returned as slices of the
// input (no copies), so a message's params or result pass through without being touched.
// encoding/json with RawMessage fields copies every raw member and runs its reflection
// machinery on each message; this does neither.

// maxDepth bounds nesting, as encoding/json does.
const maxDepth = 10000

// errSyntax describes where a text stopped being JSON. It unwraps to a
// *json.SyntaxError with the offset, as encoding/json's errors are.
func errSyntax(msg string, off int) error {
	return &syntaxError{msg: msg, se: &json.SyntaxError{Offset: int64(off)}}
}

type syntaxError struct {
	msg string
	se  *json.SyntaxError
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.se.Offset, e.msg)
}

func (e *syntaxError) Unwrap() error { return e.se }

// Members calls fn for each top-level member of the JSON object b, in order, with the key
// (decoded) and the raw value. It fails on any malformed JSON in b, anywhere in it.
func Members(b []byte, fn func(key string, val []byte) error) error {
	if fn == nil {
		return MembersRaw(b, nil)
	}
	return MembersRaw(b, func(k, v []byte) error { return fn(string(k), v) })
}

// MembersRaw is Members with the key as bytes (decoded; a slice of b unless it has
// escapes), valid only during the call: the hot paths switch on string(key), which does
// not allocate.
func MembersRaw(b []byte, fn func(key, val []byte) error) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		if i < len(b) && json.Valid(b) {
			return ErrNotObject
		}
		return errSyntax("expected object", i)
	}
	end, err := scanObject(b, i, 1, func(ks, ke, vs, ve int) error {
		if fn == nil {
			return nil
		}
		key := b[ks+1 : ke-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var k string
			if err := json.Unmarshal(b[ks:ke], &k); err != nil {
				return err
			}
			key = []byte(k)
		}
		return fn(key, b[vs:ve])
	})
	if err != nil {
		return err
	}
	if j := skipWS(b, end); j != len(b) {
		return errSyntax("text after the object", j)
	}
	return nil
}

// scanObject walks the object starting at b[i] == '{', calling fn (if set) with the
// bounds of each member's key (quotes included) and value; it returns the offset after it.
func scanObject(b []byte, i, depth int, fn func(ks, ke, vs, ve int) error) (int, error) {
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, errSyntax("expected a member name", i)
		}
		ks := i
		ke, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return 0, errSyntax("expected ':'", i)
		}
		vs := skipWS(b, i+1)
		ve, err := skipValue(b, vs, depth+1)
		if err != nil {
			return 0, err
		}
		if fn != nil {
			if err := fn(ks, ke, vs, ve); err != nil {
				return 0, err
			}
		}
		if i, err = next(b, ve, '}'); err != nil || i < 0 {
			return -i, err
		}
	}
}

// scanArray walks the array starting at b[i] == '[', calling fn (if set) with the bounds
// of each element; it returns the offset after it.
func scanArray(b []byte, i, depth int, fn func(vs, ve int) error) (int, error) {
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		ve, err := skipValue(b, i, depth+1)
		if err != nil {
			return 0, err
		}
		if fn != nil {
			if err := fn(i, ve); err != nil {
				return 0, err
			}
		}
		if i, err = next(b, ve, ']'); err != nil || i < 0 {
			return -i, err
		}
	}
}

// next reads the separator after a member or element at b[i]: a ',' gives the offset of
// the next item; the closing byte gives minus the offset after it (the caller is done).
func next(b []byte, i int, closing byte) (int, error) {
	i = skipWS(b, i)
	switch {
	case i >= len(b):
		return 0, errSyntax("unexpected end", i)
	case b[i] == closing:
		return -(i + 1), nil
	case b[i] == ',':
		return skipWS(b, i+1), nil
	}
	return 0, errSyntax("expected ',' or '"+string(closing)+"'", i)
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the offset after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return 0, errSyntax("unterminated escape", i)
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, errSyntax("short \\u escape", i)
				}
				for _, h := range b[i+2 : i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, errSyntax("bad \\u escape", i)
					}
				}
				i += 6
			default:
				return 0, errSyntax("bad escape", i)
			}
		case c < 0x20:
			return 0, errSyntax("control character in string", i)
		default:
			i++
		}
	}
	return 0, errSyntax("unterminated string", i)
}

// skipValue returns the offset after the JSON value starting at b[i].
func skipValue(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return 0, errors.New("json: nesting too deep")
	}
	if i >= len(b) {
		return 0, errSyntax("expected a value", i)
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		return scanObject(b, i, depth, nil)
	case c == '[':
		return scanArray(b, i, depth, nil)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return skipNumber(b, i)
	}
	return 0, errSyntax(fmt.Sprintf("unexpected %q", b[i]), i)
}

func literal(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, errSyntax("bad literal", i)
	}
	return i + len(lit), nil
}

func skipNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if digits() == 0 {
		return 0, errSyntax("bad number", start)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0, errSyntax("bad number", start)
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, errSyntax("bad number", start)
		}
	}
	return i, nil
}

// stringValue decodes a raw JSON string value; ok is false for any other kind of value.
func stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if s, ok := interned(inner); ok {
			return s, true
		}
		return string(inner), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// String decodes a raw JSON string value; ok is false for any other kind of value.
func String(raw []byte) (string, bool) { return stringValue(raw) }

// Elements calls fn for each element of the JSON array b, as a slice of b.
func Elements(b []byte, fn func(val []byte) error) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errSyntax("expected array", i)
	}
	_, err := scanArray(b, i, 1, func(vs, ve int) error { return fn(b[vs:ve]) })
	return err
}

// interned returns the constant for the strings every message carries (the JSON-RPC
// version and the common methods), so reading them allocates nothing.
func interned(b []byte) (string, bool) {
	switch string(b) {
	case "2.0":
		return "2.0", true
	case "tools/call":
		return "tools/call", true
	case "tools/list":
		return "tools/list", true
	case "ping":
		return "ping", true
	case "initialize":
		return "initialize", true
	case "notifications/initialized":
		return "notifications/initialized", true
	case "notifications/progress":
		return "notifications/progress", true
	case "notifications/message":
		return "notifications/message", true
	case "notifications/cancelled":
		return "notifications/cancelled", true
	case "resources/read":
		return "resources/read", true
	case "resources/list":
		return "resources/list", true
	case "prompts/get":
		return "prompts/get", true
	case "prompts/list":
		return "prompts/list", true
	}
	return "", false
}
