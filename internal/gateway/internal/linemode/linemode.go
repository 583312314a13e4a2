// Package linemode is the bridge socket's line mode: mcpgw-bridge speaks newline-delimited
// JSON-RPC over its socket connection, one connection per session, instead of one HTTP
// exchange per message. It knows the session only as a type parameter of its Host.
package linemode

// The protocol (docs/decisions.md, "The bridge's line mode"):
//
//	bridge → daemon  {"mcpgw":"hello","version":1,"headers":{...},"session":"<id or empty>"}
//	daemon → bridge  {"mcpgw":"welcome","session":"<id if resumed, else empty>"}
//	then JSON-RPC messages both ways, one per line; after an initialize the daemon sends
//	{"mcpgw":"session","id":"<new id>"} before its result, so that the bridge can resume
//	the session on a new connection after a daemon restart.
//
// Lines whose object has an "mcpgw" member are these control lines; everything else is
// MCP. The connection's identity comes from the hello's headers, believed as on the
// socket's HTTP side. The session lives as long as the connection: the bridge closing it
// (its client is gone) ends the session; the daemon going away does not.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// ProtocolVersion is the line mode's version, sent in the hello.
const ProtocolVersion = 1

// MaxInFlight bounds the requests one connection has in dispatch at once.
const MaxInFlight = 256

// Host is what the line mode needs of the gateway, for sessions of type S: one question
// to admit a line (Admit), then the serving calls.
type Host[S comparable] interface {
	// Admit admits a line of the connection whose hello's headers r carries: it reads the
	// caller's identity, then finds the session ask names and checks the caller may use
	// it. A refusal comes back as its failure, with the identity read so far.
	Admit(ctx context.Context, r *http.Request, ask Ask[S]) (intake.Admission[S], *auth.Failure)
	// ID is s's session id.
	ID(s S) string
	// Attach makes st s's event stream (false: another is open); Detach undoes it; Ended
	// reports whether s ended; End ends it, for why.
	Attach(s S, st *clientstream.Stream) bool
	Detach(s S, st *clientstream.Stream)
	Ended(s S) bool
	End(s S, why string)
	// Refuse writes a refused request's answer as the HTTP fronts would, into w.
	Refuse(w http.ResponseWriter, fail *auth.Failure, who *auth.Identity)
	// Open serves an initialize request of id: the new session and its result, or the
	// error message to answer with (fail: a refusal).
	Open(ctx context.Context, m *wire.Msg, id *auth.Identity, handshake string) (s S, result []byte, errMsg []byte, fail *auth.Failure)
	// Deliver takes a client's response or notification for s; Dispatch serves its
	// request, writing the request's messages and answer with write (on a goroutine of
	// the connection's, at most MaxInFlight at once). Both mark s used.
	Deliver(s S, m *wire.Msg)
	Dispatch(ctx context.Context, s S, m *wire.Msg, write func([]byte) error)
	// LogPanic records a panic while handling a message.
	LogPanic(where string, p any)
	Log() *slog.Logger
}

// Ask is the session a line asks to be admitted to: none (initialize, discovery), the
// connection's (Session, when Has), or, for the hello, the one of id Resume (looked up, and
// revived from the store if need be).
type Ask[S comparable] struct {
	Session S
	Has     bool
	Resume  string
}

// Server serves line-mode connections for one gateway.
type Server[S comparable] struct {
	Host Host[S]
	// Ctx is the gateway's: when it ends, every connection closes and no session ends.
	Ctx context.Context
	// Queue is a session stream's queue (http.stream_queue); MaxLine bounds one line.
	Queue   int
	MaxLine int
	// Versions are the session revisions served, for the answer to server/discover.
	Versions []string
}

// conn is one bridge connection.
type conn[S comparable] struct {
	sv   *Server[S]
	h    Host[S]
	c    net.Conn
	ctx  context.Context
	req  *http.Request // the hello's headers, for authentication per message
	wmu  sync.Mutex
	wbuf []byte
	// busy holds a token per request being dispatched: at MaxInFlight the reader stops
	// reading until one ends, so a client that floods the socket waits instead of growing
	// the daemon by a goroutine per line.
	busy chan struct{}

	mu  sync.Mutex
	s   S
	has bool // s is set
	st  *clientstream.Stream
}

