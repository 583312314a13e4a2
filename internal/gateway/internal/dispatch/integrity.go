package dispatch

import (
	"fmt"
	"time"

	"context"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Tool integrity is the registry's (internal/registry/integrity.go): it holds back definitions
// that changed or are new, and a session's view never has them. What the gateway adds:
// the pins live in its store, every hold and decision is an audit line and a metric, a
// decision reaches the other replicas on the bus, and a call to a held tool is told why.

// heldCall answers a call to a tool the session would see but integrity holds.
func (dp *Dispatcher) heldCall(ctx context.Context, s *session.Session, m *wire.Msg, name string, out Outbox, start time.Time) {
	text := fmt.Sprintf("Tool %s is held: its definition changed or is new since an admin last approved this server's tools, and it cannot be called until an admin approves it (mcpgw admin UI, Integrity page).", name)
	_ = out.Reply(wire.Result(m.ID, toolError(text)))
	dp.Obs.deniedCall(ctx, denialEvent{s: s, tool: name, reason: "held_tool", rule: "held by integrity", duration: time.Since(start)})
}
