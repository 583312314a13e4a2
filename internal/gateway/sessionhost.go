package gateway

import (
	"context"
	"encoding/json"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/dispatch"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// sessionHost is what a session (internal/gateway/internal/session) asks of the gateway.
type sessionHost struct{ g *Gateway }

func (h sessionHost) Save(rec *store.Record) error           { return h.g.store.Put(rec) }
func (h sessionHost) Gen() uint64                            { return h.g.reg.Gen() }
func (h sessionHost) ListChanged()                           { h.g.metrics.ListChanged() }
func (h sessionHost) Live(id string) *session.Session        { return h.g.live.liveSession(id) }
func (h sessionHost) InstanceStarted(server string)          { h.g.metrics.InstanceStarted(server) }
func (h sessionHost) Context() context.Context               { return h.g.ctx }
func (h sessionHost) Filter(s *session.Session) *auth.Filter { return h.g.gate.filter(s) }

// Instances are the registry's; none for a gateway built without a registry (tests of its
// parts), whose sessions then ask for no connection.
func (h sessionHost) Instances() *registry.Instances {
	if h.g.reg == nil {
		return nil
	}
	return h.g.reg.Instances()
}

func (h sessionHost) BuildView(s *session.Session, f *auth.Filter, down map[string]bool, own map[string]*registry.Catalog) *registry.View {
	g := h.g
	return g.reg.ViewWith(s.Servers(), down, viewFilter{f}, own, s.Caps.Elicitation).Shaped(handshake{g}.nameRule(s.ClientInfo()), g.cfg.Naming.Separator)
}

// Relay is the dispatcher's way back, which the session's instances reach directly.
func (h sessionHost) Relay() session.Relay {
	if h.g.calls == nil {
		return nil
	}
	return h.g.calls
}

// Closing forgets the routes back to the session, releases its instances and drops its
// plugin subscriptions, in that order.
func (h sessionHost) Closing(s *session.Session) {
	h.g.calls.DropSession(s, func() { h.g.reg.Instances().ReleaseOwner(s.Upstreams, nil) })
}

// nameRule is the tool-name rule of the client that sent info in its initialize, from the
// config's client table (docs/config.md, "Clients"); the zero rule when no profile matches
// or the profile asks nothing stricter than the naming rules.
func (hs handshake) nameRule(info json.RawMessage) registry.NameRule {
	cfg := hs.g.policy().cfg
	_, p := cfg.ClientProfile(dispatch.ClientName(info))
	if p == nil {
		return registry.NameRule{}
	}
	r := registry.NameRule{Pattern: p.NameRE()}
	if l := p.NameLimit(cfg.Naming); l < cfg.Naming.MaxLength {
		r.Max = l
	}
	return r
}

// integrityEvent records one hold, approval or rejection.
func (g *Gateway) integrityEvent(ev registry.IntegrityEvent) {
	g.metrics.IntegrityEvent(ev.Server, ev.Action, ev.Reason)
	if g.audit == nil {
		return
	}
	actor := ev.By
	if actor == "" {
		actor = "gateway"
	}
	g.audit.Record(auth.AuditEvent{Kind: "integrity", Agent: "-", Upstream: ev.Server, Tool: ev.Name, Outcome: ev.Action,
		Rule: ev.Reason, Actor: actor, Object: ev.Kind + "/" + ev.Server + "/" + ev.Name})
}

// dispatchHost is what the dispatcher (internal/gateway/internal/dispatch) asks of the gateway.
type dispatchHost struct{ g *Gateway }

func (h dispatchHost) Policy() *config.Config          { return h.g.policy().cfg }
func (h dispatchHost) Live(id string) *session.Session { return h.g.live.liveSession(id) }
func (h dispatchHost) Sessions() []*session.Session    { return h.g.live.all() }
func (h dispatchHost) Refusal(s *session.Session, tool string) (reason, rule string) {
	return h.g.gate.refusal(s, tool)
}
func (h dispatchHost) InitializeResult(protocol string, servers []string) json.RawMessage {
	return handshake(h).initializeResult(protocol, servers)
}
