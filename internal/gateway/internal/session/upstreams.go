package session

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The registry owns every upstream instance: a session asks it for a connection, and is
// the registry.Owner of the instances started for it. Here are the session's questions to
// the registry and its answers: what to start its instances with, and where what they
// send and what becomes of them goes.

// Upstreams is the session's side of the registry's upstream instances: it asks them for
// the connection a request goes on (one question, to the registry it holds), and it is
// the registry.Owner of the instances started for the session.
type Upstreams struct {
	s    *Session
	inst *registry.Instances
	// relay is where what the instances send goes: the dispatcher's way back.
	relay Relay
}

// Acquire returns the connection that serves one request of the session to server and
// what to run when the request is done (per_call instances are stopped then).
func (u *Upstreams) Acquire(ctx context.Context, server string) (*upstream.Conn, func(), error) {
	return u.inst.Acquire(ctx, server, u)
}

// Conn returns the connection that serves server for the session beyond one request.
func (u *Upstreams) Conn(ctx context.Context, server string) (*upstream.Conn, error) {
	return u.inst.Conn(ctx, server, u)
}

// AwaitCatalogs waits, before the session's first list (and its first after a server
// joined its set), until its servers' catalogues are those it can call: a server still
// starting is waited for, and the session's own per_session instances are started (as its
// first call would) and listed, each for up to its server's connect timeout. A session
// resumed after a restart or on another replica waits as a new one does.
func (u *Upstreams) AwaitCatalogs(ctx context.Context) {
	s := u.s
	pending := s.Own.Unawaited(s.Servers())
	if len(pending) == 0 {
		return
	}
	u.inst.AwaitCatalogs(ctx, u, pending)
	if ctx.Err() == nil {
		s.Own.Awaited(pending)
	}
}

// AwaitStarted waits until the session's servers have started for the first time (a
// server still starting after a restart), each up to its connect timeout, starting none
// of the session's own instances: a call starts the one it needs.
func (u *Upstreams) AwaitStarted(ctx context.Context) {
	u.inst.AwaitStarted(ctx, u.s.Servers())
}

// Subject is whose grant at a per-user server an identity's calls use: its principal's,
// else its agent's.
func Subject(principal, agent string) string {
	if principal != "" {
		return principal
	}
	if agent != "" {
		return "agent:" + agent
	}
	return ""
}

// InstanceSpec is what the session's instances of server start with: its agent, the
// executor's overrides, its client's capabilities and info (registry.Owner).
func (u *Upstreams) InstanceSpec(server string) registry.OwnerSpec {
	s := u.s
	ov := s.Rec.Overrides[server]
	return registry.OwnerSpec{Session: s.ID, Agent: s.Rec.Agent, Mode: ov.Mode, URL: ov.URL, Env: ov.Env, Runner: ov.Runner,
		ClientCaps: s.Rec.ClientCaps, ClientInfo: s.Rec.ClientInfo, Stateless: s.Transport == "stateless",
		Subject: Subject(s.Rec.Principal, s.Rec.Agent)}
}

// Ended reports that the session closed (registry.Owner).
func (u *Upstreams) Ended() bool { return u.s.IsClosed() }

// HandleUpstream relays what the session's own instances send (registry.Owner).
func (u *Upstreams) HandleUpstream(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
	u.relay.HandleUpstream(u.s, c, m, raw, rel)
}

// HandleShared relays what a per_agent instance sends: to the session whose call it
// serves, when that is one session (registry.Owner).
func (u *Upstreams) HandleShared(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
	var to *Session
	if id := agentOwner(c); id != "" {
		to = u.s.h.Live(id)
	}
	u.relay.HandleUpstream(to, c, m, raw, rel)
}

// InstanceCatalog takes a re-listed catalogue of the session's own instance (own) or its
// agent's into the session's view (registry.Owner).
func (u *Upstreams) InstanceCatalog(server string, cat *registry.Catalog, own bool) {
	s := u.s
	s.Own.SetCatalog(server, cat)
	tools, others := s.NotifyIfChanged()
	if !own {
		return
	}
	if ls := s.Listen.Load(); ls != nil {
		ls.FlushSaid(tools, others)
	}
}

// InstanceUp lists the server's tools again and, before the first call goes out, sets the
// session's log level on the new instance, so that its first log message is not filtered
// (registry.Owner).
func (u *Upstreams) InstanceUp(server string, c *upstream.Conn) {
	s := u.s
	s.SetDown(server, false)
	if lvl := s.Level(); lvl != "" && c.ServerCaps.Logging != nil {
		p, _ := json.Marshal(map[string]string{"level": lvl})
		ctx, cancel := context.WithTimeout(s.h.Context(), 10*time.Second)
		_, _ = c.Request(ctx, "logging/setLevel", p)
		cancel()
	}
}

// InstanceDown takes the server's tools out of the session's view (registry.Owner).
func (u *Upstreams) InstanceDown(server string) { u.s.SetDown(server, true) }

// InstanceStarted counts an instance started for the session (registry.Owner).
func (u *Upstreams) InstanceStarted(server string) { u.s.h.InstanceStarted(server) }

// agentOwner names the session whose request an instance shared by several sessions is
// serving, when there is exactly one such session (always so with max_concurrency 1, the
// stdio default); "" otherwise, and then messages are routed as on a shared instance.
func agentOwner(c *upstream.Conn) string {
	owner := ""
	for _, k := range c.InFlight() {
		if k.Owner == nil {
			continue
		}
		t := k.Owner.Tenant()
		if owner != "" && t != owner {
			return ""
		}
		owner = t
	}
	return owner
}
