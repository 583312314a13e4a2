package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/sessions"
)

// The gateway-side sessions of stateless callers: keyed by the caller's identity and
// declared capabilities, at most modernVariants per caller (principal and agent).

// modernKey names the gateway-side session of a caller: who it is (every part of the
// identity that decides its view) and the capabilities it declares, which its upstream
// instances are told at their start (an upstream decides what to ask from them).
func modernKey(id *auth.Identity, caps json.RawMessage) string {
	k := struct {
		P, A, C, T, E, M string
		S, Tl            []string
		HasS, HasT, RO   bool
		Caps             string
	}{P: id.Principal, A: id.Agent, C: id.Conversation, T: id.Task, E: id.Executor, M: id.Method, Caps: canonical(caps)}
	if c := id.Claims; c != nil {
		k.S, k.Tl, k.HasS, k.HasT, k.RO = c.Servers, c.Tools, c.Servers != nil, c.Tools != nil, c.ReadOnly
	}
	b, _ := json.Marshal(k)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// modernCaller names who a stateless caller is for the bound on its sessions
// (modernVariants): its principal and agent only. Everything else a request may vary on
// its own (conversation, task, executor, capabilities) makes another variant of the same
// caller, so varying X-Conversation-ID cannot mint sessions beyond the bound.
func modernCaller(id *auth.Identity) string {
	b, _ := json.Marshal([]string{id.Principal, id.Agent, id.Method})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonical re-encodes JSON with sorted keys, so two spellings of the same capabilities
// name the same session.
func canonical(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// modernSession returns the caller's gateway-side session, opening it (with the same
// resolution as initialize) on its first request; nil means a refusal was written.
func (f *statelessFront) modernSession(w http.ResponseWriter, r *http.Request, id *auth.Identity, req *modernRequest) *Session {
	g := f.g
	key, caller := modernKey(id, req.caps), modernCaller(id)
	f.mu.Lock()
	s := f.sessions[key]
	f.mu.Unlock()
	if s != nil && !s.isClosed() {
		return s
	}
	// Opened outside the lock (the store may be slow); two first requests of one caller
	// racing keep the first session registered and end the other.
	now := time.Now().UTC()
	rec := sessions.Record{ID: newSessionID(), Transport: "stateless", ProtocolVersion: modernVersion,
		ClientCaps: req.caps, ClientInfo: req.info, Created: now, LastSeen: now}
	if fail := g.gate.startIdentity(r.Context(), id, &rec); fail != nil {
		g.gate.refuse(w, fail, id)
		return nil
	}
	s = g.live.newSession(rec)
	if err := g.live.register(s); err != nil {
		g.log.Error("store unavailable", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, wire.Error(req.m.ID, wire.CodeInternalError, "Session store unavailable", nil))
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
