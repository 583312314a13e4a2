package instances

import (
	"context"
	"sync/atomic"

	"github.com/mcpgw/mcpgw/config"
)

// StartGate bounds how many upstream instances the registry starts at once for itself
// (upstream.start_concurrency): a shared server's connection, a per_session server's
// catalogue probe and a warm pool's refills, at start-up and on every retry. A start
// holds its slot from spawning the process until the catalogue (or, for a pool, the
// initialize answer) is in, and its connect timeout only begins once it has the slot:
// a fleet of servers started at once on a small machine would otherwise share the CPUs
// so thinly that each start runs past its timeout and all of them fail and retry
// together. Instances a session starts for itself do not pass the gate: the session is
// waiting, and max_instances bounds them.
type StartGate struct {
	// slots is replaced whole when the limit changes; a start gives its slot back to
	// the channel it took it from.
	slots atomic.Pointer[chan struct{}]
}

// SetLimit makes n the number of starts at once (n < 1: the default, as for a config
// built in code without its defaults). Starts under way keep their slots in the old
// channel; new starts wait in the new one.
func (g *StartGate) SetLimit(n int) {
	if n < 1 {
		n = config.DefaultStartConcurrency()
	}
	if cur := g.slots.Load(); cur != nil && cap(*cur) == n {
		return
	}
	ch := make(chan struct{}, n)
	g.slots.Store(&ch)
}

// enter waits, first come first served, for a slot; release gives it back. It fails
// only when ctx ends first (the server was stopped or replaced).
func (g *StartGate) enter(ctx context.Context) (release func(), err error) {
	ch := *g.slots.Load()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
