package config

import (
	"fmt"
	"time"
)

// PoolDef is servers.<name>.pool: instances started and initialized before any session
// asks for one (docs/config.md, "Warm pools").
type PoolDef struct {
	// Warm is how many ready, unused instances the pool keeps.
	Warm int `yaml:"warm"`
	// Max bounds the server's pooled instances: in use, ready and starting together
	// (default: the server's max_instances).
	Max int `yaml:"max"`
	// IdleTimeout: a pool that gave out no instance for this long stops its ready ones
	// and refills on the next take (default upstream.idle_timeout; negative: never).
	IdleTimeout time.Duration `yaml:"idle_timeout"`
}

// DefaultAgentGrace is how long a per_agent instance outlives its agent's last session.
const DefaultAgentGrace = 30 * time.Second

// Pooled reports whether the server keeps a warm pool: a pool with warm > 0 on a server
// whose instances are per_session or per_agent.
func (d *ServerDef) Pooled() bool {
	if d.Pool == nil || d.Pool.Warm <= 0 {
		return false
	}
	m := d.ResolvedMode()
	return m == ModePerSession || m == ModePerAgent
}

// applyInstanceDefaults fills the pool's max and idle timeout and the per_agent grace.
func (c *Config) applyInstanceDefaults(d *ServerDef) {
	if d.Pool != nil {
		if d.Pool.Max == 0 {
			d.Pool.Max = d.MaxInstances
		}
		if d.Pool.IdleTimeout == 0 {
			d.Pool.IdleTimeout = c.Upstream.IdleTimeout
		}
	}
	if d.AgentGrace == 0 {
		d.AgentGrace = DefaultAgentGrace
	}
	if d.MaxInstancesPerAgent == 0 {
		d.MaxInstancesPerAgent = c.Upstream.MaxInstancesPerAgent
	}
	if d.MaxInstancesPerAgent == 0 {
		bound := d.MaxInstances
		if d.Pooled() && d.Pool.Max > 0 && d.Pool.Max < bound {
			// Pooled instances are bounded by pool.max: the share is of what can be taken.
			bound = d.Pool.Max
		}
		d.MaxInstancesPerAgent = share(bound, 2)
	}
}

// DefaultMaxSessions is http.max_sessions when the config sets none.
const DefaultMaxSessions = 4096

// share is the default per-agent part of a limit shared by every agent: 1/parts of it,
// at least 1, so that at least parts agents always find room.
func share(total, parts int) int {
	return max(1, total/parts)
}

// instanceProblems checks a server's pool and per_agent settings.
func instanceProblems(where string, d *ServerDef) Problems {
	var ps Problems
	add := func(warn bool, w, format string, a ...any) {
		ps = append(ps, Problem{Warning: warn, Where: w, Text: fmt.Sprintf(format, a...)})
	}
	if d.AgentGrace < 0 {
		add(false, where+".agent_grace", "must not be negative")
	}
	if d.MaxInstancesPerAgent < 0 {
		add(false, where+".max_instances_per_agent", "must not be negative")
	} else if d.MaxInstances > 0 && d.MaxInstancesPerAgent > d.MaxInstances {
		add(true, where+".max_instances_per_agent", "%d is more than max_instances (%d): one agent may take every instance", d.MaxInstancesPerAgent, d.MaxInstances)
	}
	if d.Queue.MaxPerAgent < 0 {
		add(false, where+".queue.max_per_agent", "must not be negative")
	} else if d.Queue.Max > 0 && d.Queue.MaxPerAgent > d.Queue.Max {
		add(true, where+".queue.max_per_agent", "%d is more than queue.max (%d): one agent may fill the queue", d.Queue.MaxPerAgent, d.Queue.Max)
	}
	p := d.Pool
	if p == nil {
		return ps
	}
	if p.Warm < 0 {
		add(false, where+".pool.warm", "must not be negative")
	}
	if p.Max < 0 {
		add(false, where+".pool.max", "must not be negative")
	}
	if p.Max > 0 && p.Warm > p.Max {
		add(false, where+".pool", "warm (%d) is more than max (%d)", p.Warm, p.Max)
	}
	switch m := d.ResolvedMode(); m {
	case ModePerSession, ModePerAgent:
	default:
		add(false, where+".pool", "a pool needs per_session or per_agent instances; this server runs %s", m)
	}
	return ps
}
