package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
)

func TestMain(m *testing.M) {
	os.Exit(gatewaytest.Main(m))
}

// TestErrorTable sends each bad input of the error table (docs/protocol.md) over HTTP and checks the
// status code and the JSON-RPC error.
func TestErrorTable(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	ended := g.Initialize(t, "2025-11-25", "")
	if r := g.Do(t, gatewaytest.Req{Method: http.MethodDelete, Header: map[string]string{"Mcp-Session-Id": ended}}); r.Status != http.StatusOK {
		t.Fatalf("DELETE: HTTP %d %s", r.Status, r.Body)
	}
	_, port, _ := net.SplitHostPort(g.Addr)
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	list := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	sess := gatewaytest.SessionHeaders(sid, "2025-11-25")
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range sess {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	tests := []struct {
		name       string
		req        gatewaytest.Req
		wantStatus int
		wantCode   int    // JSON-RPC error code; 0: no JSON-RPC body to check
		wantMsg    string // substring of the error message
		wantID     string // raw id of the error response ("" means null)
	}{
		{name: "malformed JSON", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":1,"method":`, Header: sess}, wantStatus: 400, wantCode: wire.CodeParseError},
		{name: "malformed JSON without session", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0",,}`}, wantStatus: 400, wantCode: wire.CodeParseError},
		{name: "garbage", req: gatewaytest.Req{Body: `hello`, Header: sess}, wantStatus: 400, wantCode: wire.CodeParseError},
		{name: "empty body", req: gatewaytest.Req{Body: ``, Header: sess}, wantStatus: 400, wantCode: wire.CodeParseError},
		{name: "malformed batch", req: gatewaytest.Req{Body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},`, Header: sess}, wantStatus: 400, wantCode: wire.CodeParseError},
		{name: "not an object", req: gatewaytest.Req{Body: `"ping"`, Header: sess}, wantStatus: 400, wantCode: wire.CodeInvalidRequest},
		{name: "not JSON-RPC 2.0", req: gatewaytest.Req{Body: `{"jsonrpc":"1.0","id":3,"method":"ping"}`, Header: sess}, wantStatus: 400, wantCode: wire.CodeInvalidRequest, wantID: "3"},

		{name: "batch on 2025-11-25 session", req: gatewaytest.Req{Body: `[` + ping + `]`, Header: sess}, wantStatus: 400, wantCode: wire.CodeInvalidRequest, wantMsg: "batch"},
		{name: "batch with 2025-06-18 header", req: gatewaytest.Req{Body: `[` + ping + `]`, Header: with(map[string]string{"MCP-Protocol-Version": "2025-06-18"})}, wantStatus: 400, wantMsg: "batch", wantCode: wire.CodeInvalidRequest},
		{name: "batch without session", req: gatewaytest.Req{Body: `[` + ping + `]`}, wantStatus: 400, wantCode: wire.CodeInvalidRequest},

		{name: "old protocol version header", req: gatewaytest.Req{Body: list, Header: with(map[string]string{"MCP-Protocol-Version": "2024-01-01"})}, wantStatus: 400, wantCode: wire.CodeUnsupportedProtocolVersion, wantMsg: "Unsupported protocol version"},
		{name: "legacy-only version on streamable HTTP", req: gatewaytest.Req{Body: list, Header: with(map[string]string{"MCP-Protocol-Version": "2024-11-05"})}, wantStatus: 400, wantCode: wire.CodeUnsupportedProtocolVersion, wantMsg: "Unsupported protocol version"},
		{name: "garbage version header", req: gatewaytest.Req{Body: list, Header: with(map[string]string{"MCP-Protocol-Version": "banana"})}, wantStatus: 400},

		{name: "unknown session POST", req: gatewaytest.Req{Body: list, Header: map[string]string{"Mcp-Session-Id": "no-such-session"}}, wantStatus: 404, wantCode: wire.CodeSessionNotFound, wantMsg: "Session not found", wantID: "7"},
		{name: "unknown session GET", req: gatewaytest.Req{Method: http.MethodGet, Header: map[string]string{"Mcp-Session-Id": "no-such-session", "Accept": "text/event-stream"}}, wantStatus: 404, wantCode: wire.CodeSessionNotFound, wantMsg: "Session not found"},
		{name: "unknown session DELETE", req: gatewaytest.Req{Method: http.MethodDelete, Header: map[string]string{"Mcp-Session-Id": "no-such-session"}}, wantStatus: 404, wantCode: wire.CodeSessionNotFound, wantMsg: "Session not found"},
		{name: "ended session POST", req: gatewaytest.Req{Body: list, Header: gatewaytest.SessionHeaders(ended, "2025-11-25")}, wantStatus: 404, wantCode: wire.CodeSessionNotFound, wantMsg: "Session not found", wantID: "7"},
		{name: "ended session notification", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Header: gatewaytest.SessionHeaders(ended, "2025-11-25")}, wantStatus: 404, wantCode: wire.CodeSessionNotFound},
		{name: "ended session GET", req: gatewaytest.Req{Method: http.MethodGet, Header: map[string]string{"Mcp-Session-Id": ended, "Accept": "text/event-stream"}}, wantStatus: 404, wantCode: wire.CodeSessionNotFound},
		{name: "ended session DELETE", req: gatewaytest.Req{Method: http.MethodDelete, Header: map[string]string{"Mcp-Session-Id": ended}}, wantStatus: 404, wantCode: wire.CodeSessionNotFound},
		{name: "ended session batch", req: gatewaytest.Req{Body: `[` + ping + `]`, Header: map[string]string{"Mcp-Session-Id": ended}}, wantStatus: 404, wantCode: wire.CodeSessionNotFound},

		{name: "missing session id POST", req: gatewaytest.Req{Body: list}, wantStatus: 400, wantCode: wire.CodeInvalidRequest, wantMsg: "Mcp-Session-Id", wantID: "7"},
		{name: "missing session id notification", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}, wantStatus: 400},
		{name: "missing session id GET", req: gatewaytest.Req{Method: http.MethodGet, Header: map[string]string{"Accept": "text/event-stream"}}, wantStatus: 400, wantMsg: "Mcp-Session-Id"},
		{name: "missing session id DELETE", req: gatewaytest.Req{Method: http.MethodDelete}, wantStatus: 400, wantMsg: "Mcp-Session-Id"},

		{name: "bad Host", req: gatewaytest.Req{Body: ping, Header: with(map[string]string{"Host": "evil.example:" + port})}, wantStatus: 403, wantMsg: "Host"},
		{name: "bad Host on initialize", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, Header: map[string]string{"Host": "rebind.example"}}, wantStatus: 403},
		{name: "bad Host on GET /sse", req: gatewaytest.Req{Method: http.MethodGet, Path: "/sse", Header: map[string]string{"Host": "evil.example"}}, wantStatus: 403},
		{name: "bad Host on /message", req: gatewaytest.Req{Path: "/message?sessionId=x", Body: ping, Header: map[string]string{"Host": "evil.example"}}, wantStatus: 403},
		{name: "right host, wrong port", req: gatewaytest.Req{Body: ping, Header: with(map[string]string{"Host": "127.0.0.1:1"})}, wantStatus: 403},
		{name: "bad Origin, good Host", req: gatewaytest.Req{Body: ping, Header: with(map[string]string{"Origin": "http://evil.example"})}, wantStatus: 403, wantMsg: "Origin"},
		{name: "Origin null", req: gatewaytest.Req{Body: ping, Header: with(map[string]string{"Origin": "null"})}, wantStatus: 403},
		{name: "Origin of another local port", req: gatewaytest.Req{Body: ping, Header: with(map[string]string{"Origin": "http://127.0.0.1:1"})}, wantStatus: 403},

		{name: "unknown method", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":"u","method":"tools/frobnicate"}`, Header: sess}, wantStatus: 200, wantCode: wire.CodeMethodNotFound, wantID: `"u"`},
		{name: "unknown tool", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"everything__no_such_tool","arguments":{}}}`, Header: sess}, wantStatus: 200, wantCode: wire.CodeInvalidParams, wantID: "8"},
		{name: "tool of an upstream that is down", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"down__anything","arguments":{}}}`, Header: sess}, wantStatus: 200, wantCode: wire.CodeInvalidParams},
		{name: "upstream name without prefix", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"test_simple_text","arguments":{}}}`, Header: sess}, wantStatus: 200, wantCode: wire.CodeInvalidParams},
		{name: "tools/call without a name", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{}}`, Header: sess}, wantStatus: 200, wantCode: wire.CodeInvalidParams},
		{name: "invalid cursor", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"%%% not a cursor"}}`, Header: sess}, wantStatus: 200, wantCode: wire.CodeInvalidParams, wantMsg: "cursor"},
		{name: "cursor of another list", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"` + base64.RawURLEncoding.EncodeToString([]byte("prompts\x01everything__test_simple_prompt")) + `"}}`, Header: sess}, wantStatus: 200, wantCode: wire.CodeInvalidParams},
		{name: "cursor for a tool not in the view", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"cursor":"` + base64.RawURLEncoding.EncodeToString([]byte("tools\x01down__x")) + `"}}`, Header: sess}, wantStatus: 200, wantCode: wire.CodeInvalidParams},
		{name: "invalid prompts cursor", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":9,"method":"prompts/list","params":{"cursor":"nope"}}`, Header: sess}, wantStatus: 200, wantCode: wire.CodeInvalidParams},

		{name: "server/discover without Mcp-Method", req: gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, Header: map[string]string{"MCP-Protocol-Version": "2026-07-28"}}, wantStatus: 400, wantCode: -32020, wantID: "1"},
		{name: "2026-07-28 tools/list without _meta", req: gatewaytest.Req{Body: list, Header: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}}, wantStatus: 400, wantCode: wire.CodeInvalidParams},
		{name: "unknown future revision", req: gatewaytest.Req{Body: list, Header: map[string]string{"MCP-Protocol-Version": "2099-01-01"}}, wantStatus: 400, wantCode: wire.CodeUnsupportedProtocolVersion},

		{name: "GET without Accept", req: gatewaytest.Req{Method: http.MethodGet, Header: map[string]string{"Mcp-Session-Id": sid}}, wantStatus: 406},
		{name: "GET accepting only JSON", req: gatewaytest.Req{Method: http.MethodGet, Header: map[string]string{"Mcp-Session-Id": sid, "Accept": "application/json"}}, wantStatus: 406},
		{name: "PUT", req: gatewaytest.Req{Method: http.MethodPut, Header: map[string]string{"Mcp-Session-Id": sid}}, wantStatus: 405},

		{name: "legacy /message unknown session", req: gatewaytest.Req{Path: "/message?sessionId=no-such-session", Body: ping}, wantStatus: 404, wantCode: wire.CodeSessionNotFound, wantMsg: "Session not found"},
		{name: "legacy /message with a streamable session", req: gatewaytest.Req{Path: "/message?sessionId=" + sid, Body: ping}, wantStatus: 404, wantCode: wire.CodeSessionNotFound},
		{name: "legacy /message without session", req: gatewaytest.Req{Path: "/message", Body: ping}, wantStatus: 400},
		{name: "legacy /message GET", req: gatewaytest.Req{Method: http.MethodGet, Path: "/message?sessionId=x"}, wantStatus: 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := g.Do(t, tt.req)
			t.Logf("HTTP %d %s", r.Status, bytes.TrimSpace(r.Body))
			if r.Status != tt.wantStatus {
				t.Fatalf("HTTP %d, want %d; body %s", r.Status, tt.wantStatus, r.Body)
			}
			if tt.wantStatus >= 400 && tt.wantStatus != 406 && tt.wantStatus != 405 {
				if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("error answer has Content-Type %q, want application/json", ct)
				}
			}
			if tt.wantCode == 0 && tt.wantMsg == "" {
				return
			}
			m := r.Message(t)
			if m.Error == nil {
				t.Fatalf("no JSON-RPC error in %s", r.Body)
			}
			e := wire.ParseError(m.Error)
			if tt.wantCode != 0 && e.Code != tt.wantCode {
				t.Errorf("JSON-RPC code %d (%q), want %d", e.Code, e.Message, tt.wantCode)
			}
			if !strings.Contains(e.Message, tt.wantMsg) {
				t.Errorf("message %q does not mention %q", e.Message, tt.wantMsg)
			}
			if e.Code == wire.CodeSessionNotFound && e.Message != "Session not found" {
				t.Errorf("message %q, want exactly \"Session not found\"", e.Message)
			}
			if tt.wantCode != 0 && string(m.ID) != tt.wantID && tt.wantID != "" {
				t.Errorf("response id %s, want %s", m.ID, tt.wantID)
			}
		})
	}

	// The session that saw all of that still works.
	if r := g.Call(t, sid, 1, "ping", ""); r.Status != http.StatusOK || r.Message(t).Error != nil {
		t.Fatalf("ping after the error table: HTTP %d %s", r.Status, r.Body)
	}
}

