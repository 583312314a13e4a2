package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/registry"
)

// This file holds the instance policies beyond shared and per_session (docs/config.md,
// "Instance policies"): per_agent instances shared by one agent's sessions, per_call
// instances that live for one request, and taking per_session instances from a warm pool.

// mode is the instance policy this session uses for server: the agent's override, else
// the server's resolved mode.
func (s *Session) mode(srv *registry.Server) string {
	if o, ok := s.rec.Overrides[srv.Name]; ok && o.Mode != "" {
		return o.Mode
	}
	return srv.Mode
}

// instanceModes is the instance policy of each server of a resolution (plugins have none).
func instanceModes(cfg *config.Config, res *auth.Resolution) map[string]string {
	out := map[string]string{}
	for _, name := range res.Servers {
		d := cfg.Servers[name]
		if d == nil {
			continue
		}
		out[name] = d.ResolvedMode()
		if o := res.Overrides[name]; o.Mode != "" {
			out[name] = o.Mode
		}
	}
	return out
}

// acquire returns the connection that serves one request of this session to server and
// what to run when the request is done: per_call instances are stopped then.
func (s *Session) acquire(ctx context.Context, server string) (*upstream.Conn, func(), error) {
	srv := s.g.reg.Server(server)
	if srv != nil && s.mode(srv) == config.ModePerCall {
		c, err := s.perCall(ctx, srv)
		if err != nil {
			return nil, nil, err
		}
		// Off the caller's path: the answer is written already, the process ends behind it.
		return c, func() { go c.Close() }, nil
	}
	c, err := s.conn(ctx, server)
	return c, func() {}, err
}

// perCall starts a fresh instance for one request, with the session's own environment,
// client capabilities and handler (as a per_session instance).
func (s *Session) perCall(ctx context.Context, srv *registry.Server) (*upstream.Conn, error) {
	n := s.g.instances(srv.Name)
	if n.Load() >= int64(srv.Def.MaxInstances) {
		return nil, instanceLimitError(srv.Name, srv.Def.MaxInstances)
	}
	release, err := s.takeShare(ctx, srv, false)
	if err != nil {
		return nil, err
	}
	o := s.instanceOptions(srv)
	start := time.Now()
	c, err := srv.Spawn(s.g.ctx, o, nil)
	if err != nil {
		release()
		s.g.log.Warn("per-call upstream failed to start", "server", srv.Name, "session", s.ID, "err", err)
		return nil, err
	}
	releaseWhenDone(c, release)
	srv.ObserveStart(time.Since(start))
	s.g.metrics.upstreamStarts.WithLabelValues(srv.Name).Inc()
	n.Add(1)
	go func() { <-c.Done(); n.Add(-1) }()
	return c, nil
}

// instanceOptions are the dial options of an instance of the session's own: the server's,
// with the executor's URL and environment overrides, the session's client capabilities
// and info, and the session as the owner of what the upstream sends.
func (s *Session) instanceOptions(srv *registry.Server) upstream.Options {
	o := srv.Options()
	if ov, ok := s.rec.Overrides[srv.Name]; ok {
		if ov.URL != "" {
			o.URL = ov.URL
		}
		if len(ov.Env) > 0 {
			// Resolution already left out what the server's own env sets, unless the
			// executor's policy lets injection override it: what remains is applied on top.
			env := make(map[string]string, len(o.Env)+len(ov.Env))
			maps.Copy(env, o.Env)
			maps.Copy(env, ov.Env)
			o.Env = env
		}
	}
	if len(s.rec.ClientCaps) > 0 {
		o.ClientCaps = s.rec.ClientCaps
	}
	if len(s.rec.ClientInfo) > 0 {
		o.ClientInfo = s.rec.ClientInfo
	}
	o.Handler = func(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
		s.g.handleUpstream(s, c, m, raw, rel)
	}
	return o
}

// poolable reports whether the session may take server's instances from its pool: a
// session whose executor rewrites the server's URL or injects environment needs an
// instance started with them, which no pooled one is.
func (s *Session) poolable(server string) bool {
	ov := s.rec.Overrides[server]
	return ov.URL == "" && len(ov.Env) == 0
}

// startOwn starts (or takes from the pool) a per_session instance for this session.
func (s *Session) startOwn(srv *registry.Server, onCatalog func(*registry.Catalog)) (*upstream.Conn, error) {
	if p := srv.PoolFor(config.ModePerSession); p != nil && s.poolable(srv.Name) {
		in, err := p.Take(s.g.ctx)
		if err != nil {
			return nil, err
		}
		in.Bind(func(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
			s.g.handleUpstream(s, c, m, raw, rel)
		}, onCatalog)
		return in.Conn, nil
	}
	start := time.Now()
	c, err := srv.Spawn(s.g.ctx, s.instanceOptions(srv), onCatalog)
	if err == nil {
		srv.ObserveStart(time.Since(start))
	}
	return c, err
}

