package instances

import (
	"context"

	"github.com/mcpgw/mcpgw/internal/upstream"
)

// Overflow instances (docs/config.md, "Concurrency and queue"). A stateless (2026-07-28)
// caller's requests all land in one gateway-side session, and so on that session's own
// instance of a server, whose max_concurrency (1 for stdio) would make them wait for each
// other: a 30 s tool call would hold a 10 ms one for 30 s. The revision makes every
// request independent of the others, so a request the own instance cannot take at once is
// served instead by an instance started for it alone (as per_call starts one: the owner's
// options, counted against max_instances and the agent's share) and stopped when it is
// done. A session client's requests keep their one instance and its queue: its server may
// keep state from one call to the next, which another instance would not have.

// maxOverflow bounds the overflow instances one owner runs of one server at once. Each is
// a whole process (or upstream session) started for one request, so a burst of a caller's
// requests must not start one per request: past four, a caller's requests wait in its own
// instance's queue as before. Four covers the handful of tool calls a model issues at once,
// which is what the overflow is for; max_instances and the agent's share bound them too.
const maxOverflow = 4

// overflowKey is one owner's overflow instances of one server.
type overflowKey struct {
	o      Owner
	server string
}

// overflow starts an instance of o's own to serve one request of o's that its own
// instance cannot take at once, and counts it until it ends. It returns nil when none may
// start (o's overflow instances of srv at maxOverflow, max_instances, the agent's share,
// a failed start): the request then waits for o's own instance, as it would without
// overflow instances.
func (m *Instances) overflow(ctx context.Context, srv *Server, o Owner, spec *OwnerSpec) *upstream.Conn {
	key := overflowKey{o, srv.Name}
	m.mu.Lock()
	n := m.overflows[key]
	if n >= maxOverflow {
		m.mu.Unlock()
		return nil
	}
	if m.overflows == nil {
		m.overflows = map[overflowKey]int{}
	}
	m.overflows[key] = n + 1
	m.mu.Unlock()
	c, err := m.perCall(ctx, srv, o, spec)
	if err != nil {
		m.overflowEnded(key)
		m.h.Log.Debug("no overflow instance: the request waits for the session's own instance", "server", srv.Name, "session", spec.Session, "err", err)
		return nil
	}
	// Counted until the process ends, not until the request is answered: the bound is on
	// what runs, and a stopping instance still runs.
	go func() { <-c.Done(); m.overflowEnded(key) }()
	m.h.Log.Debug("an overflow instance serves a stateless request (the session's own instance is busy)", "server", srv.Name, "session", spec.Session, "overflow", n+1)
	return c
}

// overflowEnded uncounts one of key's overflow instances.
func (m *Instances) overflowEnded(key overflowKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.overflows[key] <= 1 {
		delete(m.overflows, key)
	} else {
		m.overflows[key]--
	}
}
