package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// parseSeeds are envelopes of every kind the gateway meets, plus input that must fail
// cleanly. They run as plain tests in `go test` and seed `make fuzz`.
var parseSeeds = []string{
	// requests
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":null}]},"_meta":{"progressToken":7}}}`,
	`{"jsonrpc":"2.0","id":-3,"method":"tools/list","params":{"cursor":"dG9vbHMBeA"}}`,
	`  {"jsonrpc":"2.0","id":1.5e3,"method":"initialize","params":{}}  `,
	`{"method":"x","jsonrpc":"2.0","id":0}`,
	// notifications
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"because"}}`,
	`{"jsonrpc":"2.0","id":null,"method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
	// responses
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"hi"}],"isError":true}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"both"}}`,
	// batches and other JSON that is no message object
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	`[]`, `null`, `true`, `42`, `"string"`,
	// garbage
	``, ` `, `{`, `}`, `{"jsonrpc":"2.0","id":1,"method":`, `{"jsonrpc":2,"id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":{},"method":"x"}`, `{"jsonrpc":"2.0","id":[1],"method":"x"}`,
	`{"jsonrpc":"2.0","id":true,"method":"x"}`, `{"jsonrpc":"2.0","method":""}`,
	`{"jsonrpc":"2.0","method":5}`, `{"a":1} trailing`, "\x00\xff\xfe", `{"jsonrpc":"1.0","id":1,"method":"x"}`,
	// huge ids
	`{"jsonrpc":"2.0","id":123456789012345678901234567890123456789012345678901234567890,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1e400,"method":"x"}`,
	`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 4096) + `","method":"x"}`,
	// unicode
	`{"jsonrpc":"2.0","id":"ключ","method":"tools/call","params":{"name":"工具","arguments":{"emoji":"😀\u2028"}}}`,
	`{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"m\u00e9thode"}`,
	`{"jsonrpc":"2.0","id":1,"method":"a\tb"}`,
	// duplicate envelope members, invalid UTF-8, wrong types: refused (EnvelopeError)
	`{"jsonrpc":"2.0","id":1,"id":null,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`,
	`{"jsonrpc":"2.0","method":"\x9c"}`, "{\"jsonrpc\":\"2.0\",\"method\":\"\x9c\"}",
	`{"jsonrpc":2,"id":3,"method":"ping"}`, `{"jsonrpc":"2.0","id":3,"method":7}`,
	`{"JSONRPC":"2.0","ID":1,"Method":"ping"}`,
}

func deepNesting(n int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(deepNesting(100)))
	f.Add([]byte(deepNesting(20000))) // past encoding/json's depth limit: an error, not a crash
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			_ = err.Error() // every error the parser returns can be printed
			var ee *EnvelopeError
			if errors.As(err, &ee) && (ee.Member == "" || ee.Problem == "") {
				t.Fatalf("envelope error without a member or problem: %#v", ee)
			}
			if m != nil {
				t.Fatalf("Parse returned a message with error %v", err)
			}
			if errors.Is(err, ErrNotObject) && !json.Valid(bytes.TrimSpace(b)) {
				t.Fatalf("ErrNotObject for input that is not valid JSON: %q", b)
			}
			return
		}
		if string(m.ID) == "null" {
			t.Fatalf("a null id must be reported as no id")
		}
		if !utf8.ValidString(m.Method) {
			t.Fatalf("Parse accepted a method that is not UTF-8: %q", m.Method)
		}
		kinds := 0
		for _, k := range []bool{m.IsRequest(), m.IsNotification(), m.IsResponse()} {
			if k {
				kinds++
			}
		}
		if kinds > 1 {
			t.Fatalf("%q is %d kinds of message at once", b, kinds)
		}
		if !m.Valid() {
			return
		}
		if kinds != 1 {
			t.Fatalf("valid message %q is neither request, notification nor response", b)
		}
		switch {
		case m.IsRequest():
			checkRoundTrip(t, "Request", Request(m.ID, m.Method, m.Params), m)
		case m.IsNotification():
			checkRoundTrip(t, "Notification", Notification(m.Method, m.Params), m)
		case m.Result != nil:
			checkRoundTrip(t, "Result", Result(m.ID, m.Result), m)
		default:
			checkRoundTrip(t, "RawError", RawError(m.ID, m.Error), m)
			e := ParseError(m.Error)
			if e.Message != "" && utf8.ValidString(e.Message) {
				back, err := Parse(Error(m.ID, e.Code, e.Message, nil))
				if err != nil {
					t.Fatalf("Error builder output does not parse: %v", err)
				}
				if got := ParseError(back.Error); got.Code != e.Code || got.Message != e.Message {
					t.Fatalf("Error builder round trip: got %+v, want %+v", got, e)
				}
			}
		}
	})
}

