package dispatch_test

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// TestUpstreamErrorWithoutCode: a go-sdk server answers an error its handler returned as a
// plain Go error with code 0, which JSON-RPC does not define. The everything-server does
// so when its multi-round-trip tool needs elicitation from a client that declared none (a
// per_session instance is offered its client's own capabilities). The client gets a
// defined code (-32603) and a message naming the upstream.
func TestUpstreamErrorWithoutCode(t *testing.T) {
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.BaseConfig, "    url: {{everything}}\n", "    url: {{everything}}\n    mode: per_session\n", 1))
	sid := g.Initialize(t, "2025-11-25", "{}")
	r := g.Call(t, sid, 2, "tools/call", `{"name":"everything__test_input_required_result_request_state","arguments":{}}`)
	e := r.RPCError(t, wire.CodeInternalError)
	if !strings.Contains(e.Message, `"everything"`) || !strings.Contains(e.Message, "elicitation") {
		t.Errorf("message %q: want the upstream's name and its reason", e.Message)
	}
}

// TestClientErrorWithoutCodeToUpstream: a client's answer to an upstream's request with
// code 0 (a go-sdk client's handler returning a plain Go error) reaches the upstream with
// a defined code (-32603) and the client named, as errors going the other way do. The
// everything-server's test_sampling passes the code and message it got on in its own
// error's text (not its code), so the call's answer shows the upstream received the error
// as the gateway rewrites one without a code: the message after "client: ".
func TestClientErrorWithoutCodeToUpstream(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", `{"sampling":{}}`)
	hr, err := http.NewRequest(http.MethodPost, g.Base+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"everything__test_sampling","arguments":{"prompt":"hi"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range gatewaytest.SessionHeaders(sid, "2025-11-25") {
		hr.Header.Set(k, v)
	}
	hresp, err := gatewaytest.Client().Do(hr) // client bounds the whole exchange (20 s)
	if err != nil {
		t.Fatal(err)
	}
	defer hresp.Body.Close()
	sr := wire.NewSSEReader(bufio.NewReader(hresp.Body), 1<<20)
	next := func() *wire.Msg {
		for {
			ev, err := sr.Next()
			if err != nil {
				t.Fatalf("the call's stream ended: %v", err)
			}
			if len(bytes.TrimSpace(ev.Data)) == 0 {
				continue // priming event
			}
			m, err := wire.Parse(ev.Data)
			if err != nil {
				t.Fatalf("event data is not JSON-RPC: %v\n%s", err, ev.Data)
			}
			return m
		}
	}
	m := next()
	if m.Method != "sampling/createMessage" {
		t.Fatalf("first message %s %s %s, want the sampling request", m.Method, m.Result, m.Error)
	}
	a := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":0,"message":"no model here"}}`, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")})
	if a.Status != http.StatusAccepted {
		t.Fatalf("the client's answer: HTTP %d %s", a.Status, a.Body)
	}
	res := next()
	if !res.IsResponse() {
		t.Fatalf("want the call's answer, got %s", res.Method)
	}
	t.Logf("the call's answer: result %s error %s", res.Result, res.Error)
	got := string(res.Result) + string(res.Error)
	if !strings.Contains(got, "client: no model here") {
		t.Errorf("the upstream did not get the client's error with the client named: %s", got)
	}
}
