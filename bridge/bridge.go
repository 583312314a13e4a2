// Package bridge relays an MCP client that speaks stdio to the mcpgw daemon, over its Unix
// socket or streamable HTTP, and hides daemon restarts from the client.
package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/registry/wire"
)

// MaxMessageBytes bounds one message in either direction.
const MaxMessageBytes = 64 << 20

// Options configure a bridge.
type Options struct {
	// Socket is the daemon's Unix socket; URL a streamable HTTP endpoint. One is set.
	Socket string
	URL    string
	Token  string // bearer token for URL (from MCPGW_TOKEN)
	// Identity headers.
	Agent, Conversation, Task, Executor string
	// SocketHTTP relays over the socket with one HTTP exchange per message instead of the
	// socket's line mode (the default): for comparing the two, or a daemon without it.
	SocketHTTP bool
	// ReconnectFor bounds how long the bridge keeps trying to reach a daemon that went
	// away before it gives up with an error.
	ReconnectFor time.Duration
	Log          *slog.Logger
}

// Bridge is one stdio client's relay.
type Bridge struct {
	o          Options
	client     *http.Client
	url        string
	out        io.Writer
	outMu      sync.Mutex
	wbuf       []byte // the line being written, under outMu
	log        *slog.Logger
	mu         sync.Mutex
	sid        string
	version    string
	init       []byte // the client's initialize request, replayed on reconnect
	inited     []byte // its notifications/initialized
	gen        int    // session generation: bumps when a new session replaces a lost one
	getStop    context.CancelFunc
	reconnDone chan struct{}
	reachable  bool
	wg         sync.WaitGroup
	ctx        context.Context
	cancel     context.CancelFunc
	line       *lineBridge // the socket's line mode, when used
}

// New prepares a bridge writing to out.
func New(o Options, out io.Writer) *Bridge {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.ReconnectFor == 0 {
		o.ReconnectFor = 30 * time.Second
	}
	b := &Bridge{o: o, out: out, log: o.Log}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	tr := &http.Transport{MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0, IdleConnTimeout: 90 * time.Second}
	if o.Socket != "" {
		sock := o.Socket
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}
		b.url = "http://mcpgw/mcp"
	} else {
		b.url = o.URL
	}
	b.client = &http.Client{Transport: tr}
	if o.Socket != "" && !o.SocketHTTP {
		b.line = newLineBridge(b.ctx, o, b.write)
	}
	return b
}

// Run relays until in ends (the client closed stdin) or ctx ends.
func (b *Bridge) Run(ctx context.Context, in io.Reader) error {
	defer b.cancel()
	if b.line != nil {
		// The client is gone when Run returns: closing the connection ends its session.
		defer b.line.close()
	}
	go func() {
		select {
		case <-ctx.Done():
			b.cancel()
		case <-b.ctx.Done():
		}
	}()
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := readLine(r)
		if len(line) > 0 {
			b.handleSafely(line)
		}
		if errors.Is(err, wire.ErrLineTooLarge) {
			b.write(wire.Error(nil, wire.CodeInvalidRequest, "mcpgw-bridge: "+err.Error(), nil))
			continue
		}
		if err != nil {
			// The client is gone: answers in flight have nobody to go to.
			b.cancel()
			b.wg.Wait()
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if b.ctx.Err() != nil {
			return b.ctx.Err()
		}
	}
}

// readLine reads one client (or daemon) line, up to MaxMessageBytes.
func readLine(r *bufio.Reader) ([]byte, error) { return wire.ReadLine(r, MaxMessageBytes) }

func (b *Bridge) write(msg []byte) {
	b.outMu.Lock()
	defer b.outMu.Unlock()
	b.wbuf = wire.AppendLine(b.wbuf[:0], msg)
	_, _ = b.out.Write(b.wbuf)
	if cap(b.wbuf) > 1<<20 {
		b.wbuf = nil
	}
}