// TestAllowedHostsAndOrigins are the positive side of the Host/Origin check.
func TestAllowedHostsAndOrigins(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig+"\n  # extra\n")
	_, port, _ := net.SplitHostPort(g.Addr)
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`
	for _, h := range []map[string]string{
		{"Host": "localhost:" + port},
		{"Host": "127.0.0.1:" + port, "Origin": "http://127.0.0.1:" + port},
		{"Host": "localhost:" + port, "Origin": "http://localhost:" + port},
		{"Host": "LOCALHOST:" + port},
	} {
		if r := g.Do(t, gatewaytest.Req{Body: init, Header: h}); r.Status != http.StatusOK {
			t.Errorf("initialize with %v: HTTP %d %s", h, r.Status, r.Body)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	pad := func(n int) string {
		return `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"` + strings.Repeat("x", n) + `"}}`
	}
	send := func(t *testing.T, body string, chunked bool, path string) gatewaytest.Resp {
		t.Helper()
		var rd io.Reader = strings.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // hides the length from net/http
		}
		hr, _ := http.NewRequest(http.MethodPost, g.Base+path, rd)
		if chunked {
			hr.ContentLength = -1
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		hr.Header.Set("Mcp-Session-Id", sid)
		hresp, err := gatewaytest.Client().Do(hr)
		if err != nil {
			t.Fatalf("POST: %v", err)
		}
		defer hresp.Body.Close()
		b, _ := io.ReadAll(hresp.Body)
		return gatewaytest.Resp{Status: hresp.StatusCode, Header: hresp.Header, Body: b}
	}
	for _, chunked := range []bool{false, true} {
		name := map[bool]string{false: "content-length", true: "chunked"}[chunked]
		t.Run(name, func(t *testing.T) {
			r := send(t, pad(65536+4096), chunked, "/mcp")
			if r.Status != http.StatusRequestEntityTooLarge {
				t.Fatalf("over the limit: HTTP %d %s", r.Status, r.Body)
			}
			if te, _ := g.TE.Load().(string); chunked != (te == "chunked") {
				t.Fatalf("the request was sent with Transfer-Encoding %q", te)
			}
			if m := r.Message(t); m.Error == nil {
				t.Fatalf("413 without a JSON-RPC error: %s", r.Body)
			}
			r = send(t, pad(60000), chunked, "/mcp")
			if r.Status != http.StatusOK || r.Message(t).Error != nil {
				t.Fatalf("under the limit: HTTP %d %s", r.Status, r.Body)
			}
		})
	}
	t.Run("legacy /message", func(t *testing.T) {
		ls := openLegacy(t, g)
		defer ls.close()
		for _, chunked := range []bool{false, true} {
			if r := send(t, pad(65536+4096), chunked, "/message?sessionId="+ls.id); r.Status != http.StatusRequestEntityTooLarge {
				t.Fatalf("chunked=%v: HTTP %d %s", chunked, r.Status, r.Body)
			}
		}
	})
}

func TestNotificationAccepted(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}`,
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/made_up"}`,
		`{"jsonrpc":"2.0","id":"mcpgw-r999","result":{}}`, // a response nobody asked for
	} {
		r := g.Do(t, gatewaytest.Req{Body: body, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")})
		if r.Status != http.StatusAccepted || len(r.Body) != 0 {
			t.Errorf("%s: HTTP %d body %q, want 202 and no body", body, r.Status, r.Body)
		}
	}
}

func TestServerDiscoverProbe(t *testing.T) {
	// A dual-era client probing with a revision the gateway does not serve gets -32022 with
	// the versions it does serve (2026-07-28 and the session ones), and can initialize.
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":"probe","method":"server/discover","params":{}}`, Header: map[string]string{"MCP-Protocol-Version": "2099-01-01"}})
	if r.Status != http.StatusBadRequest {
		t.Fatalf("HTTP %d %s", r.Status, r.Body)
	}
	e := r.RPCError(t, wire.CodeUnsupportedProtocolVersion)
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil {
		t.Fatalf("error data %s: %v", e.Data, err)
	}
	if !slices.Contains(data.Supported, "2025-11-25") || !slices.Contains(data.Supported, "2026-07-28") || data.Requested != "2099-01-01" {
		t.Errorf("data = %+v, want supported to list 2026-07-28 and 2025-11-25, requested 2099-01-01", data)
	}
	if m := r.Message(t); string(m.ID) != `"probe"` {
		t.Errorf("id %s, want \"probe\"", m.ID)
	}
	g.Initialize(t, "2025-11-25", "")
}

func TestBatchOn20250326(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-03-26", "")
	r := g.Do(t, gatewaytest.Req{Body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"no/such"}]`,
		Header: gatewaytest.SessionHeaders(sid, "2025-03-26")})
	if r.Status != http.StatusOK {
		t.Fatalf("batch on 2025-03-26: HTTP %d %s", r.Status, r.Body)
	}
	var replies []json.RawMessage
	if err := json.Unmarshal(r.Body, &replies); err != nil || len(replies) != 2 {
		t.Fatalf("want two replies, got %s (%v)", r.Body, err)
	}
	if m, _ := wire.Parse(replies[1]); m == nil || wire.ParseError(m.Error).Code != wire.CodeMethodNotFound {
		t.Errorf("second reply %s, want -32601", replies[1])
	}
}

func TestToolsListAndUpstreamDown(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	names := g.ToolNames(t, sid) // page_size 7: several pages
	if !slices.IsSorted(names) {
		t.Errorf("tools not in name order: %v", names)
	}
	if !slices.Contains(names, "everything__test_simple_text") {
		t.Fatalf("everything's tools missing: %v", names)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "down__") {
			t.Errorf("tool %s of the down upstream is in the view", n)
		}
	}
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("duplicate names across pages: %v", names)
	}
	r := g.Call(t, sid, 3, "tools/call", `{"name":"everything__test_simple_text","arguments":{}}`)
	m := r.Message(t)
	if r.Status != http.StatusOK || m.Error != nil || !bytes.Contains(m.Result, []byte("text")) {
		t.Fatalf("call through the gateway: HTTP %d %s", r.Status, r.Body)
	}
	if string(m.ID) != "3" {
		t.Errorf("response id %s, want 3", m.ID)
	}
}

// TestCallTimeout: a call that outlives upstream.call_timeout comes back as a tool
// result with isError, naming the upstream, in about the timeout.
func TestCallTimeout(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig+"upstream: {call_timeout: 300ms}\n")
	// The client declares sampling and never answers test_sampling's request.
	sid := g.Initialize(t, "2025-11-25", `{"sampling":{}}`)
	start := time.Now()
	r := g.Call(t, sid, 4, "tools/call", `{"name":"everything__test_sampling","arguments":{"prompt":"hi"}}`)
	took := time.Since(start)
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d %s", r.Status, r.Body)
	}
	var sawSampling bool
	for _, m := range r.Messages(t) {
		sawSampling = sawSampling || m.Method == "sampling/createMessage"
	}
	if !sawSampling {
		t.Errorf("the upstream's sampling request was not relayed on the call's stream: %s", r.Body)
	}
	m := r.Message(t)
	if m.Error != nil {
		t.Fatalf("timeout as a JSON-RPC error %s; want a tool result with isError", m.Error)
	}
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || !res.IsError || len(res.Content) == 0 {
		t.Fatalf("result %s, want isError true with a text", m.Result)
	}
	if !strings.Contains(res.Content[0].Text, `"everything"`) {
		t.Errorf("error text %q does not name the upstream", res.Content[0].Text)
	}
	if took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("answered after %v, want about the 300ms call timeout", took)
	}
	if r := g.Call(t, sid, 5, "ping", ""); r.Status != http.StatusOK || r.Message(t).Error != nil {
		t.Fatalf("session after a timeout: HTTP %d %s", r.Status, r.Body)
	}
}

// TestUpstreamDiesMidLife: a shared upstream that goes away answers calls with isError
// naming it; once it is down its tools stay listed (its last catalogue) and a call says
// it is down (the errors table: not an unknown tool).
func TestUpstreamDiesMidLife(t *testing.T) {
	url, stop, err := gatewaytest.StartEverything(filepath.Join(t.TempDir(), "flaky.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.BaseConfig, "{{everything}}", url, 1)+"upstream: {call_timeout: 3s}\n")
	sid := g.Initialize(t, "2025-11-25", "")
	before := g.ToolNames(t, sid)
	if !slices.Contains(before, "everything__test_simple_text") {
		t.Fatal("upstream tools missing before the kill")
	}
	stop()
	r := g.Call(t, sid, 6, "tools/call", `{"name":"everything__test_simple_text","arguments":{}}`)
	m := r.Message(t)
	t.Logf("call after the kill: %s", bytes.TrimSpace(r.Body))
	if m.Error != nil || !bytes.Contains(m.Result, []byte(`"isError":true`)) || !bytes.Contains(m.Result, []byte(`\"everything\"`)) {
		t.Fatalf("call to a dead upstream: %s %s; want isError naming \"everything\"", m.Error, m.Result)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if st, _ := g.Reg.Server("everything").State(); st == registry.StateDown {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead upstream is not down after 10s")
		}
		time.Sleep(50 * time.Millisecond) // polls the state, bounded
	}
	names, err := g.TryToolNames(t, sid)
	if err != nil || len(names) != len(before) {
		t.Errorf("tools/list while the upstream is down: %d tools (%v), want the %d listed before", len(names), err, len(before))
	}
	r = g.Call(t, sid, 7, "tools/call", `{"name":"everything__test_simple_text","arguments":{}}`)
	m = r.Message(t)
	if m.Error != nil || !bytes.Contains(m.Result, []byte(`"isError":true`)) || !bytes.Contains(m.Result, []byte(`\"everything\"`)) ||
		!bytes.Contains(m.Result, []byte("is down")) {
		t.Errorf("call while the upstream is down: %s %s; want isError naming \"everything\" and saying it is down", m.Error, m.Result)
	}
}

