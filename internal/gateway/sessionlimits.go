package gateway

import (
	"fmt"
	"sort"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/store"
)

// Session limits (docs/config.md, "Fair shares"): the gateway holds at most
// http.max_sessions live sessions, and one agent at most http.max_sessions_per_agent. A
// new (or revived) session past a limit is not refused: room is made by ending an older
// session, idle ones first (no open stream, nothing in flight), least recently used first:
//
//   - past the agent's limit, one of that agent's own sessions;
//   - past the total, one of the agent that holds the most sessions,
//
// so an agent that opens session after session only ever ends its own, and an agent with
// few sessions keeps them while others hold many. Each end is counted in
// mcpgw_sessions_evicted_total{reason}.

// Eviction reasons (the reason label of mcpgw_sessions_evicted_total).
const (
	evictAgentLimit = "agent_limit"
	evictTotalLimit = "total_limit"
	evictVariants   = "stateless_variants"
	evictIdentity   = "identity"
)

// addLive makes s live (under g.mu).
func (st *sessionTable) addLive(s *session.Session) {
	st.sessions[s.ID] = s
	if st.perAgent == nil {
		st.perAgent = map[string]int{}
	}
	st.perAgent[s.Rec.Agent]++
}

// dropLive takes the session id off the live ones (under g.mu) and returns it.
func (st *sessionTable) dropLive(id string) *session.Session {
	s := st.sessions[id]
	if s == nil {
		return nil
	}
	delete(st.sessions, id)
	if n := st.perAgent[s.Rec.Agent]; n <= 1 {
		delete(st.perAgent, s.Rec.Agent)
	} else {
		st.perAgent[s.Rec.Agent] = n - 1
	}
	return s
}

// admit makes s live within the session limits, ending older sessions to make room. When
// a session of s's id is live already (revived by a request racing this one), that one is
// returned and s is not made live. Admissions are serialised (admitMu) so that two at
// once cannot both see room for one; a request on a live session never comes here.
func (st *sessionTable) admit(s *session.Session) *session.Session {
	g := st.g
	st.admitMu.Lock()
	defer st.admitMu.Unlock()
	st.mu.RLock()
	other := st.sessions[s.ID]
	st.mu.RUnlock()
	if other != nil {
		return other
	}
	// Each round ends one session; a limit lowered by a reload may take several.
	for range g.policy().cfg.HTTP.MaxSessions + 1 {
		victim, reason, text := st.overLimit(s.Rec.Agent)
		if victim == nil {
			break
		}
		g.metrics.Evicted(reason)
		g.log.Warn("session evicted to make room", "session", victim.ID, "agent", victim.Rec.Agent, "reason", reason, "limit", text, "for_agent", s.Rec.Agent)
		st.end(victim, "evicted: "+text)
	}
	st.mu.Lock()
	st.addLive(s)
	st.mu.Unlock()
	return nil
}

// overLimit returns the session to end before one more session of agent is admitted, with
// the reason and the limit in words, or nil when there is room.
func (st *sessionTable) overLimit(agent string) (*session.Session, string, string) {
	g := st.g
	h := g.policy().cfg.HTTP
	st.mu.RLock()
	var from, reason, text string
	switch {
	case st.perAgent[agent] >= h.MaxSessionsPerAgent:
		from, reason = agent, evictAgentLimit
		text = fmt.Sprintf("agent %q holds %d sessions (http.max_sessions_per_agent = %d)", agent, st.perAgent[agent], h.MaxSessionsPerAgent)
	case len(st.sessions) >= h.MaxSessions:
		from, reason = st.largestHolder(), evictTotalLimit
		text = fmt.Sprintf("the gateway holds %d sessions (http.max_sessions = %d); agent %q holds the most", len(st.sessions), h.MaxSessions, from)
	default:
		st.mu.RUnlock()
		return nil, "", ""
	}
	var cands []*session.Session
	for _, s := range st.sessions {
		if s.Rec.Agent == from {
			cands = append(cands, s)
		}
	}
	st.mu.RUnlock()
	return leastValuable(cands), reason, text
}

// largestHolder is the agent with the most live sessions (under g.mu); ties go to the
// name that sorts first, so the choice does not depend on map order.
func (st *sessionTable) largestHolder() string {
	best, most := "", -1
	for agent, n := range st.perAgent {
		if n > most || (n == most && agent < best) {
			best, most = agent, n
		}
	}
	return best
}

// leastValuable is the session to end first: idle before busy, then the least recently
// used.
func leastValuable(cands []*session.Session) *session.Session {
	if len(cands) == 0 {
		return nil
	}
	type cand struct {
		s    *session.Session
		busy bool
		seen int64
	}
	cs := make([]cand, len(cands))
	for i, s := range cands {
		cs[i] = cand{s, s.Busy(), s.LastSeen.Load()}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].busy != cs[j].busy {
			return !cs[i].busy
		}
		return cs[i].seen < cs[j].seen
	})
	return cs[0].s
}

// trimStored deletes the oldest stored records of sessions not live here beyond
// http.max_sessions, so that records left by earlier runs (or a flood before the limits
// existed) do not stay for the whole idle timeout. recs are the store's records.
func (st *sessionTable) trimStored(recs []*storedRec, live int) {
	g := st.g
	room := g.policy().cfg.HTTP.MaxSessions - live
	if len(recs) <= room {
		return
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].seen.Before(recs[j].seen) })
	for _, r := range recs[:len(recs)-max(room, 0)] {
		_ = g.store.Delete(r.id)
	}
	g.log.Info("stored sessions trimmed to http.max_sessions", "deleted", len(recs)-max(room, 0))
}

// storedRec is a stored session record not live in this process.
type storedRec struct {
	id   string
	seen time.Time
}

// pruneConversations bounds the store's conversation records (the full/thin handshake's
// memory of each X-Conversation-ID): those not written for http.session_idle_timeout
// go, and of the rest at most http.max_sessions stay, the most recently written. A
// conversation that lost its record is sent the full tool list once more.
func (st *sessionTable) pruneConversations(now time.Time) {
	g := st.g
	p := store.PrunerOf(g.store)
	if p == nil {
		return
	}
	h := g.policy().cfg.HTTP
	n, err := p.PruneConversations(now.Add(-h.SessionIdle), h.MaxSessions)
	if err != nil {
		g.log.Warn("conversation records not pruned", "err", err)
		return
	}
	if n > 0 {
		g.log.Info("conversation records pruned", "deleted", n)
	}
}
