// Package bridge relays an MCP client that speaks stdio to the mcpgw daemon, over its Unix
// socket or streamable HTTP, and hides daemon restarts from the client.
package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
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
	// away (or is not there yet) before it gives up with an error. Once it has given up,
	// each new request tries to connect once and fails at once if it cannot, until the
	// daemon is back: a client with many requests queued does not wait ReconnectFor for
	// each.
	ReconnectFor time.Duration
	// DrainFor bounds how long the bridge waits, after stdin closes, for the answers still
	// in flight; they are written to stdout, then the bridge exits. Default 5 s.
	DrainFor time.Duration
	// MaxMessage bounds one message in either direction; 0 is MaxMessageBytes.
	MaxMessage int
	Log        *slog.Logger
}

// DefaultDrainFor is Options.DrainFor's default.
const DefaultDrainFor = 5 * time.Second

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
	flight     *flight     // client requests not answered yet (HTTP relay; the line mode has its own)
	gaveUp     atomic.Bool // the last reconnect window ended without the gateway
	closing    atomic.Bool // stdin closed and the wait for answers is over
	lastErr    error       // the last reconnect attempt's error, under mu
}

// New prepares a bridge writing to out.
func New(o Options, out io.Writer) *Bridge {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.ReconnectFor == 0 {
		o.ReconnectFor = 30 * time.Second
	}
	if o.DrainFor == 0 {
		o.DrainFor = DefaultDrainFor
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = MaxMessageBytes
	}
	b := &Bridge{o: o, out: out, log: o.Log, flight: newFlight()}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	tr := &http.Transport{MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0, IdleConnTimeout: 90 * time.Second}
	if o.Socket != "" {
		sock := o.Socket
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", sock)
			if err != nil {
				return nil, err
			}
			return liveConn{c}, nil
		}
		b.url = "http://mcpgw/mcp"
	} else {
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return liveConn{c}, nil
		}
		b.url = o.URL
	}
	b.client = &http.Client{Transport: tr}
	if o.Socket != "" && !o.SocketHTTP {
		b.line = newLineBridge(b.ctx, o, b.writeThen, &b.closing)
	}
	return b
}

// liveConn refuses to write a request on a pooled connection whose other end has closed
// (a restarted daemon closed it while it sat idle): nothing written, net/http sends the
// request again on a new connection. Without the check the request is written into the
// dead connection and fails as if the gateway had taken it and died.
type liveConn struct{ net.Conn }

func (c liveConn) Write(p []byte) (int, error) {
	if peerGone(c.Conn) {
		return 0, errPeerClosed
	}
	return c.Conn.Write(p)
}

var errPeerClosed = errors.New("the gateway closed this idle connection")

// where is the gateway's address as the user gave it.
func (b *Bridge) where() string {
	if b.o.Socket != "" {
		return b.o.Socket
	}
	return b.o.URL
}

// Run relays until in ends (the client closed stdin) or ctx ends. When in ends, the
// answers still in flight are delivered (waiting up to DrainFor for them) before Run
// returns; an EOF is a normal end and returns nil.
func (b *Bridge) Run(ctx context.Context, in io.Reader) error {
	defer b.cancel()
	go func() {
		select {
		case <-ctx.Done():
			b.cancel()
		case <-b.ctx.Done():
		}
	}()
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := wire.ReadLine(r, b.o.MaxMessage)
		if len(line) > 0 {
			b.handleSafely(line)
		}
		if errors.Is(err, wire.ErrLineTooLarge) {
			b.log.Warn("dropped a client message over the size limit", "limit_bytes", b.o.MaxMessage)
			b.write(wire.Error(nil, wire.CodeInvalidRequest,
				fmt.Sprintf("mcpgw-bridge: message over %d bytes; dropped", b.o.MaxMessage), nil))
			continue
		}
		if err != nil {
			b.finish(err)
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("reading stdin: %w", err)
		}
		if b.ctx.Err() != nil {
			b.stop()
			return b.ctx.Err()
		}
	}
}