// openGET opens the session's GET stream and returns once its headers arrived.
func openGET(g *gatewaytest.GW, t *testing.T, sid string) (int, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.Base+"/mcp", nil)
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Mcp-Session-Id", sid)
	hresp, err := http.DefaultClient.Do(hr)
	if err != nil {
		cancel()
		t.Fatalf("GET: %v", err)
	}
	if hresp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(hresp.Body)
		hresp.Body.Close()
		cancel()
		t.Logf("GET: HTTP %d %s", hresp.StatusCode, b)
		return hresp.StatusCode, func() {}
	}
	return hresp.StatusCode, func() { cancel(); hresp.Body.Close() }
}

func TestSecondGETStream(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	status, cancel1 := openGET(g, t, sid)
	if status != http.StatusOK {
		t.Fatalf("first GET: HTTP %d", status)
	}
	r := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Header: map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}})
	if r.Status != http.StatusConflict {
		cancel1()
		t.Fatalf("second concurrent GET: HTTP %d %s, want 409", r.Status, r.Body)
	}
	cancel1()
	// Once the first stream is gone, a new one may open.
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, cancel := openGET(g, t, sid)
		cancel()
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET after the first stream closed: HTTP %d", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGETUnsupportedVersion: the version check applies to GET as it does to POST.
func TestGETUnsupportedVersion(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	r := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Header: map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream", "MCP-Protocol-Version": "2024-01-01"}})
	if r.Status != http.StatusBadRequest {
		t.Fatalf("GET with 2024-01-01: HTTP %d", r.Status)
	}
	t.Run("garbage", func(t *testing.T) {
		status, cancel := openGETWithVersion(g, t, sid, "banana")
		cancel()
		if status != http.StatusBadRequest {
			t.Fatalf("GET with MCP-Protocol-Version banana: HTTP %d, want 400", status)
		}
	})
}

