package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMembersAgreesWithEncodingJSON: the hand-written envelope scanner accepts exactly the
// texts encoding/json accepts as an object, and finds the same members.
func FuzzMembersAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]}}}`,
		`{"jsonrpc":"2.0","id":"a\"b","result":{"content":[{"type":"text","text":"\u00e9\n"}]}}`,
		`{}`, ` { } `, `{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":-0.5e+3}`, `{"a":1.}`, `{"a":"\x"}`,
		`{"a":tru}`, `[1]`, `"s"`, `{"a":[1,]}`, `{"a":{"b":1}}x`, `{"\u0061":2,"a":3}`, "{\"a\":\"\x01\"}",
		`{"a":1e}`, `{"a":-}`, `{"a":[]}`, `{"a":{}}`, `{"a":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want map[string]json.RawMessage
		werr := json.Unmarshal(b, &want)
		got := map[string][]byte{}
		gerr := Members(b, func(k string, v []byte) error {
			// encoding/json turns invalid UTF-8 in keys into U+FFFD; compare keys that way.
			got[validUTF8(k)] = v
			return nil
		})
		trimmed := bytes.TrimSpace(b)
		isObj := len(trimmed) > 0 && trimmed[0] == '{'
		if isObj && (werr == nil) != (gerr == nil) {
			t.Fatalf("encoding/json err=%v, Members err=%v for %q", werr, gerr, b)
		}
		if werr != nil || gerr != nil {
			return
		}
		if len(got) != len(want) {
			t.Fatalf("members %d, want %d", len(got), len(want))
		}
		for k, v := range want {
			if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
				t.Fatalf("member %q = %q, want %q", k, got[k], v)
			}
		}
	})
}

// validUTF8 replaces each invalid byte with U+FFFD, as encoding/json does.
func validUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
