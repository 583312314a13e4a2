package dispatch

import (
	"context"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// AuditHooks are the Observer hooks (observer.go) that write the request path's decisions
// to the audit log a (docs/auth.md): each tool call with its outcome, and each refusal. A
// nil a (the audit log disabled) writes nothing.
func AuditHooks(a *auth.Audit) Observer {
	if a == nil {
		return Observer{}
	}
	call := func(_ context.Context, ev callEvent) {
		s := ev.s
		a.Record(auth.AuditEvent{Kind: "call", Agent: s.Rec.Agent, Conversation: s.Rec.Conversation, Task: s.Rec.Task,
			Session: s.ID, Tool: ev.t.Exposed, Upstream: ev.t.Server, Outcome: ev.outcome, Rule: ev.rule, DurationMS: ms(ev.duration)})
	}
	return Observer{
		called:  call,
		invalid: call,
		denied: func(_ context.Context, ev denialEvent) {
			s := ev.s
			a.Record(auth.AuditEvent{Kind: "denial", Agent: s.Rec.Agent, Conversation: s.Rec.Conversation, Task: s.Rec.Task,
				Session: s.ID, Tool: ev.tool, Outcome: "denied", Rule: ev.rule, DurationMS: ms(ev.duration)})
		},
	}
}
