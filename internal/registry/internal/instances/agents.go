package instances

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// agentKey names one per_agent instance: the server, the agent, and the executor's
// overrides for the server (sessions of one agent under different executors need
// differently started instances).
type agentKey struct{ server, agent, overrides string }

// agentSet is the per_agent instances of the registry's servers, by agent.
type agentSet struct {
	m *Instances
	// mu guards by and each agentInst's owners and release timer.
	mu sync.Mutex
	by map[agentKey]*agentInst
}

// agentInst is one per_agent instance and the owners that use it.
type agentInst struct {
	key      agentKey
	mu       sync.Mutex
	conn     *upstream.Conn
	starting chan struct{} // closed when the start under way ends
	owners   map[Owner]struct{}
	release  *time.Timer // the grace timer, once the last owner left
}

// claim is the instance's live connection; or, while a start is under way, the channel
// closed when it ends; or, when neither, a channel the caller now owns: it starts the
// instance and calls started with it.
func (e *agentInst) claim() (c *upstream.Conn, wait <-chan struct{}, mine chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c := e.conn; c != nil {
		select {
		case <-c.Done():
			e.conn = nil // died: the next user starts another
		default:
			return c, nil, nil
		}
	}
	if ch := e.starting; ch != nil {
		return nil, ch, nil
	}
	ch := make(chan struct{})
	e.starting = ch
	return nil, nil, ch
}

// started ends the start claim gave as ch, with its connection c (nil: it failed).
func (e *agentInst) started(c *upstream.Conn, ch chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.conn = c
	e.starting = nil
	close(ch)
}

// current is the instance's connection (nil: none).
func (e *agentInst) current() *upstream.Conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conn
}

// settled is the instance's connection once a start under way ended (so that its
// instance is stopped too).
func (e *agentInst) settled() *upstream.Conn {
	e.mu.Lock()
	ch := e.starting
	e.mu.Unlock()
	if ch != nil {
		<-ch
	}
	return e.current()
}

func agentKeyOf(srv *Server, spec *OwnerSpec) agentKey {
	agent := spec.Agent
	if agent == "" {
		// No agent identity: nobody to share with, so the session has its own.
		agent = "\x00session:" + spec.Session
	}
	var ov string
	if spec.URL != "" || len(spec.Env) > 0 || spec.Runner != "" {
		b, _ := json.Marshal(struct {
			URL    string
			Env    map[string]string
			Runner string `json:",omitempty"`
		}{spec.URL, spec.Env, spec.Runner})
		ov = string(b)
	}
	if srv.Def.Auth.PerUser() {
		// Each identity's own token: an agent name two identities use is two instances.
		agent += "\x00subject:" + spec.Subject
	}
	return agentKey{srv.Name, agent, ov}
}

// agentConn returns the agent's instance of srv, starting it if none runs, and counts o
// among its users.
func (a *agentSet) agentConn(ctx context.Context, srv *Server, o Owner, spec *OwnerSpec) (*upstream.Conn, error) {
	e, err := a.joinAgent(o, agentKeyOf(srv, spec))
	if err != nil {
		return nil, err
	}
	for {
		c, wait, mine := e.claim()
		if c != nil {
			return c, nil
		}
		if wait != nil {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		c, err := a.startAgent(srv, o, spec, e)
		e.started(c, mine)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// joinAgent counts o among the users of key's instance (made if none), and stops its
// grace timer.
func (a *agentSet) joinAgent(o Owner, key agentKey) (*agentInst, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.by == nil {
		a.by = map[agentKey]*agentInst{}
	}
	e := a.by[key]
	if e == nil {
		e = &agentInst{key: key, owners: map[Owner]struct{}{}}
		a.by[key] = e
	}
	if o.Ended() {
		return nil, errors.New("session ended")
	}
	e.owners[o] = struct{}{}
	if e.release != nil {
		e.release.Stop()
		e.release = nil
	}
	return e, nil
}

// startAgent starts a per_agent instance: from the pool when the server has one and the
// owner's executor changes nothing for it, else with the gateway's own client
// capabilities (the instance serves several sessions, as a shared one does).
func (a *agentSet) startAgent(srv *Server, o Owner, spec *OwnerSpec, e *agentInst) (*upstream.Conn, error) {
	handler := upstream.Handler(func(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
		o.HandleShared(c, m, raw, rel)
	})
	onCat := func(cat *Catalog) {
		a.mu.Lock()
		users := slices.Collect(maps.Keys(e.owners))
		a.mu.Unlock()
		for _, u := range users {
			u.InstanceCatalog(srv.Name, cat, false)
		}
	}
	if err := a.m.atLimit(srv); err != nil {
		return nil, err
	}
	p := srv.PoolFor(config.ModePerAgent)
	pooled := p != nil && spec.poolable()
	// An agent has one per_agent instance per executor override set: the share bounds
	// how many such sets one agent may run.
	release, err := a.m.takeShare(a.m.h.Ctx, srv, spec, pooled)
	if err != nil {
		return nil, err
	}
	var c *upstream.Conn
	if pooled {
		var in *Instance
		if in, err = p.Take(a.m.h.Ctx); err == nil {
			in.Bind(handler, onCat)
			c = in.Conn
		}
	} else {
		opts := ownerOptions(srv, o, spec)
		opts.ClientCaps, opts.ClientInfo, opts.Handler = nil, nil, handler
		start := time.Now()
		if c, err = srv.Spawn(a.m.h.Ctx, opts, onCat); err == nil {
			srv.ObserveStart(time.Since(start))
		}
	}
	if err != nil {
		release()
		a.m.h.Log.Warn("per-agent upstream failed to start", "server", srv.Name, "agent", spec.Agent, "err", err)
		return nil, err
	}
	releaseWhenDone(c, release)
	o.InstanceStarted(srv.Name)
	a.m.counted(srv.Name, c)
	a.m.h.Log.Info("per-agent upstream started", "server", srv.Name, "agent", spec.Agent)
	return c, nil
}

// releaseAgents takes o off the per_agent instances of servers keep does not admit (nil:
// all of them, o ended). An instance whose last owner left is stopped after the server's
// agent_grace, unless an owner of the agent comes back.
func (a *agentSet) releaseAgents(o Owner, keep func(server string) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key, e := range a.by {
		if _, ok := e.owners[o]; !ok || (keep != nil && keep(key.server)) {
			continue
		}
		delete(e.owners, o)
		if len(e.owners) > 0 {
			continue
		}
		grace := config.DefaultAgentGrace
		if srv := a.m.h.Server(key.server); srv != nil {
			grace = srv.Def.AgentGrace
		}
		e.release = time.AfterFunc(grace, func() { a.stopAgent(e) })
	}
}

// stopAgent stops a per_agent instance that no owner used for its grace period.
func (a *agentSet) stopAgent(e *agentInst) {
	a.mu.Lock()
	if len(e.owners) > 0 || a.by[e.key] != e {
		a.mu.Unlock()
		return
	}
	delete(a.by, e.key)
	a.mu.Unlock()
	if c := e.settled(); c != nil {
		_ = c.Close()
		a.m.h.Log.Info("per-agent upstream stopped: its agent has no session left", "server", e.key.server, "agent", strings.TrimPrefix(e.key.agent, "\x00"))
	}
}

// closeAgents stops every per_agent instance.
func (a *agentSet) closeAgents() {
	a.mu.Lock()
	all := slices.Collect(maps.Values(a.by))
	a.by = nil
	a.mu.Unlock()
	for _, e := range all {
		if e.release != nil {
			e.release.Stop()
		}
		if c := e.current(); c != nil {
			_ = c.Close()
		}
	}
}
