package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/gateway/internal/sockconn"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The socket's line mode (docs/decisions.md, "The bridge's line mode"): mcpgw-bridge
// speaks newline-delimited JSON-RPC over its socket connection, the way its client speaks
// to it on stdio, instead of one HTTP exchange per message. A connection is one session:
//
//	bridge → daemon  {"mcpgw":"hello","version":1,"headers":{...},"session":"<id or empty>"}
//	daemon → bridge  {"mcpgw":"welcome","session":"<id if resumed, else empty>"}
//	then JSON-RPC messages both ways, one per line; after an initialize the daemon sends
//	{"mcpgw":"session","id":"<new id>"} before its result, so that the bridge can resume
//	the session on a new connection after a daemon restart.
//
// Lines whose object has an "mcpgw" member are these control lines; everything else is
// MCP. The connection's peer user is checked like the socket's HTTP requests, and its
// identity comes from the hello's headers, believed as on the socket's HTTP side. The
// session lives as long as the connection: the bridge closing it (its client is gone) ends
// the session; the daemon going away does not.

// lineHello is the bridge's first line.
type lineHello struct {
	Mcpgw   string            `json:"mcpgw"`
	Version int               `json:"version"`
	Headers map[string]string `json:"headers"`
	Session string            `json:"session"`
}

// LineProtocolVersion is the line mode's version, sent in the hello.
const LineProtocolVersion = 1

// lineConn is one bridge connection in line mode.
type lineConn struct {
	g   *Gateway
	c   net.Conn
	ctx context.Context
	req *http.Request // the hello's headers, for authentication per message

	wmu  sync.Mutex
	wbuf []byte

	// busy holds a token per request being dispatched: at MaxLineInFlight the reader stops
	// reading until one ends, so a client that floods the socket waits instead of growing
	// the daemon by a goroutine per line.
	busy chan struct{}

	mu sync.Mutex
	s  *Session
	st *clientstream.Stream
}

// MaxLineInFlight bounds the requests one line-mode connection has in dispatch at once.
const MaxLineInFlight = 256

// ServeSocket serves the Unix socket: each connection's peer user is checked, then its
// first byte decides between HTTP (the socket's HTTP server, srv) and the line mode ('{').
func (g *Gateway) ServeSocket(ln net.Listener, srv *http.Server) error {
	httpLn := sockconn.NewListener(ln.Addr())
	srv.RegisterOnShutdown(func() { ln.Close() })
	go func() { _ = srv.Serve(httpLn) }()
	defer httpLn.Close()
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go g.legacy.sniffSocketConn(c, httpLn)
	}
}

func (lf *legacyFront) sniffSocketConn(c net.Conn, httpLn *sockconn.Listener) {
	pc, first, err := sockconn.Sniff(c)
	if err != nil {
		return
	}
	if first != '{' {
		if !httpLn.Offer(pc) {
			c.Close()
		}
		return
	}
	if pc.PeerErr != nil {
		_, _ = c.Write(append(wire.Error(nil, wire.CodeConnection, "Forbidden: "+pc.PeerErr.Error(), nil), '\n'))
		c.Close()
		return
	}
	lf.serveLine(c, pc.R)
}

func (lf *legacyFront) serveLine(c net.Conn, br *bufio.Reader) {
	g := lf.g
	defer c.Close()
	ctx, cancel := context.WithCancel(auth.WithTrusted(g.ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.Close() }) // daemon shutdown
	defer stop()
	lc := &lineConn{g: g, c: c, ctx: ctx, busy: make(chan struct{}, MaxLineInFlight)}

	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := readSocketLine(br)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		return
	}
	var h lineHello
	if err := json.Unmarshal(line, &h); err != nil || h.Mcpgw != "hello" {
		lc.write(wire.Error(nil, wire.CodeInvalidRequest, "Bad Request: the socket's line mode starts with a hello line", nil))
		return
	}
	if h.Version != LineProtocolVersion {
		lc.write(wire.Error(nil, wire.CodeInvalidRequest, fmt.Sprintf("Bad Request: line mode version %d is not supported (this gateway speaks %d)", h.Version, LineProtocolVersion), nil))
		return
	}
	lc.req = (&http.Request{Method: http.MethodPost, Header: http.Header{}}).WithContext(ctx)
	for k, v := range h.Headers {
		lc.req.Header.Set(k, v)
	}
	var resumed *Session
	if h.Session != "" {
		if id, fail := lc.authenticate(); fail == nil {
			if s, err := g.live.lookup(h.Session); err == nil && lc.mayContinue(id, s) {
				resumed = s
			}
		}
	}
	if resumed != nil {
		lc.control("welcome", "session", resumed.ID)
		lc.attach(resumed) // after the welcome: its queued messages follow it
	} else {
		lc.control("welcome", "session", "")
	}

	for {
		line, err := readSocketLine(br)
		if len(line) > 0 {
			lc.handleSafely(line)
		}
		if errors.Is(err, wire.ErrLineTooLarge) {
			lc.write(wire.Error(nil, wire.CodeInvalidRequest, "Invalid Request: "+err.Error(), nil))
			continue
		}
		if err != nil {
			break
		}
	}
	lc.mu.Lock()
	s, st := lc.s, lc.st
	lc.mu.Unlock()
	if s == nil {
		return
	}
	s.detach(st)
	st.Close()
	if g.ctx.Err() == nil {
		// The bridge closed the connection: its client is gone for good.
		g.live.end(s, "bridge disconnected")
	}
}

