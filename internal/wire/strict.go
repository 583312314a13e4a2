package wire

import (
	"bytes"
	"errors"
	"unicode/utf8"
)

// The rules for what crosses a boundary (docs/security.md):
//
//   - Every message written to a line-framed peer (a stdio upstream, the bridge's line mode)
//     is one line by construction: AppendLine, never the raw bytes plus "\n".
//   - Every value the gateway routes on (a tool or prompt name, a resource URI, a completion
//     ref, a progress token) is read with StrictMembers and StrictString: exact-case member
//     names, no member given twice, valid UTF-8. What is forwarded is rebuilt from what was
//     decided, so the upstream cannot read the message differently from the gateway.

// ErrDuplicateMember is returned by StrictMembers for an object that names a member twice.
var ErrDuplicateMember = errors.New("a member is given more than once")

// ErrInvalidUTF8 is returned for a routed string or member name that is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("not valid UTF-8")

// ErrNotString is returned by StrictString for a value that is not a JSON string.
var ErrNotString = errors.New("not a string")

// StrictMembers is MembersRaw for objects whose members the gateway routes on: it refuses
// an object that names a member twice (JSON parsers disagree on which one counts) and
// member names that are not valid UTF-8.
func StrictMembers(b []byte, fn func(key, val []byte) error) error {
	// Params objects have a handful of members: a linear look-back is cheaper than a map.
	var keys [16][]byte
	var more map[string]struct{}
	n := 0
	return MembersRaw(b, func(k, v []byte) error {
		if !utf8.Valid(k) {
			return ErrInvalidUTF8
		}
		for _, seen := range keys[:min(n, len(keys))] {
			if bytes.Equal(seen, k) {
				return ErrDuplicateMember
			}
		}
		if more != nil {
			if _, dup := more[string(k)]; dup {
				return ErrDuplicateMember
			}
		}
		if n < len(keys) {
			// k may be a decoded copy or a slice of b; either outlives this call.
			keys[n] = k
		} else {
			if more == nil {
				more = map[string]struct{}{}
			}
			more[string(k)] = struct{}{}
		}
		n++
		return fn(k, v)
	})
}

// StrictString decodes a routed string value: a JSON string whose text is valid UTF-8.
func StrictString(raw []byte) (string, error) {
	if !utf8.Valid(raw) {
		return "", ErrInvalidUTF8
	}
	s, ok := stringValue(raw)
	if !ok {
		return "", ErrNotString
	}
	return s, nil
}

// AppendLine appends msg to dst as one line: the message followed by "\n", with every raw
// CR and LF in it written as a space. In JSON text CR and LF can only stand between tokens
// (a string holds them escaped), so for a valid message this changes white space only; for
// anything else it still cannot end the line early. Readers that split on CR as well as LF
// (Node's readline, Python's universal newlines) see the same single line. The common case,
// a message without either byte, is one copy after two memchr scans.
func AppendLine(dst, msg []byte) []byte {
	start := len(dst)
	dst = append(dst, msg...)
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		for i := start; i < len(dst); i++ {
			if c := dst[i]; c == '\n' || c == '\r' {
				dst[i] = ' '
			}
		}
	}
	return append(dst, '\n')
}

// OneLine returns msg itself when it holds no CR or LF, else a copy with each written as a
// space: the message as one line, without the line end (for writers that add their own).
func OneLine(msg []byte) []byte {
	if bytes.IndexByte(msg, '\n') < 0 && bytes.IndexByte(msg, '\r') < 0 {
		return msg
	}
	out := AppendLine(make([]byte, 0, len(msg)+1), msg)
	return out[:len(out)-1]
}

// ParseFailure is the error answer for a message ParseInto refused with err (m is what
// ParseInto left: the id, where it was readable): -32600 for JSON that is no message object
// or an envelope the gateway will not route on, -32700 for text that is not JSON. Every
// front and the bridge answer with it, so a client sees the same error everywhere.
func ParseFailure(err error, m *Msg) []byte {
	var ee *EnvelopeError
	switch {
	case errors.Is(err, ErrNotObject):
		return Error(nil, CodeInvalidRequest, "Invalid Request: not a JSON-RPC message object", nil)
	case errors.As(err, &ee):
		return Error(m.ID, CodeInvalidRequest, "Invalid Request: "+ee.Error(), nil)
	}
	return Error(nil, CodeParseError, "Parse error: "+err.Error(), nil)
}
