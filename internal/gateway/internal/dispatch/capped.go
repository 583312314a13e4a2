package dispatch

import (
	"context"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/toolrank"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// Capped clients (docs/performance.md, "Capped clients"): a client whose tool cap is below
// its view is served the search form with as many tools as the cap leaves room for beside
// search_tools: the pinned ones, then the agent's most used, then the rest in view order.
// The most-used ranking is taken once per session (kept in its record, so every replica
// serves the session the same list) and recomputed only when counts are flushed, with
// hysteresis; a stateless (2026-07-28) request uses no ranking, so its list follows from
// its own input and authorization alone.

// cappedPage is the search form's list for session s over view v when its client takes at
// most max tools besides search_tools.
func (l *toolLists) cappedPage(s *session.Session, v *registry.View, pin func(*registry.Tool) bool, max int) *registry.Page {
	var ranking []string
	if s.Transport != "stateless" {
		r, taken, rec := s.MostUsed(func() []string { return l.ranks.Ranking(s.Rec.Agent) })
		if taken {
			if err := l.store.Put(&rec); err != nil {
				l.log.Warn("session record not updated", "session", s.ID, "err", err)
			}
		}
		ranking = r
	}
	return toolrank.Page(v.Tools, toolrank.Pick(v.Tools, pin, ranking, max), l.searchDefFor(v))
}

// UsageHooks are the Observer hooks that count each agent's tool calls for its ranking
// (ToolRanks); a nil ranks counts nothing. A call is counted once its tool is found in the
// session's view, before it runs and whatever its outcome: the agent used the tool, and a
// session that starts after the answer came back sees the call.
func UsageHooks(ranks *toolrank.Ranks) Observer {
	if ranks == nil {
		return Observer{}
	}
	return Observer{used: func(s *session.Session, t *registry.Tool) { ranks.Count(s.Rec.Agent, t.Server, t.Name) }}
}

// ToolRanks are the dispatcher's agents' tool rankings: count into them (UsageHooks) and
// run their flushes (RunToolRanks).
func (dp *Dispatcher) ToolRanks() *toolrank.Ranks { return dp.lists.ranks }

// RunToolRanks writes the counted calls to the store every interval (<= 0:
// toolrank.DefaultEvery) until ctx ends.
func (dp *Dispatcher) RunToolRanks(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = toolrank.DefaultEvery
	}
	dp.lists.ranks.Run(ctx, every)
}
