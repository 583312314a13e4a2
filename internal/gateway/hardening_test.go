package gateway_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// malformedEnvelopes once crashed the daemon (a type error that panicked when printed) or
// could be read two ways (duplicate or oddly cased members, invalid UTF-8).
var malformedEnvelopes = []struct {
	name, body string
	code       int
}{
	{"non-string jsonrpc", `{"jsonrpc":2,"id":3,"method":"ping"}`, wire.CodeInvalidRequest},
	{"non-string method", `{"jsonrpc":"2.0","id":3,"method":7}`, wire.CodeInvalidRequest},
	{"object method", `{"jsonrpc":"2.0","id":3,"method":{"a":1}}`, wire.CodeInvalidRequest},
	{"invalid UTF-8 method", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"\x9c\"}", wire.CodeInvalidRequest},
	{"duplicate method", `{"jsonrpc":"2.0","id":3,"method":"ping","method":"tools/call"}`, wire.CodeInvalidRequest},
	{"duplicate id", `{"jsonrpc":"2.0","id":3,"id":4,"method":"ping"}`, wire.CodeInvalidRequest},
	{"oddly cased members", `{"JSONRPC":"2.0","ID":3,"Method":"ping"}`, wire.CodeInvalidRequest},
	{"not JSON", `{"jsonrpc":"2.0","id":3,"method":`, wire.CodeParseError},
	{"deep nesting", `{"jsonrpc":"2.0","id":3,"method":"ping","params":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, wire.CodeParseError},
}

func TestMalformedEnvelopesOverHTTP(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	for _, tt := range malformedEnvelopes {
		r := g.Do(t, gatewaytest.Req{Body: tt.body, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")})
		if r.Status != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d %s, want 400", tt.name, r.Status, r.Body)
			continue
		}
		r.RPCError(t, tt.code)
		// The gateway is still there and the session still works.
		if p := g.Call(t, sid, 9, "ping", ""); p.Status != http.StatusOK || p.Message(t).Error != nil {
			t.Fatalf("after %s: ping got HTTP %d %s", tt.name, p.Status, p.Body)
		}
	}
}

func TestMalformedEnvelopesOverSocketLineMode(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	l := dialLine(t, startSocket(t, g))
	l.hello("")
	l.send(initLine)
	for l.next() != "" {
		if m := l.message(); m.IsResponse() {
			break
		}
	}
	for _, tt := range malformedEnvelopes {
		l.send(tt.body)
		m := l.message()
		if m.Error == nil || wire.ParseError(m.Error).Code != tt.code {
			t.Fatalf("%s: got %+v, want error %d", tt.name, m, tt.code)
		}
		l.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		if p := l.message(); p.Error != nil || string(p.ID) != `"p"` {
			t.Fatalf("after %s: ping got %+v", tt.name, p)
		}
	}
}

func TestProtocolVersionMustMatchTheSession(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	r := g.Do(t, gatewaytest.Req{Body: ping, Header: gatewaytest.SessionHeaders(sid, "2025-06-18")})
	if r.Status != http.StatusBadRequest {
		t.Fatalf("2025-06-18 on a 2025-11-25 session: HTTP %d %s, want 400", r.Status, r.Body)
	}
	if e := r.RPCError(t, wire.CodeInvalidRequest); !strings.Contains(e.Message, "2025-11-25") {
		t.Errorf("message %q does not name the negotiated version", e.Message)
	}
	for _, v := range []string{"2025-11-25", "2025-03-26", ""} {
		if r := g.Do(t, gatewaytest.Req{Body: ping, Header: gatewaytest.SessionHeaders(sid, v)}); r.Status != http.StatusOK {
			t.Errorf("version %q: HTTP %d %s, want 200", v, r.Status, r.Body)
		}
	}
}

// TestRoutedParamsAreStrict: a value the gateway routes on cannot be given twice or in
// another case, so no upstream reads a different one than the gateway decided on.
func TestRoutedParamsAreStrict(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	tests := []struct{ method, params string }{
		{"tools/call", `{"name":"everything__echo","name":"everything__get-env","arguments":{}}`},
		{"tools/call", `{"Name":"everything__echo","arguments":{}}`},
		{"tools/call", "{\"name\":\"everything__e\xffcho\"}"},
		{"tools/call", `{"name":"everything__echo","_meta":{"progressToken":1,"progressToken":2}}`},
		{"tools/call", `{"name":"everything__echo","_meta":[1]}`},
		{"resources/read", `{"uri":"test://static/resource/1","uri":"file:///etc/passwd"}`},
		{"resources/read", `{"URI":"test://static/resource/1"}`},
		{"prompts/get", `{"name":"x","name":"y"}`},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"a","name":"b"},"argument":{"name":"x","value":"y"}}`},
	}
	for i, tt := range tests {
		r := g.Call(t, sid, 100+i, tt.method, tt.params)
		if e := r.RPCError(t, wire.CodeInvalidParams); e.Message == "" {
			t.Errorf("%s %s: empty error message", tt.method, tt.params)
		}
	}
}

// TestStalledBodyTimesOut: a client that declares a large body and stops sending gets 408
// within http.body_timeout, instead of holding its connection (and a buffer) for ever.
func TestStalledBodyTimesOut(t *testing.T) {
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.BaseConfig, "http: {max_body_bytes: 65536, page_size: 7}",
		"http: {max_body_bytes: 4194304, page_size: 7, body_timeout: 1s}", 1))
	c, err := net.DialTimeout("tcp", g.Addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4000000\r\n\r\n{\"jsonrpc\":", g.Addr)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("stalled body: HTTP %d, want 408", resp.StatusCode)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("408 took %s, want about body_timeout (1s)", d)
	}
}

// TestLongCallOutlivesBodyTimeout: the read deadline that bounds a body ends with the
// body. A call that runs longer than body_timeout (150 ms of progress against 100 ms)
// completes; had the deadline stayed, net/http would have taken the connection for gone
// and cancelled the call.
func TestLongCallOutlivesBodyTimeout(t *testing.T) {
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.BaseConfig, "http: {max_body_bytes: 65536, page_size: 7}",
		"http: {max_body_bytes: 65536, page_size: 7, body_timeout: 100ms}", 1))
	sid := g.Initialize(t, "2025-11-25", "")
	for i := range 3 { // keep-alive: the deadline is set again for every request
		start := time.Now()
		r := g.Call(t, sid, 10+i, "tools/call", `{"name":"everything__test_tool_with_progress","_meta":{"progressToken":"p"}}`)
		m := r.Message(t)
		if m.Error != nil || !strings.Contains(string(m.Result), `"content"`) {
			t.Fatalf("call %d: %s", i, r.Body)
		}
		if d := time.Since(start); d < 100*time.Millisecond {
			t.Fatalf("call %d took %s: not longer than body_timeout, the test proves nothing", i, d)
		}
	}
}
