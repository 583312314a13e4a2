package bridge

// Test doubles for the bridge's unit tests: a fake daemon that speaks the socket's line
// mode, one that speaks streamable HTTP (on a Unix socket for --socket-http, or on
// 127.0.0.1 for --url), and a driver for the bridge's stdin and stdout. The fakes answer
// just enough MCP to relay: initialize (a new session each time), ping, tools/list,
// echo (its params back), and test/hold, which answers only when the test releases it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// waitFor bounds every wait in these tests.
const waitFor = 10 * time.Second

// shortSocket is a socket path short enough for the 107-byte limit (t.TempDir() paths
// carry the test's name), removed when the test ends.
func shortSocket(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "br")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return filepath.Join(d, "gw.sock")
}

// rpc is a JSON-RPC message as the tests look at it.
type rpc struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// fakeCore is the MCP side both fakes share: sessions, held calls, what arrived.
type fakeCore struct {
	mu       sync.Mutex
	nextSID  int
	sessions map[string]bool
	received []string      // every MCP line, in order
	inits    []rpc         // every initialize, replays included
	held     chan struct{} // closed by release: test/hold answers then
	holding  chan string   // the id of each test/hold as it arrives
}

func newFakeCore() *fakeCore {
	return &fakeCore{sessions: map[string]bool{}, held: make(chan struct{}), holding: make(chan string, 64)}
}

func (f *fakeCore) release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.held:
	default:
		close(f.held)
	}
}

func (f *fakeCore) forget() {
	f.mu.Lock()
	f.sessions = map[string]bool{}
	f.mu.Unlock()
}

func (f *fakeCore) knows(sid string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessions[sid]
}

func (f *fakeCore) newSession() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextSID++
	sid := fmt.Sprintf("sess-%d", f.nextSID)
	f.sessions[sid] = true
	return sid
}

func (f *fakeCore) record(line []byte, m rpc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.received = append(f.received, string(line))
	if m.Method == "initialize" {
		f.inits = append(f.inits, m)
	}
}

func (f *fakeCore) lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.received...)
}

func (f *fakeCore) initializes() []rpc {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]rpc(nil), f.inits...)
}

// answer is the fake's response to request m (nil for a notification). For test/hold it
// blocks until release or ctx ends (then nil).
func (f *fakeCore) answer(ctx context.Context, m rpc) []byte {
	if m.ID == nil || m.Method == "" {
		return nil
	}
	switch m.Method {
	case "initialize":
		return wire.Result(m.ID, []byte(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`))
	case "ping":
		return wire.Result(m.ID, []byte(`{}`))
	case "tools/list":
		return wire.Result(m.ID, []byte(`{"tools":[{"name":"fake__echo","inputSchema":{"type":"object"}}]}`))
	case "echo":
		return wire.Result(m.ID, m.Params)
	case "test/hold":
		f.holding <- string(m.ID)
		select {
		case <-f.held:
			return wire.Result(m.ID, []byte(`{"held":true}`))
		case <-ctx.Done():
			return nil
		}
	}
	return wire.Error(m.ID, wire.CodeMethodNotFound, "no such method", nil)
}

// waitHolding waits until a test/hold reached the fake; it returns its id.
func (f *fakeCore) waitHolding(t *testing.T) string {
	t.Helper()
	select {
	case id := <-f.holding:
		return id
	case <-time.After(waitFor):
		t.Fatal("test/hold never reached the daemon")
		return ""
	}
}

// ---------------------------------------------------------------------------------------

// fakeLine is a daemon speaking the socket's line mode (internal/gateway/line.go) on path.
type fakeLine struct {
	*fakeCore
	t    *testing.T
	path string

	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
	hellos []map[string]any
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newFakeLine(t *testing.T, path string) *fakeLine {
	f := &fakeLine{fakeCore: newFakeCore(), t: t, path: path}
	t.Cleanup(f.stop)
	return f
}

func (f *fakeLine) core() *fakeCore { return f.fakeCore }

// start listens (again) on the fake's path.
func (f *fakeLine) start() {
	f.t.Helper()
	ln, err := net.Listen("unix", f.path)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.mu.Lock()
	f.ln, f.cancel, f.conns = ln, cancel, map[net.Conn]bool{}
	f.mu.Unlock()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			if f.ln != ln { // stopping: this one came in just before
				f.mu.Unlock()
				c.Close()
				continue
			}
			f.conns[c] = true
			f.mu.Unlock()
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				f.serve(ctx, c)
			}()
		}
	}()
}

// stop closes the listener (removing the socket) and every connection, as a daemon that
// exits does, and waits for the fake's goroutines.
func (f *fakeLine) stop() {
	f.mu.Lock()
	ln, cancel := f.ln, f.cancel
	f.ln = nil // from now on the accept loop closes what it accepts
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	if ln == nil {
		return
	}
	cancel()
	ln.Close()
	f.wg.Wait()
}

func (f *fakeLine) helloSessions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, h := range f.hellos {
		s, _ := h["session"].(string)
		out = append(out, s)
	}
	return out
}

func (f *fakeLine) serve(ctx context.Context, c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	var wmu sync.Mutex
	write := func(b []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		_, _ = c.Write(append(append([]byte(nil), b...), '\n'))
	}
	hello, err := br.ReadBytes('\n')
	if err != nil {
		return
	}
	var h map[string]any
	if json.Unmarshal(hello, &h) != nil || h["mcpgw"] != "hello" {
		write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"want a hello"}}`))
		return
	}
	f.mu.Lock()
	f.hellos = append(f.hellos, h)
	f.mu.Unlock()
	sid, _ := h["session"].(string)
	if !f.knows(sid) {
		sid = ""
	}
	write([]byte(fmt.Sprintf(`{"mcpgw":"welcome","session":%q}`, sid)))
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		line = bytes.TrimRight(line, "\n")
		var m rpc
		_ = json.Unmarshal(line, &m)
		f.record(line, m)
		if m.Method == "initialize" && m.ID != nil {
			write([]byte(fmt.Sprintf(`{"mcpgw":"session","id":%q}`, f.newSession())))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if a := f.answer(ctx, m); a != nil {
				if m.Method == "echo" { // a raw CR between tokens: white space in JSON
					a = bytes.Replace(a, []byte(`,"result"`), []byte(",\r\"result\""), 1)
				}
				write(a)
			}
		}()
	}
}