// readSocketLine reads one line of a bridge connection.
func readSocketLine(br *bufio.Reader) ([]byte, error) { return wire.ReadLine(br, SocketMaxBody) }

// write sends one message as a line (wire.AppendLine: one line by construction, whatever
// an upstream sent).
func (lc *lineConn) write(msg []byte) error {
	lc.wmu.Lock()
	defer lc.wmu.Unlock()
	lc.wbuf = wire.AppendLine(lc.wbuf[:0], msg)
	// A bridge that stops reading cannot hold this writer (and every request of its
	// session waiting to answer) for ever.
	_ = lc.c.SetWriteDeadline(time.Now().Add(clientstream.WriteTimeout))
	_, err := lc.c.Write(lc.wbuf)
	if err != nil {
		// Part of a line may be out: nothing after it could be read right. The bridge
		// reconnects and resumes the session.
		_ = lc.c.Close()
	}
	if cap(lc.wbuf) > 1<<20 {
		lc.wbuf = nil
	}
	return err
}

// control writes a control line: {"mcpgw":kind,key:value}, the "mcpgw" member first (the
// bridge tells control lines apart by that prefix).
func (lc *lineConn) control(kind, key, value string) {
	b := append([]byte(`{"mcpgw":`), wire.Quote(kind)...)
	b = append(append(append(b, ','), wire.Quote(key)...), ':')
	b = append(append(b, wire.Quote(value)...), '}')
	_ = lc.write(b)
}

func (lc *lineConn) authenticate() (*auth.Identity, *auth.Failure) {
	return lc.g.policy().authn.Authenticate(lc.ctx, lc.req)
}

// mayContinue is continueSession for the line mode.
func (lc *lineConn) mayContinue(id *auth.Identity, s *Session) bool {
	return (id.Method == "header" && id.Agent == "") || id.Principal == s.rec.Principal
}

// attach makes s the connection's session and starts relaying its stream (messages not
// tied to a request) as lines. The session ending closes the connection.
func (lc *lineConn) attach(s *Session) {
	st := clientstream.New("", lc.g.cfg.HTTP.StreamQueue)
	lc.mu.Lock()
	old, oldSt := lc.s, lc.st
	lc.s, lc.st = s, st
	lc.mu.Unlock()
	if old != nil {
		old.detach(oldSt)
		oldSt.Close()
		if old != s {
			lc.g.live.end(old, "re-initialized on its bridge connection")
		}
	}
	if !s.attach(st) {
		// Another connection holds the session's stream (an HTTP GET): share nothing.
		lc.g.log.Warn("session stream already open; line connection gets no stream", "session", s.ID)
	}
	go func() {
		if !st.Relay(lc.write) {
			return
		}
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		lc.mu.Lock()
		current := lc.s == s
		lc.mu.Unlock()
		if closed && current {
			lc.c.Close() // ended by the daemon (admin, replica): the bridge reconnects
		}
	}()
}

// refusal turns a refused request into its JSON-RPC error line.
func (lc *lineConn) refusal(id json.RawMessage, fail *auth.Failure, who *auth.Identity) {
	rec := &lineRefusal{h: http.Header{}}
	lc.g.gate.refuse(rec, fail, who)
	if id == nil {
		return
	}
	msg := fail.Message
	if m, err := wire.Parse(rec.body.Bytes()); err == nil && m.Error != nil {
		msg = wire.ParseError(m.Error).Message
	}
	_ = lc.write(wire.Error(id, wire.CodeConnection, msg, nil))
}

