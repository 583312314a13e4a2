package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// The socket's line mode (internal/gateway/line.go): newline-delimited JSON-RPC on one socket
// connection, relayed line for line, with a hello line first. It costs a call far less
// than an HTTP exchange per message (docs/performance.md, S8).

// lineVersion is the line mode version the bridge speaks.
const lineVersion = 1

// reinitID is the id of a replayed initialize; its answer is the bridge's, not the client's.
const reinitID = `"mcpgw-bridge-reinit"`

// lineBridge relays a stdio client over the daemon socket's line mode.
type lineBridge struct {
	o       Options
	outThen func([]byte, func()) // writes one message to the client, then runs the func
	closing *atomic.Bool         // stdin closed and the wait for answers is over
	flight  *flight              // requests written to the daemon and not answered yet
	ctx     context.Context

	mu      sync.Mutex
	conn    *lineLink // nil while down
	sid     string
	init    []byte        // the client's initialize, replayed when the daemon lost the session
	inited  []byte        // its notifications/initialized
	dialing chan struct{} // closed when the current connection attempt ends
	gaveUp  bool          // the last wait for the daemon ended without it
	lastErr error         // why the last connection attempt failed
	closed  bool          // close ran: no new connections
	readers sync.WaitGroup
}

// errRefused is a daemon that answered the hello with something other than a welcome:
// trying again will not help.
type errRefused struct{ msg string }

func (e *errRefused) Error() string { return e.msg }

// lineLink is one connection to the daemon.
type lineLink struct {
	c   net.Conn
	br  *bufio.Reader
	ids *flight // the requests written on this connection and not answered yet
	wmu sync.Mutex
	buf []byte
}

func (l *lineLink) write(msg []byte) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.buf = wire.AppendLine(l.buf[:0], msg)
	_, err := l.c.Write(l.buf)
	if cap(l.buf) > 1<<20 {
		l.buf = nil
	}
	return err
}

func newLineBridge(ctx context.Context, o Options, outThen func([]byte, func()), closing *atomic.Bool) *lineBridge {
	return &lineBridge{o: o, outThen: outThen, closing: closing, flight: newFlight(), ctx: ctx}
}

// out writes one message to the client.
func (b *lineBridge) out(msg []byte) { b.outThen(msg, nil) }

// relay sends one client message, connecting (and waiting, bounded, for the daemon) first.
func (b *lineBridge) relay(m *wire.Msg, line []byte) {
	switch {
	case m.Method == "initialize" && m.ID != nil:
		b.mu.Lock()
		b.init = append([]byte(nil), line...)
		b.mu.Unlock()
	case m.Method == "notifications/initialized":
		b.mu.Lock()
		b.inited = append([]byte(nil), line...)
		b.mu.Unlock()
	}
	isReq := m.ID != nil && m.Method != ""
	for attempt := 0; ; attempt++ {
		l, err := b.link()
		if err != nil {
			if isReq {
				b.out(wire.Error(m.ID, wire.CodeConnection, "mcpgw-bridge: "+err.Error(), nil))
			}
			return
		}
		if peerGone(l.c) {
			// The daemon died and the reader has not noticed yet: this message would be
			// lost on a dead connection; wait for the daemon like any new message.
			b.drop(l)
			continue
		}
		if isReq && !b.sending(l, string(m.ID)) {
			continue // the reader dropped the connection meanwhile: take the next one
		}
		err = l.write(line)
		if err == nil {
			return
		}
		b.drop(l)
		// The connection broke under the write. If the reader has not answered the
		// request with an error already (it fails whatever was in flight), the message
		// did not get through: one more try on a new connection.
		if isReq && !b.answered(l, string(m.ID)) {
			return // the reader has answered it with an error already
		}
		if attempt == 1 {
			if isReq {
				b.out(wire.Error(m.ID, wire.CodeConnection, fmt.Sprintf(
					"mcpgw-bridge: could not send the request to the gateway at %s (twice; the connection broke each time): %v", b.o.Socket, err), nil))
			}
			return
		}
	}
}

// sending records a request about to be written on l, unless l is no longer the live
// connection; under mu, so that the reader that drops l either sees it (and fails it) or
// the request goes to the next connection.
func (b *lineBridge) sending(l *lineLink, id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn != l {
		return false
	}
	l.ids.add(id)
	b.flight.add(id)
	return true
}

// answered forgets a request of l's; it reports whether it was still waiting.
func (b *lineBridge) answered(l *lineLink, id string) bool {
	if l.ids.done(id) {
		b.flight.done(id)
		return true
	}
	return false
}

// lose drops l as the live connection and returns the requests that were waiting on it.
func (b *lineBridge) lose(l *lineLink) []string {
	b.mu.Lock()
	if b.conn == l {
		b.conn = nil
	}
	lost := l.ids.takeAll()
	b.mu.Unlock()
	l.c.Close()
	return lost
}

