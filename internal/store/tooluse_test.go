package store

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// Every store kind keeps tool use the same way: counts add up, across two store values on
// one backend (two replicas on one Redis, a bbolt file reopened), new keys stop at
// MaxToolUseTools, the ranking is kept as given (cut at MaxToolRanking), and an empty
// agent id is refused.
func TestToolUse(t *testing.T) {
	kinds := map[string]func(t *testing.T) (a, b Store){
		"memory": func(t *testing.T) (Store, Store) { m := NewMemory(); return m, NewCached(m, 8) },
		"bolt": func(t *testing.T) (Store, Store) {
			path := filepath.Join(t.TempDir(), "mcpgw.db")
			s, err := OpenBolt(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, s
		},
		"redis": func(t *testing.T) (Store, Store) {
			srv := startRedis(t)
			return srv.open(t), NewCached(srv.open(t), 8)
		},
	}
	for name, open := range kinds {
		t.Run(name, func(t *testing.T) {
			a, b := open(t)
			ua, ub := ToolUseOf(a), ToolUseOf(b)
			if ua == nil || ub == nil {
				t.Fatalf("ToolUseOf(%s) = nil", name)
			}
			echo, add := ToolUseKey("everything", "echo"), ToolUseKey("everything", "add")
			must(t, ua.AddToolUse("agent-1", map[string]int64{echo: 2, add: 1}))
			must(t, ub.AddToolUse("agent-1", map[string]int64{echo: 3, add: 0}))
			must(t, ub.AddToolUse("agent-2", map[string]int64{add: 7}))
			r, err := ub.GetToolUse("agent-1")
			must(t, err)
			if r.Counts[echo] != 5 || r.Counts[add] != 1 || len(r.Counts) != 2 {
				t.Errorf("agent-1's counts = %v, want echo 5, add 1", r.Counts)
			}
			r.Counts[echo] = 100 // the caller's copy
			if r2, _ := ua.GetToolUse("agent-1"); r2.Counts[echo] != 5 {
				t.Errorf("changing a got record changed the store: %v", r2.Counts)
			}
			if r, _ := ua.GetToolUse("nobody"); r == nil || len(r.Counts) != 0 || r.Ranking != nil {
				t.Errorf("an unknown agent's record = %+v, want an empty one", r)
			}
			many := map[string]int64{}
			for i := range MaxToolUseTools + 10 {
				many[fmt.Sprintf("s\x00t%04d", i)] = 1
			}
			must(t, ua.AddToolUse("agent-1", many))
			if r, _ := ub.GetToolUse("agent-1"); len(r.Counts) != MaxToolUseTools || r.Counts[echo] != 5 {
				t.Errorf("after too many keys: %d keys (want %d), echo %d", len(r.Counts), MaxToolUseTools, r.Counts[echo])
			}
			must(t, ua.AddToolUse("agent-1", map[string]int64{echo: 1}))
			if r, _ := ub.GetToolUse("agent-1"); r.Counts[echo] != 6 {
				t.Errorf("a kept key stops counting once the record is full: echo %d", r.Counts[echo])
			}
			long := make([]string, MaxToolRanking+5)
			for i := range long {
				long[i] = fmt.Sprintf("s\x00t%04d", i)
			}
			must(t, ub.PutToolRanking("agent-1", long))
			if r, _ := ua.GetToolUse("agent-1"); !slices.Equal(r.Ranking, long[:MaxToolRanking]) {
				t.Errorf("ranking kept: %d keys, want the first %d given", len(r.Ranking), MaxToolRanking)
			}
			if ua.AddToolUse("", map[string]int64{echo: 1}) == nil || ua.PutToolRanking("", nil) == nil {
				t.Error("an empty agent id was taken")
			}
		})
	}
}

// The memory store counts at most MaxToolUseAgents agents: a new one beyond them is not
// kept, so agent ids a caller makes up cannot grow it without bound.
func TestToolUseMemoryAgentBound(t *testing.T) {
	m := NewMemory()
	for i := range MaxToolUseAgents + 3 {
		must(t, m.ToolUses().AddToolUse(fmt.Sprintf("agent-%d", i), map[string]int64{"s\x00t": 1}))
	}
	if n := len(m.use.records); n != MaxToolUseAgents {
		t.Errorf("%d agents kept, want %d", n, MaxToolUseAgents)
	}
}
