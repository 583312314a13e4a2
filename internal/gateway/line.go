package gateway

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/linemode"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/sockconn"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The socket's line mode is internal/gateway/internal/linemode; lineHost is its way into the
// gateway, for sessions of type *session.Session.

// LineProtocolVersion is the line mode's version, sent in the hello.
const LineProtocolVersion = linemode.ProtocolVersion

// MaxLineInFlight bounds the requests one line-mode connection has in dispatch at once.
const MaxLineInFlight = linemode.MaxInFlight

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
	sv := &linemode.Server[*session.Session]{Host: lineHost{g}, Ctx: g.ctx, Queue: g.cfg.HTTP.StreamQueue,
		MaxLine: SocketMaxBody, Versions: streamableVersions}
	sv.Serve(c, br)
}

// lineHost is what the line mode needs of the gateway (linemode.Host).
type lineHost struct{ g *Gateway }

// Admit admits a line: the identity of the hello's headers, believed as on the socket's
// HTTP side; then the session asked for (a hello's looked up; one not found is no
// refusal: the hello gets no session) and whether the caller may use it (continueSession
// for the line mode).
func (h lineHost) Admit(ctx context.Context, r *http.Request, ask linemode.Ask[*session.Session]) (intake.Admission[*session.Session], *auth.Failure) {
	pol := h.g.policy()
	var a intake.Admission[*session.Session]
	id, fail := pol.authn.Authenticate(ctx, r)
	a.ID = id
	if fail != nil {
		return a, fail
	}
	noteCallerToken(h.g, pol, id, r)
	s := ask.Session
	if ask.Resume != "" {
		var err error
		if s, err = h.g.live.lookup(ask.Resume); err != nil {
			return a, nil
		}
	} else if !ask.Has {
		return a, nil
	}
	if !(id.Method == "header" && id.Agent == "") && id.Principal != s.Rec.Principal {
		return a, &auth.Failure{Status: http.StatusForbidden, Reason: "session_principal",
			Message: "Forbidden: this session belongs to another principal"}
	}
	a.Session, a.Has, a.Version = s, true, s.Rec.ProtocolVersion
	return a, nil
}

func (h lineHost) ID(s *session.Session) string                            { return s.ID }
func (h lineHost) Attach(s *session.Session, st *clientstream.Stream) bool { return s.Attach(st) }
func (h lineHost) Detach(s *session.Session, st *clientstream.Stream)      { s.Detach(st) }
func (h lineHost) Ended(s *session.Session) bool                           { return s.IsClosed() }
func (h lineHost) End(s *session.Session, why string)                      { h.g.live.end(s, why) }
func (h lineHost) LogPanic(where string, p any)                            { h.g.logPanic(where, p) }
func (h lineHost) Log() *slog.Logger                                       { return h.g.log }
func (h lineHost) Refuse(w http.ResponseWriter, f *auth.Failure, who *auth.Identity) {
	h.g.gate.refuse(w, f, who)
}

func (h lineHost) Open(ctx context.Context, m *wire.Msg, id *auth.Identity, form string) (*session.Session, []byte, []byte, *auth.Failure) {
	g := h.g
	rec, errMsg := handshake{g}.initialize(m, "socket", streamableVersions)
	if errMsg != nil {
		return nil, nil, errMsg, nil
	}
	if fail := g.gate.startIdentity(ctx, id, &rec); fail != nil {
		return nil, nil, nil, fail
	}
	s, result, err := handshake{g}.openSession(rec, form)
	if err != nil {
		return nil, nil, wire.Error(m.ID, wire.CodeInternalError, "Session store unavailable", nil), nil
	}
	return s, result, nil, nil
}

func (h lineHost) Deliver(s *session.Session, m *wire.Msg) {
	s.Touch()
	if m.IsResponse() {
		h.g.calls.ClientResponse(s, m)
	} else {
		h.g.calls.ClientNotification(s, m)
	}
}

func (h lineHost) Dispatch(ctx context.Context, s *session.Session, m *wire.Msg, write func([]byte) error) {
	s.Touch()
	h.g.calls.Dispatch(ctx, s, m, writeOutbox(write))
}

// writeOutbox answers one request with write: its related messages and its answer alike.
type writeOutbox func([]byte) error

func (o writeOutbox) Related(msg []byte) error { return o(msg) }

func (o writeOutbox) Reply(msg []byte) error {
	if msg == nil {
		return nil
	}
	return o(msg)
}
