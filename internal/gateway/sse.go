package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/dispatch"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/legacysse"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// legacyFront is the 2024-11-05 front: the SSE stream and its message endpoint (/sse,
// /message: internal/gateway/internal/legacysse, its Host here), and the bridge socket's line
// front (socket.go, line.go), which speaks the same one stream per session.
type legacyFront struct{ g *Gateway }

// sse is the HTTP+SSE transport's server for this gateway.
func (lf *legacyFront) sse() *legacysse.Server[*session.Session] {
	return &legacysse.Server[*session.Session]{Host: sseHost{admission{lf.g}}, Body: bodyLimit(lf.g), Queue: lf.g.cfg.HTTP.StreamQueue}
}

func (lf *legacyFront) serveSSE(w http.ResponseWriter, r *http.Request) { lf.sse().ServeSSE(w, r) }

func (lf *legacyFront) serveMessage(w http.ResponseWriter, r *http.Request) {
	lf.sse().ServeMessage(w, r)
}

// sseHost is what the HTTP+SSE transport needs of the gateway (legacysse.Host): the
// admission (admission.go), then the serving calls.
type sseHost struct{ admission }

func (h sseHost) Open(w http.ResponseWriter, r *http.Request, id *auth.Identity, st *clientstream.Stream) (*session.Session, bool) {
	g := h.g
	now := time.Now().UTC()
	rec, _ := handshake{g}.initialize(&wire.Msg{}, "sse", legacyVersions)
	rec.Created, rec.LastSeen = now, now
	if fail := g.gate.startIdentity(r.Context(), id, &rec); fail != nil {
		g.gate.refuse(w, fail, id)
		return nil, false
	}
	s := g.live.newSession(rec)
	s.Attach(st)
	if err := g.live.register(s); err != nil {
		reply.Error(w, http.StatusServiceUnavailable, wire.CodeInternalError, "Session store unavailable")
		return nil, false
	}
	return s, true
}

func (h sseHost) ID(s *session.Session) string       { return s.ID }
func (h sseHost) End(s *session.Session, why string) { h.g.live.end(s, why) }

func (h sseHost) Deliver(s *session.Session, m *wire.Msg) {
	s.Touch()
	if m.IsResponse() {
		h.g.calls.ClientResponse(s, m)
	} else {
		h.g.calls.ClientNotification(s, m)
	}
}

// Initialize answers a legacy session's initialize on its stream: the session takes the
// client's version, capabilities and info.
func (h sseHost) Initialize(s *session.Session, m *wire.Msg) {
	g := h.g
	s.Touch()
	rec, errMsg := handshake{g}.initialize(m, "sse", legacyVersions)
	if errMsg != nil {
		_ = s.Send(errMsg)
		return
	}
	result := handshake{g}.initializeResult(rec.ProtocolVersion, s.Servers())
	s.SetClient(rec.ProtocolVersion, rec.ClientCaps, rec.ClientInfo)
	// A view built before initialize knew no client: build it again for this one's
	// name rule (docs/sessions.md, "Names for the client that asked").
	s.Shown.Forget()
	fresh := g.live.newSession(s.Rec)
	s.Caps = fresh.Caps
	_ = g.store.Put(&s.Rec)
	_ = s.Send(wire.Result(m.ID, result))
}

// Dispatch serves a legacy session's request on its own goroutine, past the POST that
// carried it; the answer travels on the session's stream.
func (h sseHost) Dispatch(ctx context.Context, s *session.Session, m *wire.Msg) {
	g := h.g
	s.Touch()
	go func() {
		defer g.recovered("legacy message", m.ID, s.Send)
		g.calls.Dispatch(context.WithoutCancel(ctx), s, m, dispatch.StreamOutbox{S: s})
	}()
}
