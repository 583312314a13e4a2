package gateway

import (
	"context"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/sessions"
)

// sessionHost is what a session (gateway/internal/session) asks of the gateway.
type sessionHost struct{ g *Gateway }

func (h sessionHost) Instances() *registry.Instances         { return h.g.reg.Instances() }
func (h sessionHost) Save(rec *sessions.Record) error        { return h.g.store.Put(rec) }
func (h sessionHost) Gen() uint64                            { return h.g.reg.Gen() }
func (h sessionHost) ListChanged()                           { h.g.metrics.ListChanged() }
func (h sessionHost) Live(id string) *session.Session        { return h.g.live.liveSession(id) }
func (h sessionHost) InstanceStarted(server string)          { h.g.metrics.InstanceStarted(server) }
func (h sessionHost) Context() context.Context               { return h.g.ctx }
func (h sessionHost) Filter(s *session.Session) *auth.Filter { return h.g.gate.filter(s) }

func (h sessionHost) BuildView(s *session.Session, f *auth.Filter, down map[string]bool, own map[string]*registry.Catalog) *registry.View {
	g := h.g
	return g.reg.ViewWith(s.Servers(), down, viewFilter{f}, own, s.Caps.Elicitation).Shaped(g.nameRule(s.ClientInfo()), g.cfg.Naming.Separator)
}

func (h sessionHost) Relay(s *session.Session, c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
	h.g.calls.handleUpstream(s, c, m, raw, rel)
}

// Closing forgets the routes back to the session, releases its instances and drops its
// plugin subscriptions, in that order.
func (h sessionHost) Closing(s *session.Session) {
	h.g.calls.routes.ForgetSession(s)
	h.g.reg.Instances().ReleaseOwner(s, nil)
	h.g.pluginSubs.dropSession(s)
}