// handleSafely is handle with a panic turned into an error answer: a bug costs the client
// one message, not the bridge (and with it the client's whole gateway connection).
func (b *Bridge) handleSafely(line []byte) {
	defer func() {
		if p := recover(); p != nil {
			b.log.Error("panic while relaying a client message", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			b.write(wire.Error(nil, wire.CodeInternalError, "mcpgw-bridge: internal error", nil))
		}
	}()
	b.handle(line)
}

func (b *Bridge) handle(line []byte) {
	var m wire.Msg
	if err := wire.ParseInto(line, &m); err != nil {
		b.write(wire.ParseFailure(err, &m))
		return
	}
	if b.line != nil {
		// In order, on the stdin reader: a message waits here while the daemon is away.
		b.line.relay(&m, line)
		return
	}
	switch {
	case m.Method == "initialize" && m.ID != nil:
		b.mu.Lock()
		b.init = append([]byte(nil), line...)
		b.mu.Unlock()
		// initialize runs before anything else so the session id is known.
		b.request(&m, line)
		return
	case m.Method == "notifications/initialized":
		b.mu.Lock()
		b.inited = append([]byte(nil), line...)
		b.mu.Unlock()
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		b.request(&m, line)
	}()
}

// request relays one message and writes whatever comes back. A request that cannot be
// delivered gets a JSON-RPC error, never silence.
func (b *Bridge) request(m *wire.Msg, line []byte) {
	for attempt := 0; ; attempt++ {
		err := b.post(m, line)
		if err == nil {
			return
		}
		if isDialError(err) && attempt == 0 {
			// Not sent: the daemon is away. Wait for it (bounded), then send.
			if b.waitForGateway() {
				continue
			}
		}
		var lost *sessionLost
		if errors.As(err, &lost) && attempt < 2 {
			// The daemon forgot the session (it was restarted without its state, or the
			// session expired): start a new one with the client's initialize and retry.
			if rerr := b.reinitialize(lost.gen); rerr == nil {
				continue
			} else {
				err = rerr
			}
		}
		b.log.Warn("relay failed", "method", m.Method, "err", err)
		if m.ID != nil && m.Method != "" {
			b.write(wire.Error(m.ID, wire.CodeConnection, "mcpgw-bridge: the gateway is unreachable: "+err.Error(), nil))
		}
		if isUnreachable(err) || errors.Is(err, errNoAnswer) {
			go b.reconnect()
		}
		return
	}
}

func isDialError(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// errNoAnswer is a request whose stream ended before its response: the daemon went away
// mid-call.
var errNoAnswer = errors.New("the gateway closed the stream before answering")

// waitForGateway blocks until a reconnect attempt finishes; it reports whether the
// gateway is reachable again.
func (b *Bridge) waitForGateway() bool {
	b.reconnect()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reachable
}

type sessionLost struct{ gen int }

func (e *sessionLost) Error() string { return "session not found on the gateway" }

func isUnreachable(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || errors.As(err, &ne) || strings.Contains(err.Error(), "connection refused")
}

func (b *Bridge) newRequest(ctx context.Context, method string, body []byte) (*http.Request, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, b.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	h := req.Header
	if method == http.MethodPost {
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "application/json, text/event-stream")
	} else {
		h.Set("Accept", "text/event-stream")
	}
	for k, v := range map[string]string{"X-Agent-ID": b.o.Agent, "X-Conversation-ID": b.o.Conversation, "X-Task-ID": b.o.Task, "X-Executor-ID": b.o.Executor} {
		if v != "" {
			h.Set(k, v)
		}
	}
	if b.o.Token != "" {
		h.Set("Authorization", "Bearer "+b.o.Token)
	}
	b.mu.Lock()
	sid, ver, gen := b.sid, b.version, b.gen
	b.mu.Unlock()
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
	}
	if ver != "" {
		h.Set("MCP-Protocol-Version", ver)
	}
	return req, gen, nil
}

