package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestParseRefusesEnvelopesItWillNotRouteOn: the inputs that once crashed the daemon (a
// type error that panicked when printed) and those a second parser could read differently.
func TestParseRefusesEnvelopesItWillNotRouteOn(t *testing.T) {
	tests := []struct {
		in, member string
		id         string
	}{
		{`{"jsonrpc":2,"id":3,"method":"ping"}`, "jsonrpc", "3"},
		{`{"jsonrpc":"2.0","id":3,"method":7}`, "method", "3"},
		{`{"jsonrpc":"2.0","id":"a","method":{"x":1}}`, "method", `"a"`},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"\x9c\"}", "method", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`, "method", "1"},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, "id", "1"},
		{`{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}`, "jsonrpc", "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"x","params":{},"params":[]}`, "params", "1"},
		{`{"jsonrpc":"2.0","id":1,"result":{},"result":{"x":1}}`, "result", "1"},
		{`{"jsonrpc":"2.0","id":{},"method":7}`, "method", ""},
	}
	for _, tt := range tests {
		var m Msg
		err := ParseInto([]byte(tt.in), &m)
		var ee *EnvelopeError
		if !errors.As(err, &ee) {
			t.Errorf("ParseInto(%s) = %v, want an EnvelopeError", tt.in, err)
			continue
		}
		if ee.Member != tt.member || !strings.Contains(err.Error(), tt.member) {
			t.Errorf("ParseInto(%s): error %q names %q, want %q", tt.in, err, ee.Member, tt.member)
		}
		if string(m.ID) != tt.id || m.Method != "" || m.Params != nil {
			t.Errorf("ParseInto(%s) left %+v; want only id %s", tt.in, m, tt.id)
		}
	}
	// Oddly cased members are other members: no jsonrpc, no method, an invalid message.
	m, err := Parse([]byte(`{"JSONRPC":"2.0","ID":1,"Method":"ping"}`))
	if err != nil || m.Valid() || m.Method != "" {
		t.Errorf("oddly cased envelope: %+v, %v; want an invalid message", m, err)
	}
}

func TestStrictMembers(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{`{"uri":"a","_meta":{}}`, nil},
		{`{"uri":"a","uri":"b"}`, ErrDuplicateMember},
		{`{"uri":"a","\u0075ri":"b"}`, ErrDuplicateMember}, // the same name, escaped
		{"{\"ur\xffi\":\"a\"}", ErrInvalidUTF8},
		{`{"Uri":"a","uri":"b"}`, nil}, // exact case: two members
	}
	for _, tt := range tests {
		err := StrictMembers([]byte(tt.in), func(k, v []byte) error { return nil })
		if !errors.Is(err, tt.want) {
			t.Errorf("StrictMembers(%s) = %v, want %v", tt.in, err, tt.want)
		}
	}
	// Past the look-back array, the map takes over.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 40; i++ {
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`)
	}
	b.WriteString(`"kzb":1,"kab":2}`)
	if err := StrictMembers([]byte(b.String()), func(k, v []byte) error { return nil }); !errors.Is(err, ErrDuplicateMember) {
		t.Errorf("duplicate after 40 members: %v", err)
	}
}

func TestStrictString(t *testing.T) {
	if s, err := StrictString([]byte(`"ev__echo"`)); err != nil || s != "ev__echo" {
		t.Errorf("plain: %q %v", s, err)
	}
	if _, err := StrictString([]byte("\"e\xffv\"")); !errors.Is(err, ErrInvalidUTF8) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if _, err := StrictString([]byte(`7`)); !errors.Is(err, ErrNotString) {
		t.Errorf("number: %v", err)
	}
}

func TestAppendLineIsOneLine(t *testing.T) {
	smuggle := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"m\":\"x\"}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"get-env\"}}\r\n}}"
	out := AppendLine(nil, []byte(smuggle))
	if bytes.Count(out, []byte("\n")) != 1 || out[len(out)-1] != '\n' || bytes.IndexByte(out, '\r') >= 0 {
		t.Fatalf("AppendLine wrote more than one line: %q", out)
	}
	if got := OneLine([]byte("{}")); string(got) != "{}" {
		t.Errorf("OneLine changed a plain message: %q", got)
	}
}

func FuzzAppendLine(f *testing.F) {
	f.Add([]byte(`{"a":1}`))
	f.Add([]byte("{\"a\":\n1,\r\"b\":\"x\\ny\"}"))
	f.Add([]byte("\r\n\n"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		out := AppendLine([]byte("prefix"), msg)
		line := out[len("prefix"):]
		if len(line) != len(msg)+1 || line[len(line)-1] != '\n' {
			t.Fatalf("AppendLine(%q) = %q", msg, line)
		}
		body := line[:len(line)-1]
		if bytes.IndexByte(body, '\n') >= 0 || bytes.IndexByte(body, '\r') >= 0 {
			t.Fatalf("AppendLine(%q) left a line end: %q", msg, body)
		}
		if json.Valid(msg) {
			// Only white space changed: the same JSON value.
			var a, b bytes.Buffer
			if json.Compact(&a, msg) != nil || json.Compact(&b, body) != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("AppendLine changed the JSON value of %q: %q", msg, body)
			}
		}
	})
}