// ---------------------------------------------------------------------------------------

// fakeHTTP is a daemon speaking streamable HTTP, on a Unix socket or 127.0.0.1.
type fakeHTTP struct {
	*fakeCore
	t       *testing.T
	network string
	addr    string

	mu     sync.Mutex
	srv    *http.Server
	cancel context.CancelFunc
	sids   []string // the Mcp-Session-Id of each POST, "" for none
}

func newFakeHTTP(t *testing.T, network, addr string) *fakeHTTP {
	f := &fakeHTTP{fakeCore: newFakeCore(), t: t, network: network, addr: addr}
	t.Cleanup(f.stop)
	return f
}

func (f *fakeHTTP) core() *fakeCore { return f.fakeCore }

func (f *fakeHTTP) url() string { return "http://" + f.addr + "/mcp" }

func (f *fakeHTTP) start() {
	f.t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port of a stopped fake may take a moment to free
		if ln, err = net.Listen(f.network, f.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serve(ctx, w, r) })}
	f.mu.Lock()
	f.srv, f.cancel = srv, cancel
	f.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

func (f *fakeHTTP) stop() {
	f.mu.Lock()
	srv, cancel := f.srv, f.cancel
	f.srv = nil
	f.mu.Unlock()
	if srv == nil {
		return
	}
	cancel()
	_ = srv.Close()
}

func (f *fakeHTTP) postSessions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sids...)
}

func (f *fakeHTTP) serve(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m rpc
	if json.Unmarshal(body, &m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	f.mu.Lock()
	f.sids = append(f.sids, sid)
	f.mu.Unlock()
	if m.Method != "initialize" {
		if sid == "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(wire.Error(m.ID, wire.CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required", nil))
			return
		}
		if !f.knows(sid) {
			w.WriteHeader(http.StatusNotFound)
			return
		}
	}
	f.record(body, m)
	if m.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", f.newSession())
	}
	a := f.answer(ctx, m)
	if a == nil && m.ID != nil {
		panic(http.ErrAbortHandler) // stopped with the call held: the connection just ends
	}
	if a == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if m.Method == "echo" {
		// As an event stream whose data spans lines (data: per line, joined with LF).
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprintf(w, "data: %s\n\n", strings.ReplaceAll(string(a), `,"result"`, ",\ndata: \"result\""))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(a)
}

