package store

import (
	"slices"
	"sync"
)

// Tool use: how often each agent called each tool, and the agent's ranking of its most used
// tools, kept in the store so that every replica that shares it lists a capped client the
// same tools (docs/performance.md, "Capped clients"). A tool is named by ToolUseKey
// (server and upstream name, not the exposed name, which depends on the client).

// ToolUseRecord is one agent's tool use: calls by tool key, and the ranking last computed
// from them (most used first).
type ToolUseRecord struct {
	Counts  map[string]int64 `json:"counts,omitempty"`
	Ranking []string         `json:"ranking,omitempty"`
}

// ToolUse keeps agents' tool-use counts and rankings. Every method is safe for concurrent
// use; a record is returned by value (the caller may change it).
type ToolUse interface {
	// AddToolUse adds counts (by tool key) to agent's. An agent holds at most
	// MaxToolUseTools keys: a new key beyond them is not counted. The store holds at most
	// MaxToolUseAgents agents (memory and bbolt; Redis forgets an agent unused for
	// ToolUseTTL): a new agent beyond them is not counted.
	AddToolUse(agent string, counts map[string]int64) error
	// GetToolUse is agent's record: an empty one, not an error, when none is kept.
	GetToolUse(agent string) (*ToolUseRecord, error)
	// PutToolRanking replaces agent's ranking (at most MaxToolRanking keys are kept).
	PutToolRanking(agent string, ranking []string) error
}

// The bounds of tool-use records.
const (
	MaxToolUseTools  = 512
	MaxToolUseAgents = 4096
	MaxToolRanking   = 128
)

// ToolUseKey names a tool in tool-use records: its server and its upstream name.
func ToolUseKey(server, tool string) string { return server + "\x00" + tool }

// toolUseError is a constant error of tool-use records.
type toolUseError string

func (e toolUseError) Error() string { return string(e) }

// errToolUseAgent is the refusal of an empty agent id.
const errToolUseAgent = toolUseError("tool use: the agent id must be non-empty")

// ToolUseOf returns the tool-use records of s (seen through NewCached and other
// wrappers), or nil when its kind keeps none.
func ToolUseOf(s Store) ToolUse {
	for {
		switch v := s.(type) {
		case interface{ ToolUses() ToolUse }:
			return v.ToolUses()
		case interface{ Unwrap() Store }:
			s = v.Unwrap()
		default:
			return nil
		}
	}
}

// toolUseMemory is a memory store's tool use. The zero value is ready.
type toolUseMemory struct {
	mu      sync.Mutex
	records map[string]*ToolUseRecord
}

// ToolUses are the store's tool-use records.
func (s *Memory) ToolUses() ToolUse { return &s.use }

func (u *toolUseMemory) AddToolUse(agent string, counts map[string]int64) error {
	if agent == "" {
		return errToolUseAgent
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.record(agent)
	if r == nil {
		return nil // MaxToolUseAgents agents are kept; a new one is not
	}
	addCounts(r, counts)
	return nil
}

// record is agent's record, made when it has none and fewer than MaxToolUseAgents agents
// have one; nil otherwise. u.mu is held.
func (u *toolUseMemory) record(agent string) *ToolUseRecord {
	if r := u.records[agent]; r != nil {
		return r
	}
	if len(u.records) >= MaxToolUseAgents {
		return nil
	}
	if u.records == nil {
		u.records = map[string]*ToolUseRecord{}
	}
	r := &ToolUseRecord{}
	u.records[agent] = r
	return r
}

// addCounts adds counts to r's within MaxToolUseTools keys.
func addCounts(r *ToolUseRecord, counts map[string]int64) {
	if r.Counts == nil {
		r.Counts = map[string]int64{}
	}
	for k, n := range counts {
		if _, ok := r.Counts[k]; !ok && len(r.Counts) >= MaxToolUseTools {
			continue
		}
		if n > 0 {
			r.Counts[k] += n
		}
	}
}

func (u *toolUseMemory) GetToolUse(agent string) (*ToolUseRecord, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return cloneToolUse(u.records[agent]), nil
}

func (u *toolUseMemory) PutToolRanking(agent string, ranking []string) error {
	if agent == "" {
		return errToolUseAgent
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.record(agent)
	if r == nil {
		return nil // MaxToolUseAgents agents are kept; a new one is not
	}
	r.Ranking = capRanking(ranking)
	return nil
}

// capRanking is a copy of ranking, at most MaxToolRanking long.
func capRanking(ranking []string) []string {
	if len(ranking) > MaxToolRanking {
		ranking = ranking[:MaxToolRanking]
	}
	return slices.Clone(ranking)
}

// cloneToolUse is a deep copy of r (an empty record for nil).
func cloneToolUse(r *ToolUseRecord) *ToolUseRecord {
	c := &ToolUseRecord{Counts: map[string]int64{}}
	if r == nil {
		return c
	}
	for k, n := range r.Counts {
		c.Counts[k] = n
	}
	c.Ranking = slices.Clone(r.Ranking)
	return c
}