// link returns the live connection, or connects; callers share one attempt, which waits up
// to ReconnectFor for the daemon, once per outage: after a wait that ended without the
// daemon, an attempt is one try, until a connection succeeds again.
func (b *lineBridge) link() (*lineLink, error) {
	b.mu.Lock()
	if b.conn != nil {
		l := b.conn
		b.mu.Unlock()
		return l, nil
	}
	if b.dialing != nil {
		wait := b.dialing
		b.mu.Unlock()
		select {
		case <-wait:
		case <-b.ctx.Done():
			return nil, b.ctx.Err()
		}
		b.mu.Lock()
		l, err := b.conn, b.lastErr
		b.mu.Unlock()
		if l == nil {
			if err == nil {
				err = b.ctx.Err()
			}
			return nil, err
		}
		return l, nil
	}
	done := make(chan struct{})
	b.dialing = done
	gaveUp := b.gaveUp
	b.mu.Unlock()
	var l *lineLink
	var err error
	if gaveUp {
		if l, err = b.connect(); err != nil {
			err = b.describe(err, 0)
		}
	} else {
		l, err = b.connectBounded()
	}
	b.mu.Lock()
	b.conn, b.dialing, b.lastErr = l, nil, err
	if b.ctx.Err() == nil {
		b.gaveUp = l == nil
	}
	b.mu.Unlock()
	close(done)
	return l, err
}

// describe turns a failed connection attempt into the error the client and the log see.
func (b *lineBridge) describe(err error, waited time.Duration) error {
	var refused *errRefused
	switch {
	case isDialError(err):
		return &unreachableError{where: b.o.Socket, socket: true, waited: waited, err: err}
	case errors.As(err, &refused):
		return err
	case waited > 0:
		return fmt.Errorf("the gateway at %s did not take the connection (kept trying for %s): %w", b.o.Socket, waited, err)
	}
	return fmt.Errorf("the gateway at %s did not take the connection: %w", b.o.Socket, err)
}

func (b *lineBridge) connectBounded() (*lineLink, error) {
	deadline := time.Now().Add(b.o.ReconnectFor)
	backoff := 100 * time.Millisecond
	for b.ctx.Err() == nil {
		l, err := b.connect()
		if err == nil {
			return l, nil
		}
		var refused *errRefused
		if errors.As(err, &refused) {
			b.o.Log.Error("the gateway refused the connection", "at", b.o.Socket, "err", err)
			return nil, err
		}
		if time.Now().Add(backoff).After(deadline) {
			err = b.describe(err, b.o.ReconnectFor)
			b.o.Log.Error("gave up waiting for the gateway", "err", err)
			return nil, err
		}
		b.o.Log.Debug("gateway unreachable; retrying", "at", b.o.Socket, "err", err, "in", backoff)
		select {
		case <-time.After(backoff):
		case <-b.ctx.Done():
		}
		if backoff < 2*time.Second {
			backoff *= 2
		}
	}
	return nil, b.ctx.Err()
}

// connect dials the socket, says hello, and resumes the session or replays the client's
// initialize when the daemon no longer knows it.
func (b *lineBridge) connect() (*lineLink, error) {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "unix", b.o.Socket)
	if err != nil {
		return nil, err
	}
	l := &lineLink{c: c, br: bufio.NewReaderSize(c, 64<<10), ids: newFlight()}
	b.mu.Lock()
	sid, init, inited := b.sid, b.init, b.inited
	b.mu.Unlock()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fail := func(err error) (*lineLink, error) {
		c.Close()
		return nil, err
	}
	session, err := b.greet(l, sid)
	if err != nil {
		return fail(err)
	}
	switch {
	case sid != "" && session == sid:
		b.o.Log.Info("gateway back; session resumed", "session", sid)
	case sid != "" && init != nil:
		// The daemon lost the session: start a new one with the client's initialize. (With
		// no session yet, the client's own initialize is on its way: nothing to replay.)
		if err := b.replayInit(l, init, inited); err != nil {
			return fail(err)
		}
	}
	_ = c.SetDeadline(time.Time{})
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return fail(errors.New("the bridge is stopping"))
	}
	b.readers.Add(1)
	b.mu.Unlock()
	go b.read(l)
	return l, nil
}

// greet says hello with the identity headers and the session to resume, and returns the
// session the daemon's welcome names.
func (b *lineBridge) greet(l *lineLink, sid string) (string, error) {
	headers := map[string]string{}
	for k, v := range map[string]string{"X-Agent-ID": b.o.Agent, "X-Conversation-ID": b.o.Conversation, "X-Task-ID": b.o.Task, "X-Executor-ID": b.o.Executor} {
		if v != "" {
			headers[k] = v
		}
	}
	hello, _ := json.Marshal(map[string]any{"mcpgw": "hello", "version": lineVersion, "headers": headers, "session": sid})
	if err := l.write(hello); err != nil {
		return "", err
	}
	line, err := wire.ReadLine(l.br, b.o.MaxMessage)
	if err != nil {
		return "", fmt.Errorf("no welcome from the gateway after the hello: %w", err)
	}
	var welcome struct {
		Mcpgw   string `json:"mcpgw"`
		Session string `json:"session"`
	}
	if json.Unmarshal(line, &welcome) != nil || welcome.Mcpgw != "welcome" {
		if m, err := wire.Parse(line); err == nil && m.Error != nil {
			return "", &errRefused{fmt.Sprintf("the gateway at %s refused the connection: %s", b.o.Socket, m.Error)}
		}
		return "", &errRefused{fmt.Sprintf("the daemon at %s does not speak the bridge's line mode (it answered %.200q): "+
			"run the bridge with --socket-http, or update the daemon", b.o.Socket, line)}
	}
	return welcome.Session, nil
}

