package gateway

import (
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// statelessSession returns the gateway-side session of the request's caller and shaping
// inputs (stateless.Key), opening it (with the same resolution as initialize) on its first
// request; nil means a refusal was written.
func (f *statelessFront) statelessSession(w http.ResponseWriter, r *http.Request, id *auth.Identity, req *stateless.Request) *session.Session {
	g := f.g
	key, caller := stateless.Key(id, req), stateless.Caller(id)
	if s, ok := f.table.Get(key); ok {
		return s
	}
	// Opened outside the table's lock (the store may be slow); two first requests of one
	// caller racing keep the first session registered and end the other.
	now := time.Now().UTC()
	rec := store.Record{ID: newSessionID(), Transport: "stateless", ProtocolVersion: stateless.Version,
		ClientCaps: req.Caps, ClientInfo: req.Info, Handshake: req.Form, Created: now, LastSeen: now}
	if fail := g.gate.startIdentity(r.Context(), id, &rec); fail != nil {
		g.gate.refuse(w, fail, id)
		return nil
	}
	s := g.live.newSession(rec)
	if err := g.live.register(s); err != nil {
		g.log.Error("store unavailable", "err", err)
		reply.JSON(w, http.StatusServiceUnavailable, wire.Error(req.M.ID, wire.CodeInternalError, "Session store unavailable", nil))
		return nil
	}
	// Sessions of callers that went away are ended by the reaper (idle timeout); the
	// table drops their entries.
	winner, evicted := f.table.Add(key, caller, s)
	if winner != s {
		g.live.end(s, "duplicate stateless session")
		return winner
	}
	for _, old := range evicted {
		g.metrics.Evicted(evictVariants)
		g.live.end(old, "the caller opened more variants (capabilities, conversation, task, executor) than stateless.Variants; this was its oldest")
	}
	return s
}
