package gateway

import (
	"net/http"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// admission is the one question the HTTP transports (streamable, legacy SSE) ask of the
// gateway to admit a request (intake.Admitter): who the caller is, which session it may
// use, and so what it may see there (the session's view). The hosts of both transports
// embed it.
type admission struct{ g *Gateway }

// Admit admits r, in the order intake.Admitter states: origin, the transport's header
// checks, credential, the transport's reading of the content, session, principal,
// version, touch.
func (a admission) Admit(w http.ResponseWriter, r *http.Request, rd intake.Reading) (intake.Admission[*session.Session], bool) {
	g := a.g
	var ad intake.Admission[*session.Session]
	if !g.gate.checkOrigin(w, r) || !rd.Head(w, r) {
		return ad, false
	}
	id, ok := g.gate.authenticate(w, r)
	if !ok {
		return ad, false
	}
	ad.ID = id
	want, ok := rd.Read(w, r, id)
	if !ok {
		return ad, false
	}
	if want.Session == "" {
		return ad, true
	}
	var s *session.Session
	if want.Transport != "" {
		// Only a session live here, of that transport: one of the legacy SSE transport
		// lives as long as its event stream, in the process that holds the stream.
		if s = g.live.liveSession(want.Session); s == nil || s.Transport != want.Transport {
			reply.JSON(w, http.StatusNotFound, wire.Error(want.MsgID, wire.CodeSessionNotFound, "Session not found", nil))
			return ad, false
		}
	} else if s = g.live.session(w, want.Session, want.MsgID); s == nil {
		return ad, false
	}
	if !g.gate.continueSession(w, id, s) || !rd.Accepts(w, r, s.Rec.ProtocolVersion) {
		return ad, false
	}
	if want.Touch {
		s.Touch()
	}
	ad.Session, ad.Has, ad.Version = s, true, s.Rec.ProtocolVersion
	return ad, true
}