func (b *Bridge) post(m *wire.Msg, line []byte) error {
	req, gen, err := b.newRequest(b.ctx, http.MethodPost, line)
	if err != nil {
		return err
	}
	if m.Method == "initialize" {
		req.Header.Del("Mcp-Session-Id")
		req.Header.Del("MCP-Protocol-Version")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "" {
		return &sessionLost{gen: gen}
	}
	if m.Method == "initialize" && resp.StatusCode == http.StatusOK {
		b.mu.Lock()
		b.sid = resp.Header.Get("Mcp-Session-Id")
		b.mu.Unlock()
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted:
		return nil
	case ct == "text/event-stream":
		rd := wire.NewSSEReader(resp.Body, MaxMessageBytes)
		answered := m.ID == nil
		for {
			ev, err := rd.Next()
			if err != nil {
				if !answered {
					return errNoAnswer
				}
				return nil
			}
			if len(bytes.TrimSpace(ev.Data)) > 0 {
				if !answered {
					if mm, err := wire.Parse(ev.Data); err == nil && mm.IsResponse() && string(mm.ID) == string(m.ID) {
						answered = true
					}
				}
				b.deliver(m, ev.Data)
			}
		}
	default:
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessageBytes))
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(body)) == 0 {
			if m.ID != nil && m.Method != "" {
				b.write(wire.Error(m.ID, wire.CodeConnection, fmt.Sprintf("mcpgw-bridge: the gateway answered HTTP %d", resp.StatusCode), nil))
			}
			return nil
		}
		if body[0] != '{' && body[0] != '[' {
			if m.ID != nil && m.Method != "" {
				b.write(wire.Error(m.ID, wire.CodeConnection, fmt.Sprintf("mcpgw-bridge: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body))), nil))
			}
			return nil
		}
		// An error answer without the request's id (HTTP-level refusals) gets it back.
		if mm, err := wire.Parse(body); err == nil && mm.IsResponse() && mm.ID == nil && m.ID != nil {
			body = wire.RawError(m.ID, mm.Error)
		}
		b.deliver(m, body)
		return nil
	}
}

// deliver writes one message from the gateway; an initialize result also opens the GET
// stream and records the protocol version.
func (b *Bridge) deliver(req *wire.Msg, msg []byte) {
	if req.Method == "initialize" {
		if mm, err := wire.Parse(msg); err == nil && mm.IsResponse() && mm.Result != nil {
			var r struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(mm.Result, &r)
			b.mu.Lock()
			b.version = r.ProtocolVersion
			b.mu.Unlock()
			b.startListen()
		}
	}
	b.write(msg)
}

// startListen (re)opens the GET stream for server-initiated messages.
func (b *Bridge) startListen() {
	b.mu.Lock()
	if b.getStop != nil {
		b.getStop()
	}
	ctx, cancel := context.WithCancel(b.ctx)
	b.getStop = cancel
	b.mu.Unlock()
	go b.listen(ctx)
}

func (b *Bridge) listen(ctx context.Context) {
	backoff := 200 * time.Millisecond
	for ctx.Err() == nil {
		req, _, err := b.newRequest(ctx, http.MethodGet, nil)
		if err != nil {
			return
		}
		resp, err := b.client.Do(req)
		if err == nil {
			if resp.StatusCode == http.StatusOK {
				backoff = 200 * time.Millisecond
				rd := wire.NewSSEReader(resp.Body, MaxMessageBytes)
				for {
					ev, err := rd.Next()
					if err != nil {
						break
					}
					if len(bytes.TrimSpace(ev.Data)) > 0 {
						b.write(append([]byte(nil), ev.Data...))
					}
				}
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusConflict {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

// reinitialize replays the client's initialize to open a new session, unless another
// goroutine already did since generation gen.
func (b *Bridge) reinitialize(gen int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen != gen {
		return nil
	}
	if b.init == nil {
		return errors.New("no initialize to replay")
	}
	req, err := http.NewRequestWithContext(b.ctx, http.MethodPost, b.url, bytes.NewReader(b.init))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range map[string]string{"X-Agent-ID": b.o.Agent, "X-Conversation-ID": b.o.Conversation, "X-Task-ID": b.o.Task, "X-Executor-ID": b.o.Executor} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if b.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+b.o.Token)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		return fmt.Errorf("re-initialize: HTTP %d", resp.StatusCode)
	}
	b.sid = resp.Header.Get("Mcp-Session-Id")
	b.gen++
	b.log.Info("gateway session replaced", "session", b.sid)
	if b.inited != nil {
		go func(line []byte) {
			m, _ := wire.Parse(line)
			if m != nil {
				_ = b.post(m, line)
			}
		}(b.inited)
	}
	go b.startListen()
	return nil
}

// reconnect waits for the daemon to come back (bounded), then resumes the session or
// replays initialize. Concurrent callers share one attempt and all wait for it.
func (b *Bridge) reconnect() {
	b.mu.Lock()
	if b.reconnDone != nil {
		done := b.reconnDone
		b.mu.Unlock()
		<-done
		return
	}
	done := make(chan struct{})
	b.reconnDone = done
	gen := b.gen
	b.reachable = false
	b.mu.Unlock()
	ok := b.tryReconnect(gen)
	b.mu.Lock()
	b.reachable = ok
	b.reconnDone = nil
	b.mu.Unlock()
	close(done)
}

func (b *Bridge) tryReconnect(gen int) bool {
	deadline := time.Now().Add(b.o.ReconnectFor)
	backoff := 100 * time.Millisecond
	for time.Now().Before(deadline) && b.ctx.Err() == nil {
		req, _, err := b.newRequest(b.ctx, http.MethodPost, wire.Request(wire.Quote("mcpgw-bridge-ping"), "ping", nil))
		if err == nil {
			resp, err := b.client.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusNotFound:
					if err := b.reinitialize(gen); err == nil {
						return true
					}
				case resp.StatusCode < 300:
					b.log.Info("gateway back; session resumed")
					b.startListen()
					return true
				}
			}
		}
		time.Sleep(backoff)
		if backoff < 2*time.Second {
			backoff *= 2
		}
	}
	b.log.Error("the gateway did not come back", "waited", b.o.ReconnectFor)
	return false
}