type lineRefusal struct {
	h    http.Header
	body bytes.Buffer
}

func (r *lineRefusal) Header() http.Header         { return r.h }
func (r *lineRefusal) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *lineRefusal) WriteHeader(int)             {}

// handleSafely is handle with a panic turned into an error line: a bug costs one message,
// never the daemon (a goroutine's panic would end the process).
func (lc *lineConn) handleSafely(line []byte) {
	defer lc.g.recovered("socket line", nil, lc.write)
	lc.handle(line)
}

func (lc *lineConn) handle(line []byte) {
	g := lc.g
	if line[0] == '[' {
		// A batch (2025-03-26): each message on its own; answers come one per line.
		var raws []json.RawMessage
		if err := json.Unmarshal(line, &raws); err != nil || len(raws) == 0 {
			_ = lc.write(wire.Error(nil, wire.CodeParseError, "Parse error: not a JSON-RPC batch", nil))
			return
		}
		for _, raw := range raws {
			if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] != '[' {
				lc.handle(t)
			}
		}
		return
	}
	var m wire.Msg
	if errMsg := parseClient(line, &m); errMsg != nil {
		_ = lc.write(errMsg)
		return
	}
	id, fail := lc.authenticate()
	if fail != nil {
		lc.refusal(m.ID, fail, id)
		return
	}
	if m.Method == "initialize" {
		lc.initialize(&m, id)
		return
	}
	if m.Method == "server/discover" {
		// As on HTTP: a client probing the stateless revision falls back to initialize.
		_ = lc.write(wire.Error(m.ID, wire.CodeUnsupportedProtocolVersion,
			"protocol version 2026-07-28 is not supported by this gateway; use initialize",
			map[string]any{"supported": streamableVersions, "requested": "2026-07-28"}))
		return
	}
	lc.mu.Lock()
	s := lc.s
	lc.mu.Unlock()
	if s == nil {
		if m.IsRequest() {
			_ = lc.write(wire.Error(m.ID, wire.CodeInvalidRequest, "Bad Request: no session on this connection; send initialize first", nil))
		}
		return
	}
	if !lc.mayContinue(id, s) {
		lc.refusal(m.ID, &auth.Failure{Status: http.StatusForbidden, Reason: "session_principal",
			Message: "Forbidden: this session belongs to another principal"}, id)
		return
	}
	s.touch()
	switch {
	case m.IsResponse():
		g.calls.clientResponse(s, &m)
	case m.IsNotification():
		g.calls.clientNotification(s, &m)
	default:
		select {
		case lc.busy <- struct{}{}:
		case <-lc.ctx.Done():
			return
		}
		go func() {
			defer func() { <-lc.busy }()
			defer g.recovered("socket request", m.ID, lc.write)
			g.calls.dispatch(lc.ctx, s, &m, lineOutbox{lc})
		}()
	}
}

func (lc *lineConn) initialize(m *wire.Msg, id *auth.Identity) {
	g := lc.g
	if !m.IsRequest() {
		_ = lc.write(wire.Error(nil, wire.CodeInvalidRequest, "Invalid Request: initialize must be a request", nil))
		return
	}
	rec, errMsg := g.initialize(m, "socket", streamableVersions)
	if errMsg != nil {
		_ = lc.write(errMsg)
		return
	}
	if fail := g.gate.startIdentity(lc.ctx, id, &rec); fail != nil {
		lc.refusal(m.ID, fail, id)
		return
	}
	s, result, err := g.openSession(rec, auth.HeaderValue(lc.req.Header, "X-Mcp-Handshake"))
	if err != nil {
		_ = lc.write(wire.Error(m.ID, wire.CodeInternalError, "Session store unavailable", nil))
		return
	}
	lc.attach(s)
	lc.control("session", "id", s.ID)
	_ = lc.write(wire.Result(m.ID, result))
}

// lineOutbox answers one request on its line connection.
type lineOutbox struct{ lc *lineConn }

func (o lineOutbox) related(msg []byte) error { return o.lc.write(msg) }

func (o lineOutbox) reply(msg []byte) error {
	if msg == nil {
		return nil
	}
	return o.lc.write(msg)
}
