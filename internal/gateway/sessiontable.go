package gateway

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// sessionTable holds the client sessions live in this process: finding one (or reviving
// it from the store), admitting a new one within the session limits (sessionlimits.go),
// ending one, and the reaper that ends idle ones.
type sessionTable struct {
	g        *Gateway
	mu       sync.RWMutex
	sessions map[string]*session.Session
	perAgent map[string]int // live sessions by agent (sessionlimits.go)
	// admitMu serialises making new and revived sessions live within the session limits.
	admitMu sync.Mutex
}

// lookup finds a live session, or revives one from the store (after a restart, or one
// opened on another replica).
func (st *sessionTable) lookup(id string) (*session.Session, error) {
	g := st.g
	st.mu.RLock()
	s := st.sessions[id]
	st.mu.RUnlock()
	if s != nil {
		return s, nil
	}
	rec, err := g.store.Get(id)
	if err != nil {
		return nil, err
	}
	if why := g.gate.identityGone(rec); why != "" {
		// Stored before its agent was deleted or disabled (or before agents were defined,
		// as "default"): it does not come back.
		g.log.Info("stored session not resumed", "session", id, "why", why)
		_ = g.store.Delete(id)
		return nil, store.ErrNotFound
	}
	return st.adopt(rec), nil
}

// all returns the live sessions.
func (st *sessionTable) all() []*session.Session {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return slices.Collect(maps.Values(st.sessions))
}

// sessionCount is how many sessions are live.
func (st *sessionTable) sessionCount() int {
	st.mu.RLock()
	defer st.mu.RUnlock()
	return len(st.sessions)
}

// any reports whether some live session satisfies f (called under the table's read lock:
// f must not call back into the table).
func (st *sessionTable) any(f func(*session.Session) bool) bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	for _, s := range st.sessions {
		if f(s) {
			return true
		}
	}
	return false
}

// byAgent counts the live sessions by agent.
func (st *sessionTable) byAgent() map[string]int {
	live := map[string]int{}
	st.mu.RLock()
	for _, s := range st.sessions {
		live[s.Rec.Agent]++
	}
	st.mu.RUnlock()
	return live
}

// evict takes a session off the live ones without ending it here (another replica ended
// it) and returns it; nil when it was not live.
func (st *sessionTable) evict(id string) *session.Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.dropLive(id)
}

// clear takes every session off the live ones (the gateway closes) and returns them.
func (st *sessionTable) clear() []*session.Session {
	st.mu.Lock()
	defer st.mu.Unlock()
	all := make([]*session.Session, 0, len(st.sessions))
	for _, s := range st.sessions {
		all = append(all, s)
	}
	st.sessions, st.perAgent = map[string]*session.Session{}, nil
	return all
}

// liveSession is the session with this id live in this process; nil for "" or one that
// ended.
func (st *sessionTable) liveSession(id string) *session.Session {
	if id == "" {
		return nil
	}
	st.mu.RLock()
	s := st.sessions[id]
	st.mu.RUnlock()
	return s
}

// session finds the session a request names, or writes 404 (unknown or ended) or 503
// (store unavailable).
func (st *sessionTable) session(w http.ResponseWriter, sid string, msgID json.RawMessage) *session.Session {
	g := st.g
	s, err := st.lookup(sid)
	switch {
	case err == nil:
		return s
	case errors.Is(err, store.ErrNotFound):
		reply.JSON(w, http.StatusNotFound, wire.Error(msgID, wire.CodeSessionNotFound, "Session not found", nil))
	default:
		g.log.Error("session store unavailable", "err", err)
		reply.JSON(w, http.StatusServiceUnavailable, wire.Error(msgID, wire.CodeInternalError, "Session store unavailable", nil))
	}
	return nil
}

// adopt makes a stored session live in this process, within the session limits.
func (st *sessionTable) adopt(rec *store.Record) *session.Session {
	g := st.g
	st.mu.RLock()
	s := st.sessions[rec.ID]
	st.mu.RUnlock()
	if s != nil {
		return s
	}
	s = st.newSession(*rec)
	if other := st.admit(s); other != nil {
		return other // revived by a request racing this one
	}
	g.metrics.SessionStarted(s.Rec.Agent, s.Transport)
	g.log.Info("session resumed from store", "session", rec.ID, "transport", rec.Transport)
	return s
}

