package instances

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/upstream"
)

// Fair shares of instances (docs/config.md, "Fair shares"): every instance of a server a
// session starts or takes for itself or its agent (per_session, per_agent, per_call, and
// takes from a warm pool) counts against its agent's share of the server,
// servers.<name>.max_instances_per_agent, besides the server's max_instances. One agent
// opening session after session then stops at its share, and the rest of the instances
// stay for the others.

// shareKey is one agent's holding of one server's instances.
type shareKey struct{ server, agent string }

// instanceShares counts the instances each agent holds of each server.
type instanceShares struct {
	mu   sync.Mutex
	held map[shareKey]int
	// freed are closed (and dropped) when one of the key's instances ends: takes waiting
	// at the share (pooled servers wait as the pool does) try again.
	freed map[shareKey]chan struct{}
}

// ShareError is an instance refused because its agent holds its whole share of the server.
type ShareError struct {
	Agent, Server string
	Held, Share   int
}

func (e *ShareError) Error() string {
	return fmt.Sprintf("agent %q holds %d of server %q's instances, its whole share (servers.%s.max_instances_per_agent = %d; raise it, or upstream.max_instances_per_agent for every server)",
		e.Agent, e.Held, e.Server, e.Server, e.Share)
}

// take counts one more instance of key, when the agent's share allows it. A take at the
// share waits up to wait (0: not at all) for one of the agent's instances to end.
func (sh *instanceShares) take(ctx context.Context, key shareKey, share int, wait time.Duration) error {
	var deadline <-chan time.Time
	for {
		sh.mu.Lock()
		n := sh.held[key]
		if n < share {
			if sh.held == nil {
				sh.held = map[shareKey]int{}
			}
			sh.held[key] = n + 1
			sh.mu.Unlock()
			return nil
		}
		if wait <= 0 {
			sh.mu.Unlock()
			return &ShareError{Agent: key.agent, Server: key.server, Held: n, Share: share}
		}
		if sh.freed == nil {
			sh.freed = map[shareKey]chan struct{}{}
		}
		ch := sh.freed[key]
		if ch == nil {
			ch = make(chan struct{})
			sh.freed[key] = ch
		}
		sh.mu.Unlock()
		if deadline == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-ch:
		case <-deadline:
			return &ShareError{Agent: key.agent, Server: key.server, Held: n, Share: share}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// give counts one of key's instances gone.
func (sh *instanceShares) give(key shareKey) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.held[key] <= 1 {
		delete(sh.held, key)
	} else {
		sh.held[key]--
	}
	if ch := sh.freed[key]; ch != nil {
		close(ch)
		delete(sh.freed, key)
	}
}

// takeShare counts an instance of srv about to be started or taken for spec against its
// agent's share. A pooled server waits for one of the agent's instances to end as a take
// at pool.max does (the server's connect timeout); otherwise the refusal is immediate, as
// at max_instances. release gives the share back; it must run once, when the instance
// ends or failed to start.
func (m *Instances) takeShare(ctx context.Context, srv *Server, spec *OwnerSpec, pooled bool) (release func(), err error) {
	key := shareKey{srv.Name, spec.Agent}
	bound := srv.Def.MaxInstances
	var wait time.Duration
	if pooled {
		wait = srv.Def.Timeouts.Connect
		if p := srv.Def.Pool; p != nil && p.Max > 0 && p.Max < bound {
			bound = p.Max
		}
	}
	if srv.Def.MaxInstancesPerAgent >= bound {
		// A share of everything is no share: the server's own limit speaks for itself.
		return func() {}, nil
	}
	if err := m.shares.take(ctx, key, srv.Def.MaxInstancesPerAgent, wait); err != nil {
		m.h.Log.Warn("instance refused: the agent holds its share", "server", srv.Name, "agent", spec.Agent, "session", spec.Session, "err", err)
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { m.shares.give(key) }) }, nil
}

// releaseWhenDone gives an instance's share back when it ends.
func releaseWhenDone(c *upstream.Conn, release func()) {
	go func() { <-c.Done(); release() }()
}

// instanceLimitError is a start refused at the server's max_instances.
func instanceLimitError(server string, limit int) error {
	return fmt.Errorf("server %q runs all %d of its instances (servers.%s.max_instances, default upstream.max_instances)", server, limit, server)
}