// checkRoundTrip parses a builder's output and compares it with the message it was
// built from.
func checkRoundTrip(t *testing.T, builder string, out []byte, want *Msg) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("%s built invalid JSON %q from %+v", builder, out, want)
	}
	got, err := Parse(out)
	if err != nil {
		t.Fatalf("%s output %q does not parse: %v", builder, out, err)
	}
	if !got.Valid() {
		t.Fatalf("%s output %q is not a valid message", builder, out)
	}
	if !bytes.Equal(got.ID, want.ID) || got.Method != want.Method ||
		!bytes.Equal(got.Params, want.Params) || !bytes.Equal(got.Result, want.Result) || !bytes.Equal(got.Error, want.Error) {
		t.Fatalf("%s round trip changed the message:\n got  %+v\n want %+v", builder, got, want)
	}
}

func TestBuildersRoundTrip(t *testing.T) {
	params := json.RawMessage(`{"name":"a","arguments":{"x":[1,"two",null]}}`)
	for _, id := range []json.RawMessage{IntID(0), IntID(-7), IntID(1 << 60), Quote("req-1"), Quote("ü \"quoted\"")} {
		checkRoundTrip(t, "Request", Request(id, "tools/call", params), &Msg{ID: id, Method: "tools/call", Params: params})
		checkRoundTrip(t, "Result", Result(id, params), &Msg{ID: id, Result: params})
	}
	checkRoundTrip(t, "Notification", Notification("notifications/initialized", nil), &Msg{Method: "notifications/initialized"})

	m, err := Parse(Error(nil, CodeSessionNotFound, "Session not found", map[string]string{"k": "v"}))
	if err != nil {
		t.Fatal(err)
	}
	if m.ID != nil || !m.IsResponse() {
		t.Fatalf("Error(nil, ...) should be a response with a null id, got %+v", m)
	}
	e := ParseError(m.Error)
	if e.Code != CodeSessionNotFound || e.Message != "Session not found" || string(e.Data) != `{"k":"v"}` {
		t.Fatalf("ParseError = %+v", e)
	}
}

// TestRequestBuilderQuotesMethodAsJSON: the gateway relays server-to-client requests
// with the upstream's method name (serverRequest in internal/gateway/internal/dispatch/relay.go
// → wire.Request), so a method that JSON carried as "\u0001" must come out as JSON again.
func TestRequestBuilderQuotesMethodAsJSON(t *testing.T) {
	for _, method := range []string{"a\x01b", "bell\a", "del\x7f", "tag\U000E0001"} {
		for name, out := range map[string][]byte{
			"Request":      Request(IntID(1), method, nil),
			"Notification": Notification(method, nil),
		} {
			if !json.Valid(out) {
				t.Errorf("%s(%q) = %s: not JSON", name, method, out)
				continue
			}
			if m, err := Parse(out); err != nil || m.Method != method {
				t.Errorf("%s(%q) parses back as %+v, %v", name, method, m, err)
			}
		}
	}
}

