package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/registry/wire"
)

// The socket's line mode (gateway/line.go): newline-delimited JSON-RPC on one socket
// connection, relayed line for line, with a hello line first. It costs a call far less
// than an HTTP exchange per message (docs/performance.md, S8).

// lineVersion is the line mode version the bridge speaks.
const lineVersion = 1

// reinitID is the id of a replayed initialize; its answer is the bridge's, not the client's.
const reinitID = `"mcpgw-bridge-reinit"`

// lineBridge relays a stdio client over the daemon socket's line mode.
type lineBridge struct {
	o   Options
	out func([]byte) // writes one message to the client

	mu       sync.Mutex
	conn     *lineLink // nil while down
	sid      string
	init     []byte // the client's initialize, replayed when the daemon lost the session
	inited   []byte // its notifications/initialized
	inflight map[string]bool
	dialing  chan struct{} // closed when the current connection attempt ends
	ctx      context.Context
}

// lineLink is one connection to the daemon.
type lineLink struct {
	c   net.Conn
	br  *bufio.Reader
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

func newLineBridge(ctx context.Context, o Options, out func([]byte)) *lineBridge {
	return &lineBridge{o: o, out: out, inflight: map[string]bool{}, ctx: ctx}
}

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
				b.out(wire.Error(m.ID, wire.CodeConnection, "mcpgw-bridge: the gateway is unreachable: "+err.Error(), nil))
			}
			return
		}
		if peerGone(l.c) {
			// The daemon died and the reader has not noticed yet: this message would be
			// lost on a dead connection; wait for the daemon like any new message.
			b.drop(l)
			continue
		}
		if isReq {
			b.mu.Lock()
			b.inflight[string(m.ID)] = true
			b.mu.Unlock()
		}
		err = l.write(line)
		if err == nil {
			return
		}
		b.drop(l)
		// The connection broke under the write. If the reader has not answered the
		// request with an error already (it fails whatever was in flight), the message
		// did not get through: one more try on a new connection.
		if isReq {
			b.mu.Lock()
			pending := b.inflight[string(m.ID)]
			delete(b.inflight, string(m.ID))
			b.mu.Unlock()
			if !pending {
				return
			}
		}
		if attempt == 1 {
			if isReq {
				b.out(wire.Error(m.ID, wire.CodeConnection, "mcpgw-bridge: the gateway is unreachable: "+err.Error(), nil))
			}
			return
		}
	}
}

// link returns the live connection, or connects; callers share one attempt, which waits up
// to ReconnectFor for the daemon.
func (b *lineBridge) link() (*lineLink, error) {
	for {
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
			l := b.conn
			b.mu.Unlock()
			if l == nil {
				return nil, fmt.Errorf("no answer on %s for %s", b.o.Socket, b.o.ReconnectFor)
			}
			return l, nil
		}
		done := make(chan struct{})
		b.dialing = done
		b.mu.Unlock()
		l := b.connectBounded()
		b.mu.Lock()
		b.conn, b.dialing = l, nil
		b.mu.Unlock()
		close(done)
		if l == nil {
			return nil, fmt.Errorf("no answer on %s for %s", b.o.Socket, b.o.ReconnectFor)
		}
		return l, nil
	}
}

func (b *lineBridge) connectBounded() *lineLink {
	deadline := time.Now().Add(b.o.ReconnectFor)
	backoff := 100 * time.Millisecond
	for b.ctx.Err() == nil {
		l, err := b.connect()
		if err == nil {
			return l
		}
		if time.Now().Add(backoff).After(deadline) {
			b.o.Log.Error("the gateway did not come back", "waited", b.o.ReconnectFor, "err", err)
			return nil
		}
		b.o.Log.Debug("gateway unreachable; retrying", "err", err, "in", backoff)
		select {
		case <-time.After(backoff):
		case <-b.ctx.Done():
			return nil
		}
		if backoff < 2*time.Second {
			backoff *= 2
		}
	}
	return nil
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
	l := &lineLink{c: c, br: bufio.NewReaderSize(c, 64<<10)}
	headers := map[string]string{}
	for k, v := range map[string]string{"X-Agent-ID": b.o.Agent, "X-Conversation-ID": b.o.Conversation, "X-Task-ID": b.o.Task, "X-Executor-ID": b.o.Executor} {
		if v != "" {
			headers[k] = v
		}
	}
	b.mu.Lock()
	sid, init, inited := b.sid, b.init, b.inited
	b.mu.Unlock()
	hello, _ := json.Marshal(map[string]any{"mcpgw": "hello", "version": lineVersion, "headers": headers, "session": sid})
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fail := func(err error) (*lineLink, error) {
		c.Close()
		return nil, err
	}
	if err := l.write(hello); err != nil {
		return fail(err)
	}
	line, err := readLine(l.br)
	if err != nil {
		return fail(fmt.Errorf("no welcome from the gateway: %w", err))
	}
	var welcome struct {
		Mcpgw   string `json:"mcpgw"`
		Session string `json:"session"`
	}
	if json.Unmarshal(line, &welcome) != nil || welcome.Mcpgw != "welcome" {
		return fail(fmt.Errorf("the gateway refused the line mode: %s", line))
	}
	switch {
	case sid != "" && welcome.Session == sid:
		b.o.Log.Info("gateway back; session resumed", "session", sid)
	case sid != "" && init != nil:
		// The daemon lost the session: start a new one with the client's initialize. (With
		// no session yet, the client's own initialize is on its way: nothing to replay.)
		m, err := wire.Parse(init)
		if err != nil {
			return fail(err)
		}
		if err := l.write(wire.Request(json.RawMessage(reinitID), "initialize", m.Params)); err != nil {
			return fail(err)
		}
		newSID := ""
		for {
			line, err := readLine(l.br)
			if err != nil {
				return fail(fmt.Errorf("re-initialize: %w", err))
			}
			if id, ok := controlSession(line); ok {
				newSID = id
				continue
			}
			rm, err := wire.Parse(line)
			if err == nil && rm.IsResponse() && string(rm.ID) == reinitID {
				if rm.Error != nil || newSID == "" {
					return fail(fmt.Errorf("re-initialize refused: %s", line))
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
				return fail(err)
			}
		}
		b.o.Log.Info("gateway session replaced", "session", newSID)
	}
	_ = c.SetDeadline(time.Time{})
	go b.read(l)
	return l, nil
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
	for {
		line, err := readLine(l.br)
		if len(line) > 0 {
			if id, ok := controlSession(line); ok {
				b.mu.Lock()
				b.sid = id
				b.mu.Unlock()
			} else if !containsMcpgw(line) {
				if line[0] == '{' {
					var m wire.Msg
					if wire.ParseInto(line, &m) == nil && m.IsResponse() && m.ID != nil {
						b.mu.Lock()
						delete(b.inflight, string(m.ID))
						b.mu.Unlock()
					}
				}
				b.out(line)
			}
		}
		if err != nil && !errors.Is(err, wire.ErrLineTooLarge) {
			break
		}
	}
	b.drop(l)
	b.mu.Lock()
	lost := b.inflight
	b.inflight = map[string]bool{}
	b.mu.Unlock()
	for id := range lost {
		b.out(wire.Error(json.RawMessage(id), wire.CodeConnection, "mcpgw-bridge: the gateway went away before answering", nil))
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

// close ends the live connection: the daemon ends the session (the client is gone).
func (b *lineBridge) close() {
	b.mu.Lock()
	l := b.conn
	b.conn = nil
	b.mu.Unlock()
	if l != nil {
		l.c.Close()
	}
}
