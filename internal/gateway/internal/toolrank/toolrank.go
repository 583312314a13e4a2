// Package toolrank counts each agent's tool calls and ranks the tools it uses most, for the
// lists of clients that take fewer tools than their view holds (docs/performance.md,
// "Capped clients"). Calls are counted in memory on the call path and written to the store
// at bounded points (Flush, on a schedule and when an agent's session asks for its
// ranking), where the ranking is recomputed with hysteresis (Rank), so that replicas that
// share a store agree on it and one call does not reshuffle a list.
package toolrank

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/store"
)

// MaxPending bounds the (agent, tool) counters kept between two flushes: a call of a new
// pair beyond them is not counted (counted as dropped), so no caller can grow them without
// bound.
const MaxPending = 8192

// DefaultEvery is how often Run flushes the counters.
const DefaultEvery = 15 * time.Second

// key is one agent's calls of one tool.
type key struct{ agent, server, tool string }

// Ranks counts calls and keeps rankings in a store's tool use. The zero value and a
// Ranks over a nil store count nothing.
type Ranks struct {
	use store.ToolUse
	log *slog.Logger

	mu      sync.Mutex
	pending map[key]int64
	dropped int64
}

// New counts into use (nil: nothing is counted or ranked).
func New(use store.ToolUse, log *slog.Logger) *Ranks {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Ranks{use: use, log: log, pending: map[key]int64{}}
}

// Count notes one call by agent of server's tool (its upstream name). An anonymous call
// (no agent id) is not counted. It takes a lock and, for a pair already counted since the
// last flush, allocates nothing.
func (r *Ranks) Count(agent, server, tool string) {
	if r == nil || r.use == nil || agent == "" {
		return
	}
	k := key{agent, server, tool}
	r.mu.Lock()
	if n, ok := r.pending[k]; ok {
		r.pending[k] = n + 1
	} else if len(r.pending) < MaxPending {
		r.pending[k] = 1
	} else {
		r.dropped++
	}
	r.mu.Unlock()
}

// take removes the pending counts of agent ("": of every agent), by agent and tool key.
func (r *Ranks) take(agent string) map[string]map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]map[string]int64{}
	for k, n := range r.pending {
		if agent != "" && k.agent != agent {
			continue
		}
		m := out[k.agent]
		if m == nil {
			m = map[string]int64{}
			out[k.agent] = m
		}
		m[store.ToolUseKey(k.server, k.tool)] += n
		delete(r.pending, k)
	}
	if r.dropped > 0 && agent == "" {
		r.log.Warn("tool use: calls not counted, too many agent and tool pairs between flushes", "dropped", r.dropped, "max", MaxPending)
		r.dropped = 0
	}
	return out
}

// Flush writes the pending counts of every agent to the store and ranks each agent that
// had some again.
func (r *Ranks) Flush() {
	if r == nil || r.use == nil {
		return
	}
	for agent, counts := range r.take("") {
		r.write(agent, counts)
	}
}

// write adds counts to agent's in the store and ranks it again; a store that fails is
// logged, and the counts are lost (they are a hint, not a record).
func (r *Ranks) write(agent string, counts map[string]int64) *store.ToolUseRecord {
	if err := r.use.AddToolUse(agent, counts); err != nil {
		r.log.Warn("tool use not saved", "agent", agent, "err", err)
		return nil
	}
	rec, err := r.use.GetToolUse(agent)
	if err != nil {
		r.log.Warn("tool use not read", "agent", agent, "err", err)
		return nil
	}
	ranking := Rank(rec.Counts, rec.Ranking)
	if !slices.Equal(ranking, rec.Ranking) {
		if err := r.use.PutToolRanking(agent, ranking); err != nil {
			r.log.Warn("tool ranking not saved", "agent", agent, "err", err)
		}
		rec.Ranking = ranking
	}
	return rec
}

// Ranking is agent's ranking of tool keys (store.ToolUseKey), most used first: its
// pending counts are written and ranked first, so a session that starts sees the calls
// this replica counted. Nil when nothing is ranked (or the store fails).
func (r *Ranks) Ranking(agent string) []string {
	if r == nil || r.use == nil || agent == "" {
		return nil
	}
	if counts := r.take(agent)[agent]; len(counts) > 0 {
		if rec := r.write(agent, counts); rec != nil {
			return rec.Ranking
		}
		return nil
	}
	rec, err := r.use.GetToolUse(agent)
	if err != nil {
		r.log.Warn("tool use not read", "agent", agent, "err", err)
		return nil
	}
	return rec.Ranking
}

// Run flushes every interval until ctx ends (the owner flushes once more when it closes,
// before its store does).
func (r *Ranks) Run(ctx context.Context, every time.Duration) {
	if r == nil || r.use == nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Flush()
		}
	}
}

// Hysteresis: a tool ranked before keeps its place against a newcomer until the newcomer
// has more than a quarter more calls, plus two.
const (
	keepNum, keepDen = 5, 4
	keepPlus         = 2
)

// Rank orders the tools of counts, most used first, within store.MaxToolRanking. A tool
// of prev (the ranking before) counts as if it had a quarter more calls plus two; ties go
// to the earlier place in prev, then to the key's byte order. The same counts and prev
// give the same ranking, on every replica.
func Rank(counts map[string]int64, prev []string) []string {
	type cand struct {
		k    string
		adj  int64
		prev int
	}
	at := make(map[string]int, len(prev))
	for i, k := range prev {
		if _, ok := at[k]; !ok {
			at[k] = i
		}
	}
	cs := make([]cand, 0, len(counts))
	for k, n := range counts {
		if n <= 0 {
			continue
		}
		c := cand{k: k, adj: n, prev: math.MaxInt}
		if i, ok := at[k]; ok {
			c.prev = i
			c.adj = n + n*(keepNum-keepDen)/keepDen + keepPlus
			if c.adj < n { // overflow
				c.adj = math.MaxInt64
			}
		}
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.adj != b.adj {
			return a.adj > b.adj
		}
		if a.prev != b.prev {
			return a.prev < b.prev
		}
		return a.k < b.k
	})
	if len(cs) > store.MaxToolRanking {
		cs = cs[:store.MaxToolRanking]
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.k
	}
	return out
}