// ---------------------------------------------------------------------------------------

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// client drives a Bridge running in the test: its stdin, its stdout as parsed messages.
type client struct {
	t     *testing.T
	in    *io.PipeWriter
	out   chan []byte // every stdout line
	stash []rpc       // read while looking for another id
	done  chan error  // Run's result
	log   *syncBuffer
	raw   *syncBuffer // stdout as written
}

// startClient runs a bridge with o (its log captured) on pipes.
func startClient(t *testing.T, o Options) *client {
	t.Helper()
	c := &client{t: t, out: make(chan []byte, 1024), done: make(chan error, 1), log: &syncBuffer{}, raw: &syncBuffer{}}
	o.Log = slog.New(slog.NewTextHandler(c.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c.in = inW
	b := New(o, outW)
	go func() {
		c.done <- b.Run(context.Background(), inR)
		outW.Close()
	}()
	go func() {
		defer close(c.out)
		r := bufio.NewReader(io.TeeReader(outR, c.raw))
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				c.out <- line
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(waitFor):
			t.Errorf("the bridge did not stop within %s of stdin closing", waitFor)
		}
		outR.Close()
		if t.Failed() {
			t.Logf("bridge log:\n%s", c.log.String())
		}
	})
	return c
}

func (c *client) send(s string) {
	c.t.Helper()
	if _, err := c.in.Write([]byte(s)); err != nil {
		c.t.Fatalf("write stdin: %v", err)
	}
}

// next is the next stdout message (stashed ones first).
func (c *client) next() rpc {
	c.t.Helper()
	if len(c.stash) > 0 {
		m := c.stash[0]
		c.stash = c.stash[1:]
		return m
	}
	return c.read()
}

// read is the next message from stdout; every line must be one LF-terminated JSON
// message without a raw CR.
func (c *client) read() rpc {
	c.t.Helper()
	select {
	case line, ok := <-c.out:
		if !ok {
			c.t.Fatal("the bridge's stdout closed")
		}
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' || bytes.ContainsRune(line, '\r') {
			c.t.Fatalf("stdout line is not one LF-terminated line without CR: %q", line)
		}
		var m rpc
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Fatalf("stdout line is not JSON: %v: %q", err, line)
		}
		return m
	case <-time.After(waitFor):
		c.t.Fatalf("no stdout message within %s", waitFor)
	}
	return rpc{}
}

// answer waits for the response with id, stashing other messages.
func (c *client) answer(id string) rpc {
	c.t.Helper()
	for i, m := range c.stash {
		if string(m.ID) == id && m.Method == "" {
			c.stash = append(c.stash[:i], c.stash[i+1:]...)
			return m
		}
	}
	for range 1000 {
		m := c.read()
		if string(m.ID) == id && m.Method == "" {
			return m
		}
		c.stash = append(c.stash, m)
	}
	c.t.Fatalf("no answer to id %s among 1000 messages", id)
	return rpc{}
}

// ok waits for a successful answer to id and returns its result.
func (c *client) ok(id string) json.RawMessage {
	c.t.Helper()
	m := c.answer(id)
	if m.Error != nil || m.Result == nil {
		c.t.Fatalf("id %s: want a result, got error %+v", id, m.Error)
	}
	return m.Result
}

// fails waits for an error answer to id and returns its message.
func (c *client) fails(id string) string {
	c.t.Helper()
	m := c.answer(id)
	if m.Error == nil {
		c.t.Fatalf("id %s: want an error, got result %s", id, m.Result)
	}
	return m.Error.Message
}

const initLine = `{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"unit-test","version":"7"}}}` + "\n"

// initialize runs the handshake, and waits until the daemon has the notification (a
// test that stops the daemon next must not race it).
func (c *client) initialize(d *fakeCore) {
	c.t.Helper()
	c.send(initLine)
	c.ok(`"init-1"`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	if !eventually(func() bool {
		return slices.ContainsFunc(d.lines(), func(l string) bool { return strings.Contains(l, "notifications/initialized") })
	}) {
		c.t.Fatal("notifications/initialized did not reach the daemon")
	}
}

func req(id int, method string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`+"\n", id, method)
}

// closeStdin closes the client's end and waits for Run to return.
func (c *client) closeStdin(within time.Duration) (time.Duration, error) {
	c.t.Helper()
	start := time.Now()
	c.in.Close()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		return time.Since(start), err
	case <-time.After(within):
		c.t.Fatalf("Run did not return within %s of stdin closing", within)
	}
	return 0, nil
}

// eventually polls cond (bounded) and reports whether it became true.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}