func openGETWithVersion(g *gatewaytest.GW, t *testing.T, sid, version string) (int, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	hr, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.Base+"/mcp", nil)
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Mcp-Session-Id", sid)
	hr.Header.Set("MCP-Protocol-Version", version)
	hresp, err := http.DefaultClient.Do(hr)
	if err != nil {
		cancel()
		t.Fatalf("GET: %v", err)
	}
	return hresp.StatusCode, func() { cancel(); hresp.Body.Close() }
}

// legacySession is an open GET /sse stream.
type legacySession struct {
	id       string
	endpoint string // the endpoint event's path, before ?sessionId=
	events   chan wire.Event
	close    func()
}

func openLegacy(t *testing.T, g *gatewaytest.GW) *legacySession { return openLegacyAt(t, g, "/sse") }

func openLegacyAt(t *testing.T, g *gatewaytest.GW, path string) *legacySession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, _ := http.NewRequestWithContext(ctx, http.MethodGet, g.Base+path, nil)
	hr.Header.Set("Accept", "text/event-stream")
	hresp, err := http.DefaultClient.Do(hr)
	if err != nil {
		cancel()
		t.Fatalf("GET /sse: %v", err)
	}
	if hresp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("GET /sse: HTTP %d", hresp.StatusCode)
	}
	ls := &legacySession{events: make(chan wire.Event, 64), close: func() { cancel(); hresp.Body.Close() }}
	go func() {
		defer close(ls.events)
		sr := wire.NewSSEReader(bufio.NewReader(hresp.Body), 1<<20)
		for {
			ev, err := sr.Next()
			if err != nil {
				return
			}
			ls.events <- ev
		}
	}()
	select {
	case ev := <-ls.events:
		ep, q, ok := strings.Cut(string(ev.Data), "?sessionId=")
		if ev.Name != "endpoint" || !ok {
			ls.close()
			t.Fatalf("first event %+v, want the endpoint", ev)
		}
		ls.id, ls.endpoint = q, ep
	case <-time.After(5 * time.Second):
		ls.close()
		t.Fatal("no endpoint event")
	}
	return ls
}

