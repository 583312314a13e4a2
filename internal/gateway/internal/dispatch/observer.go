package dispatch

import (
	"context"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Observer is what watches the request path: the one way the dispatcher tells what
// happened to a request. The dispatcher emits events to it; tracing (tracing.go), metrics
// (watchmetrics.go) and the audit log (watchaudit.go) each fill the hooks they want, and the
// gateway joins them (With). Its zero value does nothing, so the path calls it
// unconditionally and pays one nil check per hook; no function of the path has a second,
// watched copy. Events go by value: a pointer handed to a hook would put every event on
// the heap.
type Observer struct {
	// request runs around each client request: it returns the context the request runs
	// in and what to call when it has been answered.
	request func(ctx context.Context, s *session.Session, m *wire.Msg) (context.Context, func())
	// tool is told which tool a tools/call names, once it is known.
	tool func(ctx context.Context, t *registry.Tool)
	// used is told which tool of its view a session calls, once it is known and before
	// the call runs (the agent's tool use: capped.go).
	used func(s *session.Session, t *registry.Tool)
	// called is told a tool call's end: forwarded to an upstream or run by a plugin.
	called func(ctx context.Context, ev callEvent)
	// invalid is told a thin session's call refused for arguments that fail the tool's
	// full schema (answered with the schema, never forwarded).
	invalid func(ctx context.Context, ev callEvent)
	// denied is told a tool call refused: a name the session's view lacks or a held tool.
	denied func(ctx context.Context, ev denialEvent)
	// unvalidated is told a call passed on with its arguments not checked against the
	// tool's input schema (why: schemabound's reason).
	unvalidated func(server, why string)
	// upstream runs around each request sent to an upstream. It returns the context the
	// upstream call runs in, the call to send (its params and header may carry the trace
	// context) and what to call with the call's outcome. The call goes by value.
	upstream func(ctx context.Context, c upstreamCall) (context.Context, upstreamCall, func(outcome string))
	// slotWait is told how long a request waited for a limited instance's slot (0: one
	// was free), and queueDepth each request joining (+1) and leaving (-1) its queue.
	slotWait   func(server string, waited time.Duration)
	queueDepth func(server string, delta int)
	// listed is told a tools/list page served (page) in form, with the full form's size
	// of the same page (full; zero when it has none).
	listed func(s *session.Session, form string, page, full telemetry.ListCount)
	// formChosen is told the tools/list form decided for a session and view.
	formChosen func(form string)
	// dropped is told a client's answer to a server-to-client request that was dropped
	// (why: unknown, wrong_session).
	dropped func(why string)
	// unroutable is told an upstream message that reached no session (kind: notification,
	// request, overflow).
	unroutable func(server, kind string)
}

// callEvent is one tool call as its watchers see it: who called which tool, how it ended
// and in how long. Rule says why the gateway answered for it ("" when it did not).
type callEvent struct {
	s        *session.Session
	t        *registry.Tool
	outcome  string
	rule     string
	duration time.Duration
}

// denialEvent is one refused tool call: the name called, why (reason: unknown_tool,
// hidden_tool, held_tool; rule: the policy's words) and how long deciding took.
type denialEvent struct {
	s        *session.Session
	tool     string
	reason   string
	rule     string
	duration time.Duration
}

// With is o and p both watching: each event goes to o's hook, then p's. The join is made
// once, when the gateway composes its observer, not per event.
func (o Observer) With(p Observer) Observer {
	return Observer{
		request:     chainRequest(o.request, p.request),
		tool:        join2(o.tool, p.tool),
		used:        join2(o.used, p.used),
		called:      join2(o.called, p.called),
		invalid:     join2(o.invalid, p.invalid),
		denied:      join2(o.denied, p.denied),
		unvalidated: join2(o.unvalidated, p.unvalidated),
		upstream:    chainUpstream(o.upstream, p.upstream),
		slotWait:    join2(o.slotWait, p.slotWait),
		queueDepth:  join2(o.queueDepth, p.queueDepth),
		listed:      join4(o.listed, p.listed),
		formChosen:  join1(o.formChosen, p.formChosen),
		dropped:     join1(o.dropped, p.dropped),
		unroutable:  join2(o.unroutable, p.unroutable),
	}
}

func join1[A any](f, g func(A)) func(A) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(a A) { f(a); g(a) }
}

func join2[A, B any](f, g func(A, B)) func(A, B) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(a A, b B) { f(a, b); g(a, b) }
}

func join4[A, B, C, D any](f, g func(A, B, C, D)) func(A, B, C, D) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(a A, b B, c C, d D) { f(a, b, c, d); g(a, b, c, d) }
}

// chainRequest runs f's request hook, then g's inside it; g's end runs before f's.
func chainRequest(f, g func(context.Context, *session.Session, *wire.Msg) (context.Context, func())) func(context.Context, *session.Session, *wire.Msg) (context.Context, func()) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(ctx context.Context, s *session.Session, m *wire.Msg) (context.Context, func()) {
		ctx, endF := f(ctx, s, m)
		ctx, endG := g(ctx, s, m)
		return ctx, func() {
			if endG != nil {
				endG()
			}
			if endF != nil {
				endF()
			}
		}
	}
}

// chainUpstream runs f's upstream hook, then g's on the call f returned; g's end runs
// before f's.
func chainUpstream(f, g func(context.Context, upstreamCall) (context.Context, upstreamCall, func(string))) func(context.Context, upstreamCall) (context.Context, upstreamCall, func(string)) {
	if f == nil {
		return g
	}
	if g == nil {
		return f
	}
	return func(ctx context.Context, c upstreamCall) (context.Context, upstreamCall, func(string)) {
		ctx, c, endF := f(ctx, c)
		ctx, c, endG := g(ctx, c)
		return ctx, c, func(outcome string) {
			if endG != nil {
				endG(outcome)
			}
			if endF != nil {
				endF(outcome)
			}
		}
	}
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

func (o *Observer) usedTool(s *session.Session, t *registry.Tool) {
	if o.used != nil {
		o.used(s, t)
	}
}

func (o *Observer) toolCalled(ctx context.Context, ev callEvent) {
	if o.called != nil {
		o.called(ctx, ev)
	}
}

func (o *Observer) invalidArgs(ctx context.Context, ev callEvent) {
	if o.invalid != nil {
		o.invalid(ctx, ev)
	}
}

func (o *Observer) deniedCall(ctx context.Context, ev denialEvent) {
	if o.denied != nil {
		o.denied(ctx, ev)
	}
}

func (o *Observer) unvalidatedCall(server, why string) {
	if o.unvalidated != nil {
		o.unvalidated(server, why)
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

func (o *Observer) waitedForSlot(server string, waited time.Duration) {
	if o.slotWait != nil {
		o.slotWait(server, waited)
	}
}

func (o *Observer) queueMoved(server string, delta int) {
	if o.queueDepth != nil {
		o.queueDepth(server, delta)
	}
}

func (o *Observer) listServed(s *session.Session, form string, page, full telemetry.ListCount) {
	if o.listed != nil {
		o.listed(s, form, page, full)
	}
}

func (o *Observer) chose(form string) {
	if o.formChosen != nil {
		o.formChosen(form)
	}
}

func (o *Observer) answerDropped(why string) {
	if o.dropped != nil {
		o.dropped(why)
	}
}

func (o *Observer) unroutableMsg(server, kind string) {
	if o.unroutable != nil {
		o.unroutable(server, kind)
	}
}
