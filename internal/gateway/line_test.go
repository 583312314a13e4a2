package gateway_test

// The socket's line mode (internal/gateway/line.go), driven by hand over a real Unix socket: the
// hello, control lines, MCP both ways, resuming a session, refusals, and the socket's
// HTTP side still answering next to it.

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// startSocket serves g's gateway on a Unix socket in a fresh directory.
func startSocket(t *testing.T, g *gatewaytest.GW) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gwsock")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.sock")
	ln, err := gateway.ListenSocket(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := g.Gateway.SocketServer()
	go func() { _ = g.Gateway.ServeSocket(ln, srv) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		os.RemoveAll(dir)
	})
	return path
}

type lineClient struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialLine(t *testing.T, path string) *lineClient {
	t.Helper()
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &lineClient{t: t, c: c, br: bufio.NewReader(c)}
}

func (l *lineClient) send(line string) {
	l.t.Helper()
	if _, err := l.c.Write([]byte(line + "\n")); err != nil {
		l.t.Fatalf("write: %v", err)
	}
}

// next reads one line within 5 s.
func (l *lineClient) next() string {
	l.t.Helper()
	_ = l.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := l.br.ReadString('\n')
	if err != nil {
		l.t.Fatalf("read: %v (got %q)", err, line)
	}
	return strings.TrimSpace(line)
}

func (l *lineClient) hello(session string) string {
	l.t.Helper()
	b, _ := json.Marshal(map[string]any{"mcpgw": "hello", "version": gateway.LineProtocolVersion,
		"headers": map[string]string{"X-Agent-ID": "line-agent"}, "session": session})
	l.send(string(b))
	w := l.next()
	var welcome struct{ Mcpgw, Session string }
	if !strings.HasPrefix(w, `{"mcpgw":"welcome"`) || json.Unmarshal([]byte(w), &welcome) != nil {
		l.t.Fatalf("want a welcome line first, got %q", w)
	}
	return welcome.Session
}

func (l *lineClient) message() *wire.Msg {
	l.t.Helper()
	line := l.next()
	m, err := wire.Parse([]byte(line))
	if err != nil || m.JSONRPC != "2.0" || (m.Method == "" && m.Result == nil && m.Error == nil) {
		l.t.Fatalf("not a JSON-RPC message: %q (%v)", line, err)
	}
	return m
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"line_test","version":"1"}}}`

func TestLineMode(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	path := startSocket(t, g)

	l := dialLine(t, path)
	if s := l.hello(""); s != "" {
		t.Fatalf("a fresh connection resumed session %q", s)
	}
	// Before initialize, a request is refused with a JSON-RPC error.
	l.send(`{"jsonrpc":"2.0","id":"early","method":"tools/list"}`)
	if m := l.message(); string(m.ID) != `"early"` || m.Error == nil {
		t.Fatalf("request before initialize: want an error for id early, got %+v", m)
	}
	l.send(initLine)
	ctl := l.next()
	var sess struct{ Mcpgw, ID string }
	if !strings.HasPrefix(ctl, `{"mcpgw":"session"`) || json.Unmarshal([]byte(ctl), &sess) != nil || sess.ID == "" {
		t.Fatalf("want the session control line before the initialize result, got %q", ctl)
	}
	if m := l.message(); string(m.ID) != "1" || m.Result == nil || !strings.Contains(string(m.Result), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize result: %+v", m)
	}
	l.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	l.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"everything__test_simple_text","arguments":{}}}`)
	if m := l.message(); string(m.ID) != "2" || m.Result == nil || strings.Contains(string(m.Result), `"isError":true`) {
		t.Fatalf("tools/call over the line mode: %+v", m)
	}
	// Malformed input gets an error line and the connection goes on.
	l.send(`{"jsonrpc":"2.0","id":3,"method":`)
	if m := l.message(); m.Error == nil || wire.ParseError(m.Error).Code != wire.CodeParseError {
		t.Fatalf("malformed line: want a parse error, got %+v", m)
	}
	l.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if m := l.message(); string(m.ID) != "4" || m.Result == nil {
		t.Fatalf("ping after a malformed line: %+v", m)
	}

	// A second initialize on the same connection replaces the session; the connection
	// stays, and the first session ends.
	first := sess.ID
	l.send(strings.Replace(initLine, `"id":1`, `"id":11`, 1))
	if ctl := l.next(); !strings.HasPrefix(ctl, `{"mcpgw":"session"`) || json.Unmarshal([]byte(ctl), &sess) != nil || sess.ID == first {
		t.Fatalf("re-initialize: want a new session control line, got %q (first %s)", ctl, first)
	}
	if m := l.message(); string(m.ID) != "11" || m.Result == nil {
		t.Fatalf("re-initialize result: %+v", m)
	}
	// The first session ends (bounded wait: its end is asynchronous); its stream closing
	// must not take the connection, which still answers afterwards.
	for deadline := time.Now().Add(5 * time.Second); ; {
		r := g.Call(t, first, 13, "ping", "")
		if r.Status == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replaced session %s still answers 5 s later: HTTP %d", first, r.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.send(`{"jsonrpc":"2.0","id":12,"method":"ping"}`)
	if m := l.message(); string(m.ID) != "12" || m.Result == nil {
		t.Fatalf("ping after re-initialize and the first session's end: %+v", m)
	}

	// The socket's HTTP side still answers on the same socket.
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
	req, _ := http.NewRequest(http.MethodPost, "http://mcpgw/mcp", strings.NewReader(initLine))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Agent-ID", "line-agent")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("HTTP over the socket: %v", err)
	}
	resp.Body.Close()
	httpSID := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || httpSID == "" {
		t.Fatalf("HTTP initialize over the socket: HTTP %d, session %q", resp.StatusCode, httpSID)
	}

	// A second connection resumes a session by id (as the bridge does after a daemon
	// restart): no initialize needed.
	l2 := dialLine(t, path)
	if s := l2.hello(httpSID); s != httpSID {
		t.Fatalf("resume: welcome names %q, want %q", s, httpSID)
	}
	l2.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if m := l2.message(); string(m.ID) != "5" || !strings.Contains(string(m.Result), `"name":"everything__`) {
		t.Fatalf("tools/list on a resumed session: %+v", m)
	}
	// An unknown session is not resumed.
	l3 := dialLine(t, path)
	if s := l3.hello("NO-SUCH-SESSION"); s != "" {
		t.Fatalf("an unknown session was resumed as %q", s)
	}

	// Closing the connection ends its session: the client behind the bridge is gone.
	l.c.Close()
	ok := gatewaytest.WaitFor(3*time.Second, func() bool {
		r := g.Call(t, sess.ID, 6, "ping", "")
		return r.Status == http.StatusNotFound
	})
	if !ok {
		t.Errorf("session %s still answers after its line connection closed", sess.ID)
	}
}

func TestLineModeBadHello(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	path := startSocket(t, g)
	for _, hello := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`{"mcpgw":"hello","version":99,"headers":{}}`,
	} {
		l := dialLine(t, path)
		l.send(hello)
		m := l.message()
		if m.Error == nil || wire.ParseError(m.Error).Code != wire.CodeInvalidRequest {
			t.Errorf("hello %s: want an Invalid Request error, got %+v", hello, m)
		}
		_ = l.c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := l.br.ReadString('\n'); err == nil {
			t.Errorf("hello %s: the connection stayed open", hello)
		}
	}
}
