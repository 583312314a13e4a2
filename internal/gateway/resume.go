package gateway

import (
	"net/http"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/resume"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Resumable POST event streams (docs/protocol.md, "Resuming a stream"): the events of a
// primed POST stream are kept in the session's replay buffers (internal/gateway/internal/resume),
// bounded by the streamable front's store. The call itself goes on when the POST's
// connection drops once the stream has an id (a dropped connection is not a
// cancellation); a call whose client never saw an id is abandoned as before.

// newResumeStore is the streamable front's store of replay buffers, with the config's
// limits and the gateway's metrics.
func newResumeStore(g *Gateway) *resume.Store {
	h := g.cfg.HTTP
	return resume.NewStore(resume.Limits{BufferBytes: h.ResumeBufferBytes, MaxBytes: h.ResumeMaxBytes, For: h.ResumeFor},
		g.metrics.ResumeDropped)
}

// serveResume answers a GET with Last-Event-ID naming a POST event stream of s: the
// events after it, then, while the call runs, its later events as they come.
func (sf *streamableFront) serveResume(w http.ResponseWriter, r *http.Request, s *session.Session, last string) {
	rd, err := s.Resumes.Resume(last)
	if err != nil {
		reply.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, err.Error())
		return
	}
	s.Touch()
	rd.Serve(w, r, clientstream.WriteTimeout, sf.g.metrics.ResumeReplayed)
}