// TestLegacySSEUnderMCP: GET /mcp/sse and POST /mcp/messages are the legacy front too,
// and a stream opened under /mcp names /mcp/messages as its endpoint.
func TestLegacySSEUnderMCP(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	for _, c := range []struct{ open, endpoint string }{{"/sse", "/message"}, {"/mcp/sse", "/mcp/messages"}} {
		ls := openLegacyAt(t, g, c.open)
		if ls.endpoint != c.endpoint {
			t.Errorf("GET %s: endpoint %q, want %q", c.open, ls.endpoint, c.endpoint)
		}
		r := g.Do(t, gatewaytest.Req{Path: c.endpoint + "?sessionId=" + ls.id,
			Body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{}}}`})
		if r.Status != http.StatusAccepted {
			t.Errorf("POST %s initialize: HTTP %d %s", c.endpoint, r.Status, r.Body)
		}
		select {
		case ev := <-ls.events:
			if !strings.Contains(string(ev.Data), `"serverInfo"`) {
				t.Errorf("GET %s: want the initialize result on the stream, got %s", c.open, ev.Data)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("GET %s: no initialize result on the stream", c.open)
		}
		ls.close()
	}
}

func TestLegacySSE(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	ls := openLegacy(t, g)
	defer ls.close()
	post := func(body string) gatewaytest.Resp {
		return g.Do(t, gatewaytest.Req{Path: "/message?sessionId=" + ls.id, Body: body})
	}
	if r := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{}}}`); r.Status != http.StatusAccepted {
		t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
	}
	if r := post(`{"jsonrpc":"2.0","id":2,"method":"no/such"}`); r.Status != http.StatusAccepted {
		t.Fatalf("unknown method: HTTP %d %s", r.Status, r.Body)
	}
	if r := post(`{"jsonrpc":"2.0","id":3,`); r.Status != http.StatusBadRequest {
		t.Fatalf("malformed JSON: HTTP %d %s", r.Status, r.Body)
	} else {
		r.RPCError(t, wire.CodeParseError)
	}
	got := map[string]*wire.Msg{}
	timeout := time.After(5 * time.Second)
	for len(got) < 2 {
		select {
		case ev, ok := <-ls.events:
			if !ok {
				t.Fatal("stream ended")
			}
			if m, err := wire.Parse(ev.Data); err == nil && m.IsResponse() {
				got[string(m.ID)] = m
			}
		case <-timeout:
			t.Fatalf("responses on the stream: %v", got)
		}
	}
	if got["1"].Error != nil || !bytes.Contains(got["1"].Result, []byte(`"2024-11-05"`)) {
		t.Errorf("initialize result %s", got["1"].Result)
	}
	if e := wire.ParseError(got["2"].Error); e.Code != wire.CodeMethodNotFound {
		t.Errorf("unknown method on the legacy stream: %+v", e)
	}
	// Closing the stream ends the session.
	ls.close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := post(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
		if r.Status == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session still usable after its stream closed: HTTP %d", r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// progressCall calls test_tool_with_progress (three progress notifications, 0%, 50% and
// 100%, before the result) with a progress token and returns the tokens the client got.
func progressCall(t *testing.T, g *gatewaytest.GW, sid string, id int) []string {
	t.Helper()
	r := g.Call(t, sid, id, "tools/call", `{"name":"everything__test_tool_with_progress","arguments":{},"_meta":{"progressToken":"tok-1"}}`)
	var tokens []string
	for _, m := range r.Messages(t) {
		if m.Method != "notifications/progress" {
			continue
		}
		var p struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		}
		_ = json.Unmarshal(m.Params, &p)
		tokens = append(tokens, string(p.ProgressToken))
	}
	if m := r.Message(t); m.Error != nil || string(m.ID) != fmt.Sprint(id) {
		t.Errorf("final response %s", r.Body)
	}
	return tokens
}

// TestProgressTokenRestored: the gateway rewrites progress tokens for the upstream and
// gives the client back its own.
func TestProgressTokenRestored(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	tokens := progressCall(t, g, sid, 4)
	if len(tokens) < 2 { // 3 once TestProgressFirstNotificationKept passes
		t.Errorf("%d progress notifications on the call's stream, want 3", len(tokens))
	}
	for _, tok := range tokens {
		if tok != `"tok-1"` {
			t.Errorf("progress with token %s, want \"tok-1\"", tok)
		}
	}
}

// TestProgressFirstNotificationKept: a progress notification the upstream sends as soon
// as it gets the call must reach the client too.
func TestProgressFirstNotificationKept(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	// Concurrent calls make the race between the upstream's first notification and the
	// route's set-up likely.
	const rounds, sessions, calls = 3, 8, 10
	var lost atomic.Int32
	for r := 0; r < rounds; r++ {
		var wg sync.WaitGroup
		for i := 0; i < sessions; i++ {
			sid := g.Initialize(t, "2025-11-25", "")
			for j := 0; j < calls; j++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if n := len(progressCall(t, g, sid, 10+j)); n != 3 {
						lost.Add(1)
					}
				}()
			}
		}
		wg.Wait()
	}
	if n := lost.Load(); n > 0 {
		t.Fatalf("%d of %d calls lost progress notifications", n, rounds*sessions*calls)
	}
}

