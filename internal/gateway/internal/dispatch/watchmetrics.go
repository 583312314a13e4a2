package dispatch

import (
	"context"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
)

// MetricsHooks are the Observer hooks (observer.go) that count the request path in m
// (docs/metrics.md): calls and their durations, denials, unvalidated calls, list pages,
// list forms, queue waits, and the messages of the way back that reached no one. A nil m
// counts nothing.
func MetricsHooks(m *telemetry.Metrics) Observer {
	if m == nil {
		return Observer{}
	}
	return Observer{
		called: func(_ context.Context, ev callEvent) {
			m.ObserveCall(ev.s.Rec.Agent, ev.t.Server, ev.t.Name, ev.outcome, ev.duration.Seconds())
		},
		invalid: func(_ context.Context, ev callEvent) {
			m.CountCall(ev.s.Rec.Agent, ev.t.Server, ev.t.Name, ev.outcome)
		},
		denied: func(_ context.Context, ev denialEvent) {
			m.Denied(m.AgentLabel(ev.s.Rec.Agent), ev.reason)
		},
		unvalidated: m.UnvalidatedCall,
		slotWait:    func(server string, waited time.Duration) { m.QueueWait(server).Observe(waited.Seconds()) },
		queueDepth:  func(server string, delta int) { m.QueueDepth(server).Add(float64(delta)) },
		listed: func(s *session.Session, form string, page, full telemetry.ListCount) {
			m.ListPageServed(s.Rec.Agent, form, page, full)
		},
		formChosen: m.Handshake,
		dropped:    m.AnswerDropped,
		unroutable: m.Unroutable,
	}
}
