package upstream

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient/httpclienttest"
)

// A streamable HTTP POST carries what MCP asks of it, as the upstream sees it: the media
// types, the session id and protocol version (with Mcp-Method and Mcp-Name for the
// stateless revision), the configured headers, the gateway's User-Agent, and the call's
// own fields.
func TestStreamablePostFields(t *testing.T) {
	got := make(chan http.Header, 4)
	cs := httpclienttest.NewCountedServer(t, false, func(_ *httpclienttest.CountedServer, w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- r.Header.Clone()
		w.Header().Set("Mcp-Session-Id", "sid-1")
		w.WriteHeader(http.StatusAccepted)
	})
	tr := newStreamable("up", cs.URL+"/mcp", map[string]string{"Authorization": "Bearer t"}, newUpstreamHTTPClient(nil), slog.New(slog.DiscardHandler))
	tr.h1.UserAgent = "mcpgw/9.9"
	if err := tr.start(func([]byte, *Call) {}); err != nil {
		t.Fatal(err)
	}
	defer tr.die(ErrClosed)
	send := func(k *Call, msg string) http.Header {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tr.send(ctx, []byte(msg), k); err != nil {
			t.Fatal(err)
		}
		select {
		case h := <-got:
			return h
		case <-time.After(5 * time.Second):
			t.Fatal("the upstream saw no POST")
			return nil
		}
	}
	want := func(h http.Header, name, value string) {
		t.Helper()
		if vs := h.Values(name); len(vs) != 1 || vs[0] != value {
			t.Errorf("%s = %q, want [%q]", name, vs, value)
		}
	}
	h := send(nil, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	want(h, "Content-Type", "application/json")
	want(h, "Accept", "application/json, text/event-stream")
	want(h, "Authorization", "Bearer t")
	want(h, "User-Agent", "mcpgw/9.9")
	for _, name := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method"} {
		if vs := h.Values(name); len(vs) != 0 {
			t.Errorf("before a session: %s = %q", name, vs)
		}
	}
	if !tr.hasSession() {
		t.Fatal("the answer's Mcp-Session-Id was not kept")
	}

	tr.afterInitVersion("2025-06-18")
	k := newCall(nil, 2, "tools/call")
	if err := k.SetHeaders([]Header{{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, {"tracestate", "k=v"}}); err != nil {
		t.Fatal(err)
	}
	h = send(k, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)
	want(h, "Mcp-Session-Id", "sid-1")
	want(h, "Mcp-Protocol-Version", "2025-06-18")
	want(h, "Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	want(h, "Tracestate", "k=v")
	if vs := h.Values("Mcp-Method"); len(vs) != 0 {
		t.Errorf("a session-era POST carries Mcp-Method %q", vs)
	}

	tr.afterInitVersion(StatelessVersion)
	h = send(nil, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`)
	want(h, "Mcp-Protocol-Version", StatelessVersion)
	want(h, "Mcp-Method", "tools/call")
	want(h, "Mcp-Name", "echo")
}

// Content-Type and Accept are the transport's: configured ones are refused.
func TestStreamableRefusesMediaHeaders(t *testing.T) {
	for _, name := range []string{"Content-Type", "accept"} {
		tr := newStreamable("up", "http://127.0.0.1:1/mcp", map[string]string{name: "text/plain"}, newUpstreamHTTPClient(nil), slog.New(slog.DiscardHandler))
		if err := tr.start(func([]byte, *Call) {}); err == nil || !strings.Contains(err.Error(), "set by the gateway") {
			t.Errorf("configured %s: %v, want it refused", name, err)
		}
	}
}

// afterInitVersion sets the negotiated version without starting the GET stream.
func (t *streamTransport) afterInitVersion(v string) {
	t.mu.Lock()
	t.version = v
	t.mu.Unlock()
}

// A call's header fields are checked when set: nothing that could end the request head,
// smuggle a request or contradict the client's framing is kept.
func TestCallSetHeaders(t *testing.T) {
	k := newCall(nil, 1, "tools/call")
	good := []Header{{"traceparent", "00-a-b-01"}, {"tracestate", "k=v, l=w"}}
	if err := k.SetHeaders(good); err != nil || len(k.headers) != 2 {
		t.Fatalf("good fields: %v (kept %d)", err, len(k.headers))
	}
	for _, bad := range [][]Header{
		{{"traceparent", "x\r\n\r\nGET / HTTP/1.1"}},
		{{"traceparent", "x\ny: z"}},
		{{"traceparent", "a\rb"}},
		{{"traceparent", "a\x00"}},
		{{"trace parent", "x"}},
		{{"traceparent: x\r\nX-Evil", "y"}},
		{{"", "x"}},
		{{"Content-Length", "5"}},
		{{"tracestate", "ok"}, {"Host", "elsewhere"}},
	} {
		k := newCall(nil, 1, "tools/call")
		if err := k.SetHeaders(bad); err == nil || k.headers != nil {
			t.Errorf("%q: accepted (err %v, kept %q)", bad, err, k.headers)
		}
	}
}