// replayInit starts a new session on l with the client's initialize (its answer stays
// here; what else arrives meanwhile goes to the client) and its notifications/initialized.
func (b *lineBridge) replayInit(l *lineLink, init, inited []byte) error {
	m, err := wire.Parse(init)
	if err != nil {
		return err
	}
	if err := l.write(wire.Request(json.RawMessage(reinitID), "initialize", m.Params)); err != nil {
		return err
	}
	newSID := ""
	for {
		line, err := wire.ReadLine(l.br, b.o.MaxMessage)
		if err != nil {
			return fmt.Errorf("replaying the client's initialize: %w", err)
		}
		if id, ok := controlSession(line); ok {
			newSID = id
			continue
		}
		rm, err := wire.Parse(line)
		if err == nil && rm.IsResponse() && string(rm.ID) == reinitID {
			if rm.Error != nil || newSID == "" {
				return fmt.Errorf("the gateway refused the replayed initialize: %s", line)
			}
			break
		}
		b.out(line)
	}
	b.mu.Lock()
	b.sid = newSID
	b.mu.Unlock()
	if inited != nil {
		if err := l.write(inited); err != nil {
			return err
		}
	}
	b.o.Log.Info("gateway session replaced", "session", newSID)
	return nil
}

// controlSession reports a {"mcpgw":"session","id":…} line.
func controlSession(line []byte) (string, bool) {
	if len(line) == 0 || line[0] != '{' || !containsMcpgw(line) {
		return "", false
	}
	var ctl struct {
		Mcpgw string `json:"mcpgw"`
		ID    string `json:"id"`
	}
	if json.Unmarshal(line, &ctl) != nil || ctl.Mcpgw != "session" {
		return "", false
	}
	return ctl.ID, true
}

func containsMcpgw(line []byte) bool {
	// Control lines are small and start with the member; MCP messages never have it.
	const key = `{"mcpgw":`
	return len(line) >= len(key) && string(line[:len(key)]) == key
}

// read relays the daemon's lines to the client until the connection ends; then whatever
// was in flight gets an error and the bridge reconnects in the background, so that the
// session's own messages (list changes) flow again without waiting for the client.
func (b *lineBridge) read(l *lineLink) {
	defer b.readers.Done()
	var rerr error
	for {
		line, err := wire.ReadLine(l.br, b.o.MaxMessage)
		if len(line) > 0 {
			if id, ok := controlSession(line); ok {
				b.mu.Lock()
				b.sid = id
				b.mu.Unlock()
			} else if !containsMcpgw(line) {
				if line[0] == '{' {
					var m wire.Msg
					if wire.ParseInto(line, &m) == nil && m.IsResponse() && m.ID != nil {
						id := string(m.ID)
						b.outThen(line, func() { b.answered(l, id) })
						continue
					}
				}
				b.out(line)
			}
		}
		if errors.Is(err, wire.ErrLineTooLarge) {
			b.o.Log.Warn("dropped a gateway message over the size limit", "limit_bytes", b.o.MaxMessage)
			continue
		}
		if err != nil {
			rerr = err
			break
		}
	}
	lost := b.lose(l)
	var msg string
	switch {
	case b.closing.Load():
		msg = gaveUpMessage(b.o.DrainFor)
	case b.ctx.Err() != nil:
		msg = "mcpgw-bridge: the bridge stopped before the gateway answered"
	default:
		args := []any{"at", b.o.Socket, "unanswered", len(lost)}
		if !errors.Is(rerr, io.EOF) && !errors.Is(rerr, net.ErrClosed) {
			args = append(args, "err", rerr)
		}
		b.o.Log.Warn("gateway closed the connection", args...)
		msg = "mcpgw-bridge: " + errNoAnswer.Error()
	}
	for _, id := range lost {
		b.outThen(wire.Error(json.RawMessage(id), wire.CodeConnection, msg, nil), func() { b.flight.done(id) })
	}
	if b.ctx.Err() == nil {
		go func() { _, _ = b.link() }()
	}
}

// drop forgets l as the live connection and closes it.
func (b *lineBridge) drop(l *lineLink) {
	b.mu.Lock()
	if b.conn == l {
		b.conn = nil
	}
	b.mu.Unlock()
	l.c.Close()
}

// close ends the live connection (the daemon ends the session: the client is gone) and
// waits until every request still in flight has had its error written. The bridge's
// context is cancelled first, so that nothing connects again.
func (b *lineBridge) close() {
	b.mu.Lock()
	b.closed = true
	l := b.conn
	b.conn = nil
	b.mu.Unlock()
	if l != nil {
		l.c.Close()
	}
	b.readers.Wait()
}