// Serve runs one connection whose bytes are read from br, until the bridge closes it or
// the gateway's context ends.
func (sv *Server[S]) Serve(c net.Conn, br *bufio.Reader) {
	defer c.Close()
	ctx, cancel := context.WithCancel(auth.WithTrusted(sv.Ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { c.Close() }) // daemon shutdown
	defer stop()
	lc := &conn[S]{sv: sv, h: sv.Host, c: c, ctx: ctx, busy: make(chan struct{}, MaxInFlight)}
	if !lc.hello(br) {
		return
	}
	for {
		line, err := wire.ReadLine(br, sv.MaxLine)
		if len(line) > 0 {
			lc.handleSafely(line)
		}
		if errors.Is(err, wire.ErrLineTooLarge) {
			_ = lc.write(wire.Error(nil, wire.CodeInvalidRequest, "Invalid Request: "+err.Error(), nil))
			continue
		}
		if err != nil {
			break
		}
	}
	lc.mu.Lock()
	s, has, st := lc.s, lc.has, lc.st
	lc.mu.Unlock()
	if !has {
		return
	}
	lc.h.Detach(s, st)
	st.Close()
	if sv.Ctx.Err() == nil {
		// The bridge closed the connection: its client is gone for good.
		lc.h.End(s, "bridge disconnected")
	}
}

// hello reads the bridge's first line (10 s at most), answers it, and resumes the session
// it names when its identity may.
func (lc *conn[S]) hello(br *bufio.Reader) bool {
	_ = lc.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := wire.ReadLine(br, lc.sv.MaxLine)
	_ = lc.c.SetReadDeadline(time.Time{})
	if err != nil {
		return false
	}
	var h struct {
		Mcpgw   string            `json:"mcpgw"`
		Version int               `json:"version"`
		Headers map[string]string `json:"headers"`
		Session string            `json:"session"`
	}
	if err := json.Unmarshal(line, &h); err != nil || h.Mcpgw != "hello" {
		_ = lc.write(wire.Error(nil, wire.CodeInvalidRequest, "Bad Request: the socket's line mode starts with a hello line", nil))
		return false
	}
	if h.Version != ProtocolVersion {
		_ = lc.write(wire.Error(nil, wire.CodeInvalidRequest, fmt.Sprintf("Bad Request: line mode version %d is not supported (this gateway speaks %d)", h.Version, ProtocolVersion), nil))
		return false
	}
	lc.req = (&http.Request{Method: http.MethodPost, Header: http.Header{}}).WithContext(lc.ctx)
	for k, v := range h.Headers {
		lc.req.Header.Set(k, v)
	}
	if h.Session != "" {
		if a, fail := lc.h.Admit(lc.ctx, lc.req, Ask[S]{Resume: h.Session}); fail == nil && a.Has {
			lc.control("welcome", "session", lc.h.ID(a.Session))
			lc.attach(a.Session) // after the welcome: its queued messages follow it
			return true
		}
	}
	lc.control("welcome", "session", "")
	return true
}

// write sends one message as a line (wire.AppendLine: one line by construction, whatever
// an upstream sent).
func (lc *conn[S]) write(msg []byte) error {
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
func (lc *conn[S]) control(kind, key, value string) {
	b := append([]byte(`{"mcpgw":`), wire.Quote(kind)...)
	b = append(append(append(b, ','), wire.Quote(key)...), ':')
	b = append(append(b, wire.Quote(value)...), '}')
	_ = lc.write(b)
}

// attach makes s the connection's session and starts relaying its stream (messages not
// tied to a request) as lines. The session ending closes the connection.
func (lc *conn[S]) attach(s S) {
	st := clientstream.New("", lc.sv.Queue)
	lc.mu.Lock()
	old, had, oldSt := lc.s, lc.has, lc.st
	lc.s, lc.has, lc.st = s, true, st
	lc.mu.Unlock()
	if had {
		lc.h.Detach(old, oldSt)
		oldSt.Close()
		if old != s {
			lc.h.End(old, "re-initialized on its bridge connection")
		}
	}
	if !lc.h.Attach(s, st) {
		// Another connection holds the session's stream (an HTTP GET): share nothing.
		lc.h.Log().Warn("session stream already open; line connection gets no stream", "session", lc.h.ID(s))
	}
	go func() {
		if !st.Relay(lc.write) {
			return
		}
		lc.mu.Lock()
		current := lc.has && lc.s == s
		lc.mu.Unlock()
		if current && lc.h.Ended(s) {
			lc.c.Close() // ended by the daemon (admin, replica): the bridge reconnects
		}
	}()
}

// refusal turns a refused request into its JSON-RPC error line.
func (lc *conn[S]) refusal(id json.RawMessage, fail *auth.Failure, who *auth.Identity) {
	rec := &refusal{h: http.Header{}}
	lc.h.Refuse(rec, fail, who)
	if id == nil {
		return
	}
	msg := fail.Message
	if m, err := wire.Parse(rec.body.Bytes()); err == nil && m.Error != nil {
		msg = wire.ParseError(m.Error).Message
	}
	_ = lc.write(wire.Error(id, wire.CodeConnection, msg, nil))
}

// refusal records what Host.Refuse writes.
type refusal struct {
	h    http.Header
	body bytes.Buffer
}

func (r *refusal) Header() http.Header         { return r.h }
func (r *refusal) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *refusal) WriteHeader(int)             {}

// handleSafely is handle with a panic turned into an error line: a bug costs one message,
// never the daemon (a goroutine's panic would end the process).
func (lc *conn[S]) handleSafely(line []byte) {
	defer lc.recovered("socket line", nil)
	lc.handle(line)
}

// recovered, deferred, turns a panic into an internal error answer to id.
func (lc *conn[S]) recovered(where string, id json.RawMessage) {
	if p := recover(); p != nil {
		lc.h.LogPanic(where, p)
		_ = lc.write(wire.Error(id, wire.CodeInternalError, "Internal error", nil))
	}
}

func (lc *conn[S]) handle(line []byte) {
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
	if errMsg := intake.ParseClient(line, &m); errMsg != nil {
		_ = lc.write(errMsg)
		return
	}
	// initialize and discovery need no session; anything else the connection's, if any.
	var ask Ask[S]
	if m.Method != "initialize" && m.Method != "server/discover" {
		lc.mu.Lock()
		ask.Session, ask.Has = lc.s, lc.has
		lc.mu.Unlock()
	}
	a, fail := lc.h.Admit(lc.ctx, lc.req, ask)
	if fail != nil {
		lc.refusal(m.ID, fail, a.ID)
		return
	}
	id := a.ID
	switch m.Method {
	case "initialize":
		lc.initialize(&m, id)
		return
	case "server/discover":
		// As on HTTP: a client probing the stateless revision falls back to initialize.
		_ = lc.write(wire.Error(m.ID, wire.CodeUnsupportedProtocolVersion,
			"protocol version 2026-07-28 is not supported by this gateway; use initialize",
			map[string]any{"supported": lc.sv.Versions, "requested": "2026-07-28"}))
		return
	}
	if !a.Has {
		if m.IsRequest() {
			_ = lc.write(wire.Error(m.ID, wire.CodeInvalidRequest, "Bad Request: no session on this connection; send initialize first", nil))
		}
		return
	}
	s := a.Session
	if m.IsResponse() || m.IsNotification() {
		lc.h.Deliver(s, &m)
		return
	}
	select {
	case lc.busy <- struct{}{}:
	case <-lc.ctx.Done():
		return
	}
	go func() {
		defer func() { <-lc.busy }()
		defer lc.recovered("socket request", m.ID)
		lc.h.Dispatch(lc.ctx, s, &m, lc.write)
	}()
}

func (lc *conn[S]) initialize(m *wire.Msg, id *auth.Identity) {
	if !m.IsRequest() {
		_ = lc.write(wire.Error(nil, wire.CodeInvalidRequest, "Invalid Request: initialize must be a request", nil))
		return
	}
	s, result, errMsg, fail := lc.h.Open(lc.ctx, m, id, auth.HeaderValue(lc.req.Header, "X-Mcp-Handshake"))
	switch {
	case fail != nil:
		lc.refusal(m.ID, fail, id)
		return
	case errMsg != nil:
		_ = lc.write(errMsg)
		return
	}
	lc.attach(s)
	lc.control("session", "id", lc.h.ID(s))
	_ = lc.write(wire.Result(m.ID, result))
}
