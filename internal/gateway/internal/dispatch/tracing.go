package dispatch

import (
	"context"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// TracingHooks are the Observer hooks (observer.go) that trace the request path with t
// (docs/tracing.md): they hand the tracer what it records as plain values. With tracing
// off the gateway has no tracer (nil t): no hooks.
func TracingHooks(t *telemetry.Tracer) Observer {
	if t == nil {
		return Observer{}
	}
	return Observer{
		request: func(ctx context.Context, s *session.Session, m *wire.Msg) (context.Context, func()) {
			return t.StartRequest(ctx, telemetry.Request{Method: m.Method, ID: m.ID, Params: m.Params,
				Session: s.ID, Agent: s.Rec.Agent, Transport: s.Transport})
		},
		tool:   func(ctx context.Context, tl *registry.Tool) { telemetry.Tool(ctx, tl.Exposed, tl.Server, tl.Name) },
		called: func(ctx context.Context, ev callEvent) { telemetry.Outcome(ctx, ev.outcome) },
		upstream: func(ctx context.Context, c upstreamCall) (context.Context, upstreamCall, func(string)) {
			ctx, u, end := t.StartUpstream(ctx, telemetry.Upstream{Method: c.method, Server: c.server, Session: c.s.ID, Params: c.params})
			c.params = u.Params
			if u.Traceparent != "" {
				c.header = []upstream.Header{{Name: "traceparent", Value: u.Traceparent}}
				if u.Tracestate != "" {
					c.header = append(c.header, upstream.Header{Name: "tracestate", Value: u.Tracestate})
				}
			}
			return ctx, c, end
		},
	}
}