// TestCancelledCall: notifications/cancelled from the client ends the call's stream
// without a response, and the session goes on.
func TestCancelledCall(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", `{"sampling":{}}`)
	// The call waits for the client's sampling answer, which never comes; once its
	// sampling request is on the call's stream, the call is surely in flight: cancel it.
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
	if ct := hresp.Header.Get("Content-Type"); hresp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call: HTTP %d %s, want an event stream", hresp.StatusCode, ct)
	}
	sr := wire.NewSSEReader(bufio.NewReader(hresp.Body), 1<<20)
	next := func() (*wire.Msg, error) {
		for {
			ev, err := sr.Next()
			if err != nil {
				return nil, err
			}
			if len(bytes.TrimSpace(ev.Data)) == 0 {
				continue // priming event
			}
			m, err := wire.Parse(ev.Data)
			if err != nil {
				t.Fatalf("event data is not JSON-RPC: %v\n%s", err, ev.Data)
			}
			return m, nil
		}
	}
	for {
		m, err := next()
		if err != nil {
			t.Fatalf("the call's stream ended before its sampling request: %v", err)
		}
		if m.Method == "sampling/createMessage" {
			break
		}
		if m.IsResponse() {
			t.Fatalf("the call answered before its sampling request: %s", m.Result)
		}
	}
	start := time.Now()
	c := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")})
	if c.Status != http.StatusAccepted {
		t.Fatalf("cancellation: HTTP %d %s", c.Status, c.Body)
	}
	for {
		m, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the call's stream after the cancellation: %v", err)
		}
		if m.IsResponse() {
			t.Errorf("a cancelled request got a response: %s %s", m.Result, m.Error)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the call's stream ended %v after the cancellation", took)
	}
	if r := g.Call(t, sid, 10, "ping", ""); r.Status != http.StatusOK || r.Message(t).Error != nil {
		t.Fatalf("session after cancellation: HTTP %d %s", r.Status, r.Body)
	}
}

