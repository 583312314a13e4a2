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

// errSyntax describes where a text stopped being JSON.
func errSyntax(msg string, off int) error {
	return &json.SyntaxError{Offset: int64(off)}
}

// Members calls fn for each top-level member of the JSON object b, in order, with the key
// (decoded) and the raw value. It fails on any malformed JSON in b, anywhere in it.
func Members(b []byte, fn func(key string, val []byte) error) error {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		if i < len(b) && json.Valid(b) {
			return ErrNotObject
		}
		return errSyntax("expected object", i)
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		if j := skipWS(b, i+1); j != len(b) {
			return errSyntax("text after the object", j)
		}
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errSyntax("expected a member name", i)
		}
		ks := i
		ke, err := skipString(b, i)
		if err != nil {
			return err
		}
		key := b[ks+1 : ke-1]
		var k string
		if bytes.IndexByte(key, '\\') >= 0 {
			if err := json.Unmarshal(b[ks:ke], &k); err != nil {
				return err
			}
		} else {
			k = string(key)
		}
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return errSyntax("expected ':'", i)
		}
		i = skipWS(b, i+1)
		vs := i
		ve, err := skipValue(b, i, 1)
		if err != nil {
			return err
		}
		if fn != nil {
			if err := fn(k, b[vs:ve]); err != nil {
				return err
			}
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			return errSyntax("unexpected end", i)
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			if j := skipWS(b, i+1); j != len(b) {
				return errSyntax("text after the object", j)
			}
			return nil
		default:
			return errSyntax("expected ',' or '}'", i)
		}
	}
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
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return 0, errSyntax("expected a member name", i)
			}
			e, err := skipString(b, i)
			if err != nil {
				return 0, err
			}
			i = skipWS(b, e)
			if i >= len(b) || b[i] != ':' {
				return 0, errSyntax("expected ':'", i)
			}
			if i, err = skipValue(b, skipWS(b, i+1), depth+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, errSyntax("unexpected end", i)
			}
			if b[i] == '}' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return 0, errSyntax("expected ',' or '}'", i)
			}
			i = skipWS(b, i+1)
		}
	case c == '[':
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = skipValue(b, i, depth+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, errSyntax("unexpected end", i)
			}
			if b[i] == ']' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return 0, errSyntax("expected ',' or ']'", i)
			}
			i = skipWS(b, i+1)
		}
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
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		vs := i
		ve, err := skipValue(b, i, 1)
		if err != nil {
			return err
		}
		if err := fn(b[vs:ve]); err != nil {
			return err
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			return errSyntax("unexpected end", i)
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case ']':
			return nil
		default:
			return errSyntax("expected ',' or ']'", i)
		}
	}
}