func (st *sessionTable) newSession(rec store.Record) *session.Session {
	return session.New(sessionHost{st.g}, rec)
}

// register adds a new session.
func (st *sessionTable) register(s *session.Session) error {
	g := st.g
	if err := g.store.Put(&s.Rec); err != nil {
		return err
	}
	st.admit(s)
	g.metrics.SessionStarted(s.Rec.Agent, s.Transport)
	// One line per session start says which servers this agent, task and executor got.
	g.log.Info("session started", "session", s.ID, "transport", s.Transport, "agent", s.Rec.Agent,
		"conversation", s.Rec.Conversation, "task", s.Rec.Task, "executor", s.Rec.Executor, "servers", s.Rec.Servers)
	return nil
}

// end removes a session and stops its upstream instances.
func (st *sessionTable) end(s *session.Session, why string) {
	g := st.g
	st.mu.Lock()
	ok := st.sessions[s.ID] == s
	if ok {
		st.dropLive(s.ID)
	}
	st.mu.Unlock()
	if ok {
		g.metrics.SessionEnded(s.Rec.Agent, s.Transport)
	}
	_ = g.store.Delete(s.ID)
	s.Close()
	g.replicas.publish("end", s.ID)
	g.log.Info("session ended", "session", s.ID, "why", why)
	g.releaseRetired()
}

// reap ends sessions idle past http.session_idle_timeout and stops per-session instances
// idle past upstream.idle_timeout.
func (st *sessionTable) reap() {
	g := st.g
	t := time.NewTimer(reapEvery(g.policy().cfg))
	defer t.Stop()
	sweeps := 0
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(reapEvery(g.policy().cfg))
		now := time.Now()
		if sweeps++; sweeps%10 == 0 {
			st.sweep(now)
		}
		g.calls.Routes().Expire(now)
		all := st.all()
		for _, s := range all {
			hasStream := s.Out.Open()
			idle := now.Sub(time.Unix(0, s.LastSeen.Load()))
			if !hasStream && idle > g.policy().cfg.HTTP.SessionIdle {
				st.end(s, "idle")
				continue
			}
			if !hasStream && !s.Used.Load() && idle > g.policy().cfg.HTTP.UnusedSession {
				g.metrics.UnusedSessionEnded()
				st.end(s, "unused")
				continue
			}
			g.reg.Instances().StopIdle(s.Upstreams, now, g.policy().cfg.Upstream.IdleTimeout)
		}
	}
}

// sweep drops stored sessions idle past the idle timeout (after a restart nobody else
// would) and refreshes last-seen times of live ones, so that the store stays true.
func (st *sessionTable) sweep(now time.Time) {
	g := st.g
	recs, err := g.store.List()
	if err != nil {
		return
	}
	st.mu.RLock()
	live := make(map[string]*session.Session, len(st.sessions))
	for id, s := range st.sessions {
		live[id] = s
	}
	st.mu.RUnlock()
	var idle []*storedRec
	for _, r := range recs {
		if s := live[r.ID]; s != nil {
			seen := time.Unix(0, s.LastSeen.Load()).UTC()
			if seen.Sub(r.LastSeen) > time.Minute {
				rec := s.SetLastSeen(seen)
				_ = g.store.Put(&rec)
			}
			continue
		}
		if now.Sub(r.LastSeen) > g.policy().cfg.HTTP.SessionIdle {
			_ = g.store.Delete(r.ID)
			continue
		}
		idle = append(idle, &storedRec{id: r.ID, seen: r.LastSeen})
	}
	if _, shared := g.replicas.bus.(*store.Redis); !shared {
		// A store of this process alone: every record not live here is a session nobody
		// serves until it is named again. (With replicas, they are other replicas' live
		// sessions, each bounded there.)
		st.trimStored(idle, len(live))
	}
	st.pruneConversations(now)
}