func TestParseKinds(t *testing.T) {
	tests := []struct {
		in                  string
		req, notif, resp, v bool
		err                 error
	}{
		{in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, req: true, v: true},
		{in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, notif: true, v: true},
		{in: `{"jsonrpc":"2.0","id":null,"method":"n"}`, notif: true, v: true},
		{in: `{"jsonrpc":"2.0","id":1,"result":{}}`, resp: true, v: true},
		{in: `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`, resp: true, v: true},
		{in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`, resp: true, v: false},
		{in: `{"jsonrpc":"2.0","id":true,"method":"x"}`, req: true, v: false},
		{in: `{"jsonrpc":"1.0","id":1,"method":"x"}`, req: true, v: false},
		{in: `{"jsonrpc":"2.0"}`, v: false},
		{in: `[1]`, err: ErrNotObject},
		{in: `"s"`, err: ErrNotObject},
	}
	for _, tt := range tests {
		m, err := Parse([]byte(tt.in))
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Parse(%s) err = %v, want %v", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%s): %v", tt.in, err)
			continue
		}
		if m.IsRequest() != tt.req || m.IsNotification() != tt.notif || m.IsResponse() != tt.resp || m.Valid() != tt.v {
			t.Errorf("Parse(%s): request %v notification %v response %v valid %v; want %v %v %v %v",
				tt.in, m.IsRequest(), m.IsNotification(), m.IsResponse(), m.Valid(), tt.req, tt.notif, tt.resp, tt.v)
		}
	}
	for _, in := range []string{``, `{`, `garbage`, `{"jsonrpc":"2.0","id":1,"method":`} {
		if _, err := Parse([]byte(in)); err == nil || errors.Is(err, ErrNotObject) {
			t.Errorf("Parse(%q) err = %v, want a syntax error", in, err)
		}
	}
}

var sseSeeds = []string{
	"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
	"event: message\nid: s1-0\ndata: {}\n\n",
	"id: 1\nretry: 1000\ndata: \n\n",
	": keep-alive\n\n",
	"event: endpoint\r\ndata: /message?sessionId=abc\r\n\r\n",
	"data: line1\ndata: line2\n\n",
	"data:nospace\n\n",
	"data\n\n",
	"data: no trailing blank line",
	"retry: notanumber\ndata: x\n\n",
	"\n\n\n",
	"id: only-an-id\n\n",
	"field-without-colon\n\n",
	"data: " + strings.Repeat("x", 70<<10) + "\n\n", // longer than the reader's buffer
	"data: ünïcödé 😀\n\n",
	"data: \x00\xff\n\n",
	"",
}

func FuzzSSEReader(f *testing.F) {
	for _, s := range sseSeeds {
		f.Add([]byte(s), []byte(`{"jsonrpc":"2.0","method":"x"}`), "s1-3", "message")
	}
	f.Add([]byte("data: x\n\n"), []byte("{\n  \"pretty\": [1,\n 2]\n}"), "", "")
	f.Add([]byte(""), []byte(" leading space"), "id", "")
	f.Fuzz(func(t *testing.T, stream, data []byte, id, name string) {
		// Any stream: no panic, and it ends.
		r := NewSSEReader(bytes.NewReader(stream), 1<<20)
		for n := 0; ; n++ {
			if n > len(stream)+1 {
				t.Fatalf("more events (%d) than input bytes (%d)", n, len(stream))
			}
			ev, err := r.Next()
			if err != nil {
				break
			}
			if len(ev.Data) == 0 && ev.ID == "" && ev.Retry == 0 {
				t.Fatalf("Next returned an empty event %+v", ev)
			}
		}

		// AppendEvent then SSEReader gives the event back. Ids and names are written by
		// the gateway (no line breaks); data is a JSON message.
		if strings.ContainsAny(id, "\r\n") || strings.ContainsAny(name, "\r\n") || !json.Valid(data) {
			return
		}
		want := data
		if bytes.ContainsAny(data, "\r\n") {
			var c bytes.Buffer
			_ = json.Compact(&c, data)
			want = c.Bytes()
		}
		buf := AppendEvent(nil, id, name, data)
		buf = AppendEvent(buf, "", "", []byte(`{}`))
		r = NewSSEReader(bytes.NewReader(buf), 1<<20)
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("reading back %q: %v", buf, err)
		}
		if !bytes.Equal(ev.Data, want) || ev.ID != id || ev.Name != name {
			t.Fatalf("round trip of %q: got id %q name %q data %q", buf, ev.ID, ev.Name, ev.Data)
		}
		if ev2, err := r.Next(); err != nil || string(ev2.Data) != `{}` {
			t.Fatalf("second event: %+v, %v", ev2, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the last event: %v, want io.EOF", err)
		}
	})
}

func TestSSEReaderEvents(t *testing.T) {
	in := ": comment\n\n" +
		"event: endpoint\ndata: /message?sessionId=1\n\n" +
		"id: a-1\r\nretry: 1500\r\ndata: {\"x\":1}\r\n\r\n" +
		"data: one\ndata: two\n\n" +
		"id: a-2\ndata: \n\n" +
		"data: tail"
	r := NewSSEReader(strings.NewReader(in), 0)
	want := []Event{
		{Name: "endpoint", Data: []byte("/message?sessionId=1")},
		{ID: "a-1", Retry: 1500, Data: []byte(`{"x":1}`)},
		{Data: []byte("one\ntwo")},
		{ID: "a-2", Data: []byte{}},
		// "data: tail" has no closing blank line: an unterminated event is dropped at EOF.
	}
	for i, w := range want {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if ev.ID != w.ID || ev.Name != w.Name || ev.Retry != w.Retry || string(ev.Data) != string(w.Data) {
			t.Fatalf("event %d = %+v, want %+v", i, ev, w)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("end: %v, want io.EOF", err)
	}
}

// TestSSEReaderBoundsLine: NewSSEReader documents that maxLine bounds one line; an
// upstream that streams one endless line must not make the gateway buffer it all.
func TestSSEReaderBoundsLine(t *testing.T) {
	const max = 1024
	r := NewSSEReader(strings.NewReader("data: "+strings.Repeat("x", 64*max)+"\n\n"), max)
	if ev, err := r.Next(); err == nil {
		t.Fatalf("a %d-byte line was read whole (%d bytes) despite maxLine %d", 64*max, len(ev.Data), max)
	}
}

func TestAppendEventCompactsMultiLineJSON(t *testing.T) {
	got := string(AppendEvent(nil, "s-1", "message", []byte("{\n  \"a\": 1\n}")))
	want := "event: message\nid: s-1\ndata: {\"a\":1}\n\n"
	if got != want {
		t.Fatalf("AppendEvent = %q, want %q", got, want)
	}
	if got := string(AppendEvent(nil, "", "", []byte(`{}`))); got != "data: {}\n\n" {
		t.Fatalf("AppendEvent without id and name = %q", got)
	}
}