// finish runs when stdin ends: it waits (up to DrainFor) for the answers in flight, says
// what happened, and stops the bridge. A request still unanswered then gets an error.
func (b *Bridge) finish(readErr error) {
	what := "stdin closed"
	if !errors.Is(readErr, io.EOF) {
		what = "reading stdin failed (" + readErr.Error() + ")"
	}
	fl := b.flight
	if b.line != nil {
		fl = b.line.flight
	}
	b.outMu.Lock() // not between an answer's write and its accounting
	n := fl.len()
	b.outMu.Unlock()
	left := 0
	if n > 0 && b.ctx.Err() == nil {
		b.log.Debug(what+"; waiting for the answers in flight", "in_flight", n, "up_to", b.o.DrainFor)
		left = fl.wait(b.o.DrainFor)
	}
	switch {
	case n == 0:
		b.log.Info(what + "; no requests were in flight")
	case left == 0:
		b.log.Info(fmt.Sprintf("%s; delivered %s", what, count(n, "answer")))
	default:
		b.log.Warn(fmt.Sprintf("%s; delivered %s; %s no answer within %s and get an error",
			what, count(max(n-left, 0), "answer"), count(left, "request got", "requests got"), b.o.DrainFor))
	}
	b.closing.Store(true)
	b.stop()
}

// count is "1 answer", "2 answers": n and the noun, with its plural when n is not 1.
func count(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// stop ends the relay: the connections close (the daemon ends the session: the client is
// gone), and every request still in flight gets an error before stop returns.
func (b *Bridge) stop() {
	b.cancel()
	if b.line != nil {
		b.line.close()
	}
	b.wg.Wait()
}

func (b *Bridge) write(msg []byte) { b.writeThen(msg, nil) }

// writeThen writes msg, then runs then (when not nil) before another write or the count
// of answers in flight can come between: an answer and its accounting are one step.
func (b *Bridge) writeThen(msg []byte, then func()) {
	b.outMu.Lock()
	defer b.outMu.Unlock()
	if then != nil {
		defer then()
	}
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
	isReq := m.ID != nil && m.Method != ""
	if isReq {
		b.flight.add(string(m.ID))
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
	isReq := m.ID != nil && m.Method != ""
	// settle marks the request answered, once its answer (or error) is on stdout.
	settled := !isReq
	settle := func() {
		if !settled {
			settled = true
			b.flight.done(string(m.ID))
		}
	}
	defer settle()
	for attempt := 0; ; attempt++ {
		err := b.post(m, line, settle)
		if err == nil {
			b.gaveUp.Store(false)
			return
		}
		if b.ctx.Err() != nil {
			// Stopped: stdin closed and the wait for answers is over (or a signal).
			if isReq && b.closing.Load() {
				b.writeThen(wire.Error(m.ID, wire.CodeConnection, gaveUpMessage(b.o.DrainFor), nil), settle)
			}
			return
		}
		if isDialError(err) {
			// Not sent: the daemon is away. Wait for it (bounded, once per outage), then send.
			if attempt == 0 && !b.gaveUp.Load() {
				if b.waitForGateway() {
					continue
				}
				b.mu.Lock()
				if b.lastErr != nil {
					err = b.lastErr
				}
				b.mu.Unlock()
				err = &unreachableError{where: b.where(), socket: b.o.Socket != "", waited: b.o.ReconnectFor, err: err}
			} else {
				err = &unreachableError{where: b.where(), socket: b.o.Socket != "", err: err}
			}
		}
		var lost *sessionLost
		if errors.As(err, &lost) && attempt < 2 {
			// The daemon forgot the session (it was restarted without its state, or the
			// session expired): start a new one with the client's initialize and retry.
			rerr := b.reinitialize(lost.gen)
			if rerr == nil {
				continue
			}
			err = fmt.Errorf("the gateway no longer knows this session, and replaying the client's initialize failed: %w", rerr)
		}
		if b.ctx.Err() != nil {
			continue // stopped while reconnecting: reported at the top of the loop
		}
		var ue *unreachableError
		if !errors.As(err, &ue) && !errors.Is(err, errNoAnswer) && isUnreachable(err) {
			err = fmt.Errorf("the connection to the gateway at %s failed: %w", b.where(), err)
		}
		b.log.Warn("relay failed", "method", m.Method, "err", err)
		if isReq {
			b.writeThen(wire.Error(m.ID, wire.CodeConnection, "mcpgw-bridge: "+err.Error(), nil), settle)
		}
		if isUnreachable(err) || errors.Is(err, errNoAnswer) {
			go b.reconnect()
		}
		return
	}
}

// deliver writes one message from the gateway; an initialize result also opens the GET
// stream and records the protocol version.
func (b *Bridge) deliver(req *wire.Msg, msg []byte, then func()) {
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
	b.writeThen(msg, then)
}