func TestFastAnswerFollowsAcceptPreference(t *testing.T) {
	// A fast answer is plain JSON for a client that lists JSON first, and an event stream
	// for one that prefers text/event-stream, in both eras.
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	// The first tools/list of a view builds its pages and counts their tokens (auto's
	// measure; the tokenizer's vocabulary on first use): not a fast answer under -race. One
	// list first, so the ones below are served from the view's cache.
	if r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")}); r.Status != http.StatusOK {
		t.Fatalf("warm-up tools/list: HTTP %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct {
		accept, wantCT string
	}{
		{"application/json, text/event-stream", "application/json"},
		{"text/event-stream, application/json", "text/event-stream"},
	} {
		h := gatewaytest.SessionHeaders(sid, "2025-11-25")
		h["Accept"] = tc.accept
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`,
		} {
			r := g.Do(t, gatewaytest.Req{Body: body, Header: h})
			if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), tc.wantCT) {
				t.Errorf("Accept %q, %s: HTTP %d Content-Type %q, want %s", tc.accept, body, r.Status, r.Header.Get("Content-Type"), tc.wantCT)
				continue
			}
			if m := r.Message(t); m.Error != nil {
				t.Errorf("Accept %q, %s: error answer %s", tc.accept, body, r.Body)
			}
		}
		// The same for a stateless (2026-07-28) request.
		r := g.Do(t, gatewaytest.StatelessReq("tools/list", "{"+gatewaytest.StatelessMeta+"}", map[string]string{"Accept": tc.accept}))
		if !strings.HasPrefix(r.Header.Get("Content-Type"), tc.wantCT) {
			t.Errorf("Accept %q, stateless tools/list: HTTP %d Content-Type %q, want %s", tc.accept, r.Status, r.Header.Get("Content-Type"), tc.wantCT)
		}
		gatewaytest.StatelessResult(t, r)
	}
}