// agentKey names one per_agent instance: the server, the agent, and the executor's
// overrides for the server (sessions of one agent under different executors need
// differently started instances).
type agentKey struct{ server, agent, overrides string }

// agentInst is one per_agent instance and the sessions that use it.
type agentInst struct {
	key      agentKey
	mu       sync.Mutex
	conn     *upstream.Conn
	starting chan struct{} // closed when the start under way ends
	sessions map[*Session]struct{}
	release  *time.Timer // the grace timer, once the last session left
}

// agentInstances are the gateway's per_agent instances.
type agentInstances struct {
	mu sync.Mutex
	m  map[agentKey]*agentInst
}

func (s *Session) agentKey(srv *registry.Server) agentKey {
	agent := s.rec.Agent
	if agent == "" {
		// No agent identity: nobody to share with, so the session has its own.
		agent = "\x00session:" + s.ID
	}
	var ov string
	if o, ok := s.rec.Overrides[srv.Name]; ok && (o.URL != "" || len(o.Env) > 0) {
		b, _ := json.Marshal(struct {
			URL string
			Env map[string]string
		}{o.URL, o.Env})
		ov = string(b)
	}
	return agentKey{srv.Name, agent, ov}
}

// agentConn returns the agent's instance of srv, starting it if none runs, and counts the
// session among its users.
func (s *Session) agentConn(ctx context.Context, srv *registry.Server) (*upstream.Conn, error) {
	g := s.g
	key := s.agentKey(srv)
	g.agents.mu.Lock()
	if g.agents.m == nil {
		g.agents.m = map[agentKey]*agentInst{}
	}
	e := g.agents.m[key]
	if e == nil {
		e = &agentInst{key: key, sessions: map[*Session]struct{}{}}
		g.agents.m[key] = e
	}
	if s.isClosed() {
		g.agents.mu.Unlock()
		return nil, fmt.Errorf("session ended")
	}
	e.sessions[s] = struct{}{}
	if e.release != nil {
		e.release.Stop()
		e.release = nil
	}
	g.agents.mu.Unlock()
	for {
		e.mu.Lock()
		if c := e.conn; c != nil {
			select {
			case <-c.Done():
				e.conn = nil // died: the next user starts another
			default:
				e.mu.Unlock()
				return c, nil
			}
		}
		if ch := e.starting; ch != nil {
			e.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		ch := make(chan struct{})
		e.starting = ch
		e.mu.Unlock()
		c, err := g.startAgent(s, srv, e)
		e.mu.Lock()
		e.conn = c
		e.starting = nil
		close(ch)
		e.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// startAgent starts a per_agent instance: from the pool when the server has one and the
// session's executor changes nothing for it, else with the gateway's own client
// capabilities (the instance serves several sessions, as a shared one does).
func (g *Gateway) startAgent(s *Session, srv *registry.Server, e *agentInst) (*upstream.Conn, error) {
	handler := func(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
		g.handleUpstream(agentOwner(c), c, m, raw, rel)
	}
	onCat := func(cat *registry.Catalog) {
		g.agents.mu.Lock()
		users := slices.Collect(maps.Keys(e.sessions))
		g.agents.mu.Unlock()
		for _, u := range users {
			u.mu.Lock()
			if u.cats == nil {
				u.cats = map[string]*registry.Catalog{}
			}
			u.cats[srv.Name] = cat
			u.downGen++
			u.mu.Unlock()
			g.notifyIfChanged(u)
		}
	}
	n := g.instances(srv.Name)
	if n.Load() >= int64(srv.Def.MaxInstances) {
		return nil, instanceLimitError(srv.Name, srv.Def.MaxInstances)
	}
	p := srv.PoolFor(config.ModePerAgent)
	pooled := p != nil && s.poolable(srv.Name)
	// An agent has one per_agent instance per executor override set: the share bounds
	// how many such sets one agent may run.
	release, err := s.takeShare(g.ctx, srv, pooled)
	if err != nil {
		return nil, err
	}
	var c *upstream.Conn
	if pooled {
		var in *registry.Instance
		if in, err = p.Take(g.ctx); err == nil {
			in.Bind(handler, onCat)
			c = in.Conn
		}
	} else {
		o := s.instanceOptions(srv)
		o.ClientCaps, o.ClientInfo, o.Handler = nil, nil, handler
		start := time.Now()
		if c, err = srv.Spawn(g.ctx, o, onCat); err == nil {
			srv.ObserveStart(time.Since(start))
		}
	}
	if err != nil {
		release()
		g.log.Warn("per-agent upstream failed to start", "server", srv.Name, "agent", s.rec.Agent, "err", err)
		return nil, err
	}
	releaseWhenDone(c, release)
	g.metrics.upstreamStarts.WithLabelValues(srv.Name).Inc()
	n.Add(1)
	go func() { <-c.Done(); n.Add(-1) }()
	g.log.Info("per-agent upstream started", "server", srv.Name, "agent", s.rec.Agent)
	return c, nil
}

// agentOwner is the session whose request an instance shared by several sessions is
// serving, when there is exactly one such session (always so with max_concurrency 1, the
// stdio default); nil otherwise, and then messages are routed as on a shared instance.
func agentOwner(c *upstream.Conn) *Session {
	var owner *Session
	for _, k := range c.InFlight() {
		o, ok := k.Owner.(*callOwner)
		if !ok {
			continue
		}
		if owner != nil && o.s != owner {
			return nil
		}
		owner = o.s
	}
	return owner
}

// releaseAgents takes the session off the per_agent instances of servers keep does not
// admit (nil: all of them, the session ended). An instance whose last session left is
// stopped after the server's agent_grace, unless a session of the agent comes back.
func (g *Gateway) releaseAgents(s *Session, keep func(server string) bool) {
	g.agents.mu.Lock()
	defer g.agents.mu.Unlock()
	for key, e := range g.agents.m {
		if _, ok := e.sessions[s]; !ok || (keep != nil && keep(key.server)) {
			continue
		}
		delete(e.sessions, s)
		if len(e.sessions) > 0 {
			continue
		}
		grace := config.DefaultAgentGrace
		if srv := g.reg.Server(key.server); srv != nil {
			grace = srv.Def.AgentGrace
		}
		e.release = time.AfterFunc(grace, func() { g.stopAgent(e) })
	}
}

// stopAgent stops a per_agent instance that no session used for its grace period.
func (g *Gateway) stopAgent(e *agentInst) {
	g.agents.mu.Lock()
	if len(e.sessions) > 0 || g.agents.m[e.key] != e {
		g.agents.mu.Unlock()
		return
	}
	delete(g.agents.m, e.key)
	g.agents.mu.Unlock()
	e.mu.Lock()
	c, ch := e.conn, e.starting
	e.mu.Unlock()
	if ch != nil {
		<-ch // a start under way ends first, so its instance is stopped too
		e.mu.Lock()
		c = e.conn
		e.mu.Unlock()
	}
	if c != nil {
		_ = c.Close()
		g.log.Info("per-agent upstream stopped: its agent has no session left", "server", e.key.server, "agent", strings.TrimPrefix(e.key.agent, "\x00"))
	}
}

// closeAgents stops every per_agent instance (the gateway is closing).
func (g *Gateway) closeAgents() {
	g.agents.mu.Lock()
	all := slices.Collect(maps.Values(g.agents.m))
	g.agents.m = nil
	g.agents.mu.Unlock()
	for _, e := range all {
		if e.release != nil {
			e.release.Stop()
		}
		e.mu.Lock()
		c := e.conn
		e.mu.Unlock()
		if c != nil {
			_ = c.Close()
		}
	}
}

// poolDoc is servers.<name>.pool as the admin API reads and writes it.
type poolDoc struct {
	Warm        int    `json:"warm,omitempty"`
	Max         int    `json:"max,omitempty"`
	IdleTimeout string `json:"idle_timeout,omitempty"`
}

// instanceDef copies the document's pool and agent_grace into s.
func (d *serverDoc) instanceDef(s *config.ServerDef, where string) []fieldError {
	var errs []fieldError
	if p := d.Pool; p != nil {
		s.Pool = &config.PoolDef{Warm: p.Warm, Max: p.Max}
		var e *fieldError
		if s.Pool.IdleTimeout, e = parseDuration(p.IdleTimeout, where+"pool.idle_timeout"); e != nil {
			errs = append(errs, *e)
		}
	}
	var e *fieldError
	if s.AgentGrace, e = parseDuration(d.AgentGrace, where+"agent_grace"); e != nil {
		errs = append(errs, *e)
	}
	return errs
}

// instanceDoc shows s's pool and agent_grace in the document.
func (d *serverDoc) instanceDoc(s *config.ServerDef) {
	if p := s.Pool; p != nil {
		d.Pool = &poolDoc{Warm: p.Warm, Max: p.Max, IdleTimeout: durationString(p.IdleTimeout)}
	}
	d.AgentGrace = durationString(s.AgentGrace)
}
