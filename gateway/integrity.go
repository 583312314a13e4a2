package gateway

import (
	"fmt"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/registry"
)

// Tool integrity is the registry's (registry/integrity.go): it holds back definitions
// that changed or are new, and a session's view never has them. What the gateway adds:
// the pins live in its store, every hold and decision is an audit line and a metric, a
// decision reaches the other replicas on the bus, and a call to a held tool is told why.

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

// heldCall answers a call to a tool the session would see but integrity holds.
func (dp *dispatcher) heldCall(s *session.Session, m *wire.Msg, name string, out outbox, start time.Time) {
	g := dp.g
	text := fmt.Sprintf("Tool %s is held: its definition changed or is new since an admin last approved this server's tools, and it cannot be called until an admin approves it (mcpgw admin UI, Integrity page).", name)
	_ = out.reply(wire.Result(m.ID, toolError(text)))
	g.metrics.Denied(g.metrics.AgentLabel(s.Rec.Agent), "held_tool")
	g.audit.Record(auth.AuditEvent{Kind: "denial", Agent: s.Rec.Agent, Conversation: s.Rec.Conversation, Task: s.Rec.Task,
		Session: s.ID, Tool: name, Outcome: "denied", Rule: "held by integrity", DurationMS: ms(time.Since(start))})
}
