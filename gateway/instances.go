package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/registry"
)

// The registry owns every upstream instance (registry/instances.go): a session asks it
// for a connection, and is the registry.Owner of the instances started for it. Here are
// the session's answers to the registry: what to start its instances with, and where
// what they send and what becomes of them goes.

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
// what to run when the request is done (per_call instances are stopped then).
func (s *Session) acquire(ctx context.Context, server string) (*upstream.Conn, func(), error) {
	return s.g.reg.Instances().Acquire(ctx, server, s)
}

// conn returns the connection that serves server for this session beyond one request.
func (s *Session) conn(ctx context.Context, server string) (*upstream.Conn, error) {
	return s.g.reg.Instances().Conn(ctx, server, s)
}

// InstanceSpec is what the session's instances of server start with: its agent, the
// executor's overrides, its client's capabilities and info (registry.Owner).
func (s *Session) InstanceSpec(server string) registry.OwnerSpec {
	ov := s.rec.Overrides[server]
	return registry.OwnerSpec{Session: s.ID, Agent: s.rec.Agent, Mode: ov.Mode, URL: ov.URL, Env: ov.Env,
		ClientCaps: s.rec.ClientCaps, ClientInfo: s.rec.ClientInfo, Stateless: s.Transport == "stateless",
		Subject: grantSubject(s.rec.Principal, s.rec.Agent)}
}

// Ended reports that the session closed (registry.Owner).
func (s *Session) Ended() bool { return s.isClosed() }

// HandleUpstream relays what the session's own instances send (registry.Owner).
func (s *Session) HandleUpstream(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
	s.g.calls.handleUpstream(s, c, m, raw, rel)
}

// HandleShared relays what a per_agent instance sends: to the session whose call it
// serves, when that is one session (registry.Owner).
func (s *Session) HandleShared(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
	s.g.calls.handleUpstream(s.g.live.liveSession(agentOwner(c)), c, m, raw, rel)
}

// InstanceCatalog takes a re-listed catalogue of the session's own instance (own) or its
// agent's into the session's view (registry.Owner).
func (s *Session) InstanceCatalog(server string, cat *registry.Catalog, own bool) {
	s.own.SetCatalog(server, cat)
	tools, others := s.g.notifyIfChanged(s)
	if !own {
		return
	}
	if ls := s.listen.Load(); ls != nil {
		ls.FlushSaid(tools, others)
	}
}

// InstanceUp lists the server's tools again and, before the first call goes out, sets the
// session's log level on the new instance, so that its first log message is not filtered
// (registry.Owner).
func (s *Session) InstanceUp(server string, c *upstream.Conn) {
	s.setDown(server, false)
	if lvl := s.level(); lvl != "" && c.ServerCaps.Logging != nil {
		p, _ := json.Marshal(map[string]string{"level": lvl})
		ctx, cancel := context.WithTimeout(s.g.ctx, 10*time.Second)
		_, _ = c.Request(ctx, "logging/setLevel", p)
		cancel()
	}
}

// InstanceDown takes the server's tools out of the session's view (registry.Owner).
func (s *Session) InstanceDown(server string) { s.setDown(server, true) }

// InstanceStarted counts an instance started for the session (registry.Owner).
func (s *Session) InstanceStarted(server string) {
	s.g.metrics.InstanceStarted(server)
}

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

// ShareError is an instance refused because its agent holds its whole share of the
// server (registry.ShareError).
type ShareError = registry.ShareError

// busyText says why a request found no room in an instance's queue; a refusal at the
// agent's share of the queue names the agent, the server and the key to raise.
func busyText(server string, busy *upstream.BusyError) string {
	if busy.OwnerShare > 0 {
		return fmt.Sprintf("server %q busy: agent %q already has %d calls waiting for this instance, its whole share of the queue (servers.%s.queue.max_per_agent = %d)",
			server, busy.Owner, busy.OwnerWaiting, server, busy.OwnerShare)
	}
	return busy.Error()
}
