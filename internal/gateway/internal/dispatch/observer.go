package dispatch

import (
	"context"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Observer is what watches the request path: tracing (tracing.go) fills its hooks when it
// is on. Its zero value does nothing, so the path calls it unconditionally and pays one
// nil check per hook; no function of the path has a second, watched copy.
type Observer struct {
	// request runs around each client request: it returns the context the request runs
	// in and what to call when it has been answered.
	request func(ctx context.Context, s *session.Session, m *wire.Msg) (context.Context, func())
	// tool is told which tool a tools/call names, once it is known.
	tool func(ctx context.Context, t *registry.Tool)
	// called is told a tool call's outcome.
	called func(ctx context.Context, outcome string)
	// upstream runs around each request sent to an upstream. It returns the context the
	// upstream call runs in, the call to send (its params and header may carry the trace
	// context) and what to call with the call's outcome. The call goes by value: a pointer
	// handed to a hook would put every call on the heap.
	upstream func(ctx context.Context, c upstreamCall) (context.Context, upstreamCall, func(outcome string))
}

func (o *Observer) startRequest(ctx context.Context, s *session.Session, m *wire.Msg) (context.Context, func()) {
	if o.request == nil {
		return ctx, nil
	}
	return o.request(ctx, s, m)
}

func (o *Observer) sawTool(ctx context.Context, t *registry.Tool) {
	if o.tool != nil {
		o.tool(ctx, t)
	}
}

func (o *Observer) toolCalled(ctx context.Context, outcome string) {
	if o.called != nil {
		o.called(ctx, outcome)
	}
}

func (o *Observer) startUpstream(ctx context.Context, c *upstreamCall) (context.Context, func(string)) {
	if o.upstream == nil {
		return ctx, nil
	}
	var end func(string)
	ctx, *c, end = o.upstream(ctx, *c)
	return ctx, end
}
