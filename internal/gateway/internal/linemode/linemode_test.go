package linemode

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// fakeHost is a gateway of string sessions: initialize opens "s1", a request is answered
// with its method, and what happens to sessions is recorded.
type fakeHost struct {
	mu     sync.Mutex
	ended  []string
	stream *clientstream.Stream
}

func (h *fakeHost) Admit(_ context.Context, _ *http.Request, ask Ask[string]) (intake.Admission[string], *auth.Failure) {
	a := intake.Admission[string]{ID: &auth.Identity{Method: "header"}}
	switch {
	case ask.Resume == "s1":
		a.Session, a.Has = "s1", true
	case ask.Resume == "" && ask.Has:
		a.Session, a.Has = ask.Session, true
	}
	return a, nil
}
func (h *fakeHost) ID(s string) string                                        { return s }
func (h *fakeHost) Detach(string, *clientstream.Stream)                       {}
func (h *fakeHost) Ended(string) bool                                         { return false }
func (h *fakeHost) Refuse(http.ResponseWriter, *auth.Failure, *auth.Identity) {}
func (h *fakeHost) Deliver(string, *wire.Msg)                                 {}
func (h *fakeHost) Dispatch(_ context.Context, _ string, m *wire.Msg, write func([]byte) error) {
	if m.Method == "boom" {
		panic("boom")
	}
	_ = write(wire.Result(m.ID, json.RawMessage(`{"method":`+string(wire.Quote(m.Method))+`}`)))
}
func (h *fakeHost) LogPanic(string, any) {}
func (h *fakeHost) Log() *slog.Logger    { return slog.New(slog.DiscardHandler) }
func (h *fakeHost) Attach(_ string, st *clientstream.Stream) bool {
	h.mu.Lock()
	h.stream = st
	h.mu.Unlock()
	return true
}
func (h *fakeHost) End(s string, why string) {
	h.mu.Lock()
	h.ended = append(h.ended, s+": "+why)
	h.mu.Unlock()
}
func (h *fakeHost) Open(_ context.Context, m *wire.Msg, _ *auth.Identity, _ string) (string, []byte, []byte, *auth.Failure) {
	return "s1", json.RawMessage(`{"protocolVersion":"2025-11-25"}`), nil, nil
}

// talk runs Serve on one end of a pipe and returns the other end's line reader and writer.
func talk(t *testing.T, h *fakeHost, maxLine int) (send func(string), recv func() string, done <-chan struct{}) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	sv := &Server[string]{Host: h, Ctx: context.Background(), Queue: 8, MaxLine: maxLine, Versions: []string{"2025-11-25"}}
	fin := make(chan struct{})
	go func() { sv.Serve(a, bufio.NewReader(a)); close(fin) }()
	br := bufio.NewReader(b)
	send = func(s string) {
		t.Helper()
		_ = b.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := b.Write([]byte(s + "\n")); err != nil {
			t.Fatalf("send %s: %v", s, err)
		}
	}
	recv = func() string {
		t.Helper()
		_ = b.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("recv: %v", err)
		}
		return strings.TrimSpace(line)
	}
	return send, recv, fin
}

// TestServe: the hello is answered; requests before initialize are refused; initialize
// names the session on a control line before its result; a request is dispatched and
// answered, a panic in it answered as an internal error; server/discover is refused with
// the served versions; a line over the bound is refused and the connection goes on; the
// bridge closing the connection ends the session.
func TestServe(t *testing.T) {
	h := &fakeHost{}
	send, recv, _ := talk(t, h, 256)
	send(`{"mcpgw":"hello","version":1,"headers":{"X-Agent-ID":"a"}}`)
	if got := recv(); got != `{"mcpgw":"welcome","session":""}` {
		t.Fatalf("welcome: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if got := recv(); !strings.Contains(got, "send initialize first") {
		t.Errorf("a request before initialize: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`)
	if got := recv(); got != `{"mcpgw":"session","id":"s1"}` {
		t.Errorf("session line: %s", got)
	}
	if got := recv(); !strings.Contains(got, `"id":2`) || !strings.Contains(got, "2025-11-25") {
		t.Errorf("initialize result: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if got := recv(); !strings.Contains(got, `"method":"tools/list"`) || !strings.Contains(got, `"id":3`) {
		t.Errorf("dispatched request: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"boom"}`)
	if got := recv(); !strings.Contains(got, `"id":4`) || !strings.Contains(got, "Internal error") {
		t.Errorf("a panicking request: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"server/discover"}`)
	if got := recv(); !strings.Contains(got, `"supported":["2025-11-25"]`) {
		t.Errorf("server/discover: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":6,"method":"x","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`)
	if got := recv(); !strings.Contains(got, "Invalid Request") {
		t.Errorf("a line over the bound: %s", got)
	}
	h.mu.Lock()
	st := h.stream
	h.mu.Unlock()
	_ = st.Send([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
	if got := recv(); !strings.Contains(got, "list_changed") {
		t.Errorf("the session's stream: %s", got)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	if got := recv(); !strings.Contains(got, `"id":7`) {
		t.Errorf("after the long line: %s", got)
	}
}

// TestServeEndsSessionWhenBridgeCloses: the bridge going away ends its session; a hello
// that is not one, or of another version, is refused and the connection closed.
func TestServeEndsSessionWhenBridgeCloses(t *testing.T) {
	h := &fakeHost{}
	a, b := net.Pipe()
	sv := &Server[string]{Host: h, Ctx: context.Background(), Queue: 8, MaxLine: 1 << 16}
	fin := make(chan struct{})
	go func() { sv.Serve(a, bufio.NewReader(a)); close(fin) }()
	br := bufio.NewReader(b)
	_, _ = b.Write([]byte(`{"mcpgw":"hello","version":1,"headers":{},"session":"s1"}` + "\n"))
	if got, _ := br.ReadString('\n'); !strings.Contains(got, `"session":"s1"`) {
		t.Fatalf("resumed welcome: %s", got)
	}
	b.Close()
	select {
	case <-fin:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the bridge closed")
	}
	h.mu.Lock()
	ended := strings.Join(h.ended, ";")
	h.mu.Unlock()
	if ended != "s1: bridge disconnected" {
		t.Errorf("ended: %q", ended)
	}

	for _, hello := range []string{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, `{"mcpgw":"hello","version":9}`} {
		a, b := net.Pipe()
		fin := make(chan struct{})
		go func() { sv.Serve(a, bufio.NewReader(a)); close(fin) }()
		_, _ = b.Write([]byte(hello + "\n"))
		got, _ := bufio.NewReader(b).ReadString('\n')
		if !strings.Contains(got, "Bad Request") {
			t.Errorf("hello %s: %s", hello, got)
		}
		select {
		case <-fin:
		case <-time.After(5 * time.Second):
			t.Fatalf("hello %s: the connection stayed open", hello)
		}
		b.Close()
	}
}
