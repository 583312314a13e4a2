package wire

import (
	"encoding/json"
	"testing"
)

// AppendQuote must produce exactly what json.Marshal does, fast path or not.
func FuzzAppendQuoteAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "echo", "github__create_issue", `a"b`, `back\slash`, "<tag>", "a&b",
		"tab\there", "nl\n", "ünïcödé", "\x7f", "\u2028", "\xff\xfe", "emoji 🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("json.Marshal(%q): %v", s, err)
		}
		if got := AppendQuote([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendQuote(%q) = %s, want x%s", s, got, want)
		}
		if got := Quote(s); string(got) != string(want) {
			t.Fatalf("Quote(%q) = %s, want %s", s, got, want)
		}
	})
}

// interned strings come back equal to what was read, for every interned value and for
// near misses.
func TestStringValueInterning(t *testing.T) {
	for _, s := range []string{"2.0", "tools/call", "tools/list", "ping", "initialize", "notifications/cancelled",
		"2.1", "tools/calls", "tools/cal", "", "prompts/get"} {
		raw, _ := json.Marshal(s)
		got, ok := String(raw)
		if !ok || got != s {
			t.Errorf("String(%s) = %q, %v; want %q", raw, got, ok, s)
		}
	}
}
