package gateway

import (
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/sessions"
)

// modernSession returns the caller's gateway-side session, opening it (with the same
// resolution as initialize) on its first request; nil means a refusal was written.
func (f *statelessFront) modernSession(w http.ResponseWriter, r *http.Request, id *auth.Identity, req *stateless.Request) *Session {
	g := f.g
	key, caller := stateless.Key(id, req.Caps), stateless.Caller(id)
	f.mu.Lock()
	s := f.sessions[key]
	f.mu.Unlock()
	if s != nil && !s.isClosed() {
		return s
	}
	// Opened outside the lock (the store may be slow); two first requests of one caller
	// racing keep the first session registered and end the other.
	now := time.Now().UTC()
	rec := sessions.Record{ID: newSessionID(), Transport: "stateless", ProtocolVersion: stateless.Version,
		ClientCaps: req.Caps, ClientInfo: req.Info, Created: now, LastSeen: now}
	if fail := g.gate.startIdentity(r.Context(), id, &rec); fail != nil {
		g.gate.refuse(w, fail, id)
		return nil
	}
	s = g.live.newSession(rec)
	if err := g.live.register(s); err != nil {
		g.log.Error("store unavailable", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, wire.Error(req.M.ID, wire.CodeInternalError, "Session store unavailable", nil))
		return nil
	}
	f.mu.Lock()
	if f.sessions == nil {
		f.sessions = map[string]*Session{}
	}
	if other := f.sessions[key]; other != nil && !other.isClosed() {
		f.mu.Unlock()
		g.live.end(s, "duplicate stateless session")
		return other
	}
	// Sessions of callers that went away are ended by the reaper (idle timeout); their
	// entries go here.
	for k, old := range f.sessions {
		if old.isClosed() {
			delete(f.sessions, k)
		}
	}
	f.sessions[key] = s
	if f.byCaller == nil {
		f.byCaller = map[string][]string{}
	}
	var evict []*Session
	keys := f.byCaller[caller][:0:0]
	for _, k := range f.byCaller[caller] {
		if old := f.sessions[k]; old != nil && k != key {
			keys = append(keys, k)
		}
	}
	keys = append(keys, key)
	for len(keys) > modernVariants {
		evict = append(evict, f.sessions[keys[0]])
		delete(f.sessions, keys[0])
		keys = keys[1:]
	}
	f.byCaller[caller] = keys
	for k, ks := range f.byCaller {
		if len(ks) == 0 || f.sessions[ks[len(ks)-1]] == nil {
			delete(f.byCaller, k)
		}
	}
	f.mu.Unlock()
	for _, old := range evict {
		g.metrics.Evicted(evictVariants)
		g.live.end(old, "the caller opened more variants (capabilities, conversation, task, executor) than modernVariants; this was its oldest")
	}
	return s
}
