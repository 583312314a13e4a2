package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/backroutes"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// upstreamCall is one request the gateway sends to an upstream for a client's request:
// what forward needs, in one value.
type upstreamCall struct {
	dp     *Dispatcher // set by forward
	s      *session.Session
	m      *wire.Msg // the client's request: its id answers
	server string
	method string
	params []byte
	// prog is the call's progress token (zero when the client asked for no progress):
	// its route is made when the call is attached and dropped when the call ends.
	prog progressToken
	out  Outbox
	// isTool: a failure of the path answers as a tool result the model reads, not as a
	// JSON-RPC error.
	isTool bool
	// rewrite, when set, turns the upstream's successful result into the client's (a
	// resources/read of a resource the gateway renamed: uilinks.go; a skill's file,
	// checked against its digest: skills.go); an error answers -32603 with its text
	// instead. nil on tools/call.
	rewrite func(result []byte) ([]byte, error)
	// header are the trace context header fields a streamable HTTP upstream gets with the
	// request (set by the Observer; nil when tracing is off).
	header []upstream.Header
	// via is the connection of a request about a task, chosen for the task (nil: the
	// session's instance of server; mcptaskroute.go).
	via *taskVia
}

// fail answers the client's request with a failure of the path and returns outcome.
func (c *upstreamCall) fail(outcome, text string) string {
	if c.isTool {
		_ = c.out.Reply(wire.Result(c.m.ID, toolError(text)))
	} else {
		_ = c.out.Reply(wire.Error(c.m.ID, wire.CodeInternalError, text, nil))
	}
	return outcome
}

// forward sends a request to one upstream on behalf of a session and relays everything
// that belongs to it back on out. It returns the outcome for metrics.
func (dp *Dispatcher) forward(ctx context.Context, c *upstreamCall) string {
	c.dp = dp
	ctx, end := dp.Obs.startUpstream(ctx, c)
	outcome := dp.forwardCall(ctx, c)
	if end != nil {
		end(outcome)
	}
	return outcome
}

// slot is the instance slot a call holds on a limited instance (nil release: none). A
// multi round-trip gives it back early, before its retry takes it again.
type slot struct{ release func() }

func (sl *slot) giveBack() {
	if sl.release != nil {
		sl.release()
		sl.release = nil
	}
}

// forwardCall is forward under the Observer's context.
func (dp *Dispatcher) forwardCall(ctx context.Context, c *upstreamCall) string {
	defer dp.routes.DropProgress(c.prog.gw)
	timeout := dp.callTimeout(c.server)
	// The call is bounded by a deadline carried on the call, not by a derived context: one
	// context, timer and cancel registration less per call. The client going away still
	// ends the wait through ctx.
	deadline := time.Now().Add(timeout)
	conn, done, err := c.acquire(ctx)
	if err != nil {
		return c.failUpstream("is unavailable", err)
	}
	defer done()
	if o, ok := c.out.(*taskCreateOutbox); ok {
		o.conn = conn // the instance that creates the task (mcptaskroute.go)
		if o.def != nil && !conn.Stateless {
			// A stateless caller's call to a session-revision upstream (mcptaskbridge.go).
			if outcome, done := o.bridgeCall(c); done {
				return outcome
			}
		}
	}
	if conn.Stateless {
		c.params = statelessParams(c.s, c.params)
	}
	var held slot
	defer held.giveBack()
	if l := conn.Limit; l != nil {
		// The instance takes max_concurrency requests at once; the rest wait their turn.
		// Unlimited instances (nil) skip this entirely: the common path stays as cheap.
		waited, outcome := dp.takeSlotFor(ctx, c, l)
		if outcome != "" {
			return outcome
		}
		held.release = l.Release
		if waited {
			// The call's own timeout starts when it reaches the upstream.
			deadline = time.Now().Add(timeout)
		}
	}
	owner := &callOwner{s: c.s, out: c.out, id: c.m.ID, prog: c.prog, dp: dp, header: c.header}
	defer c.s.Inflight.DropCall(string(c.m.ID), owner)
	w := callWait{dp: dp, conn: conn, owner: owner, timeout: timeout}
	k, err := conn.BeginUntil(ctx, deadline, c.method, c.params, owner)
	if err != nil {
		if outcome, ok := w.ended(ctx, c, err, nil); ok {
			return outcome
		}
		return c.failUpstream("is unavailable", err)
	}
	resp, outcome := w.await(ctx, c, k, &held)
	if resp == nil {
		return outcome
	}
	return dp.answer(ctx, c, conn, resp, &held, deadline)
}

// callTimeout is how long a call to server may take.
func (dp *Dispatcher) callTimeout(server string) time.Duration {
	if srv := dp.Reg.Server(server); srv != nil {
		return srv.Def.Timeouts.Call
	}
	return dp.Cfg.Upstream.CallTimeout
}

// takeSlotFor takes an instance slot for c; outcome is set (and the client answered) when
// the call does not get one.
func (dp *Dispatcher) takeSlotFor(ctx context.Context, c *upstreamCall, l *upstream.Limiter) (waited bool, outcome string) {
	waited, err := dp.takeSlot(ctx, c.s, c.m.ID, c.server, l)
	if err == nil {
		return waited, ""
	}
	var busy *upstream.BusyError
	if errors.As(err, &busy) {
		return waited, c.fail("busy", busyText(c.server, busy))
	}
	if ctx.Err() == nil {
		// Cancelled by the client (notifications/cancelled) while queued.
		_ = c.out.Reply(nil)
	}
	return waited, "cancelled"
}

// callWait waits for one upstream call's answer, relaying what comes before it. The call
// itself is passed to its methods, not held: what callWait holds escapes (the connection
// keeps the owner), and the call would go with it.
type callWait struct {
	dp      *Dispatcher
	conn    *upstream.Conn
	owner   *callOwner
	timeout time.Duration
}

// await relays the call's related messages until its response, which it returns; nil
// when the call ended otherwise (the client has been answered; outcome says how). held is
// the call's instance slot, given back when a stateless caller is asked for input.
func (w *callWait) await(ctx context.Context, c *upstreamCall, k *upstream.Call, held *slot) (*wire.Msg, string) {
	for {
		raw, final, err := k.Next(ctx)
		if err != nil {
			if ctx.Err() != nil && !w.owner.cancelled.Load() && resumable(c.out) {
				// The client's connection dropped, but it holds the stream's event ids and
				// may resume it (GET with Last-Event-ID): the call goes on, its events kept.
				ctx = context.WithoutCancel(ctx)
				w.dp.Log.Debug("client connection dropped: the call goes on for a resume", "session", c.s.ID, "server", c.server)
				continue
			}
			if outcome, ok := w.ended(ctx, c, err, k); ok {
				return nil, outcome
			}
			if errors.Is(err, upstream.ErrStreamEnded) && passClose(c.out) {
				w.dp.Log.Info("the upstream ended the call's stream without a result: passed on to the client, the failure kept for its resume", "session", c.s.ID, "server", c.server)
			}
			return nil, c.failUpstream("failed during the call", err)
		}
		if !final {
			if held.release != nil && c.s.Transport == "stateless" && asksClient(raw) {
				// The stateless caller gets the upstream's request as an input round and
				// answers with a retry it may never send. Parked, the call waits on the
				// client, not on the upstream: it gives the instance's slot back, so that
				// an abandoned round does not hold the caller's other requests (which share
				// its gateway-side session and instance) in the queue until the park ends.
				held.giveBack()
			}
			_ = c.out.Related(raw)
			continue
		}
		resp := k.Response()
		if resp == nil {
			return nil, c.fail("error", fmt.Sprintf("upstream %q sent a malformed response", c.server))
		}
		return resp, ""
	}
}

// ended says what became of a call whose wait ended with err: cancelled by the client,
// timed out, or the client went away. k is nil when the request did not get its answer's
// head (Begin has told the upstream already).
func (w *callWait) ended(ctx context.Context, c *upstreamCall, err error, k *upstream.Call) (string, bool) {
	switch {
	case errors.Is(err, context.Canceled) && w.owner.cancelled.Load():
		_ = c.out.Reply(nil)
		return "cancelled", true
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		if k != nil {
			w.conn.Abandon(k, "timeout")
		}
		return c.fail("timeout", fmt.Sprintf("upstream %q did not answer within %s", c.server, w.timeout)), true
	case ctx.Err() != nil:
		if k != nil {
			w.conn.Abandon(k, "client went away")
		}
		return "cancelled", true
	case errors.Is(err, context.Canceled):
		_ = c.out.Reply(nil)
		return "cancelled", true
	}
	return "", false
}

// answer relays the upstream's response to the client.
func (dp *Dispatcher) answer(ctx context.Context, c *upstreamCall, conn *upstream.Conn, resp *wire.Msg, held *slot, deadline time.Time) string {
	if t, ok := c.out.(*taskCreateOutbox); ok {
		t.conn = conn // a task it creates is bound to it (mcptasks.go)
	}
	if resp.Error != nil {
		_ = c.out.Reply(wire.RawError(c.m.ID, wire.DefinedCode(resp.Error, fmt.Sprintf("upstream %q", c.server))))
		return "error"
	}
	if conn.Stateless && c.s.Transport != "stateless" && bytes.Contains(resp.Result, inputRequired) {
		// A stateless upstream needs input from a session client (statelessup.go). The retry
		// takes the instance's slot again.
		held.giveBack()
		return dp.completeInputs(ctx, c, resp.Result, deadline)
	}
	if c.rewrite != nil {
		res, err := c.rewrite(resp.Result)
		if err != nil {
			return c.fail("error", err.Error())
		}
		resp.Result = res
	}
	if pr, ok := c.out.(*reply.Post); ok && len(resp.Result) > largeResult {
		// Written around the upstream's bytes, not copied into a new message first: a
		// large result is held once, not twice.
		_ = pr.ReplyResult(c.m.ID, wire.OneLine(resp.Result))
	} else {
		_ = c.out.Reply(wire.Result(c.m.ID, resp.Result))
	}
	if c.isTool && isErrorResult(resp.Result) {
		return "tool_error"
	}
	return "ok"
}

// takeSlot takes a slot of a limited instance for a session's request, waiting in the
// instance's FIFO queue if none is free. It reports whether the request waited. While it
// waits, notifications/cancelled for the request's id (or the client going away) takes it
// out of the queue: it never reaches the upstream.
func (dp *Dispatcher) takeSlot(ctx context.Context, s *session.Session, id json.RawMessage, server string, l *upstream.Limiter) (bool, error) {
	if l.TryAcquire() {
		dp.Obs.waitedForSlot(server, 0)
		return false, nil
	}
	start := time.Now()
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key := string(id)
	s.Inflight.Wait(key, cancel)
	dp.Obs.queueMoved(server, +1)
	err := l.AcquireAs(qctx, s.Rec.Agent)
	dp.Obs.queueMoved(server, -1)
	s.Inflight.Unwait(key)
	dp.Obs.waitedForSlot(server, time.Since(start))
	if err != nil {
		dp.Log.Debug("request left the queue", "session", s.ID, "server", server, "err", err)
	}
	return true, err
}

// asksClient reports whether a message related to a call is a request to the client
// (sampling, elicitation, roots).
func asksClient(raw []byte) bool {
	var m wire.Msg
	return wire.ParseInto(raw, &m) == nil && m.IsRequest()
}

// passClose passes on to the client an upstream that ended a call's event stream with no
// response and nothing to resume it from (a server polling with SSE but keeping no events):
// directly, its client would see the stream end and resume it. A client whose answer is a
// primed event stream gets the same: its stream ends after the priming event, and the
// call's failure waits in the stream's replay buffer for its resume. Any other client gets
// the failure on its answer as before. It reports whether the close was passed on.
func passClose(out Outbox) bool {
	p, ok := out.(*reply.Post)
	return ok && p.CloseEarly()
}

// resumable reports whether out is an event stream the client can resume.
func resumable(out Outbox) bool {
	p, ok := out.(*reply.Post)
	return ok && p.Resumable()
}

// largeResult is the result size from which an HTTP answer is written around the result's
// bytes instead of being built as one message (small ones are cheaper built: one write).
const largeResult = 64 << 10

// callOwner ties an upstream call to the client request it serves.
type callOwner struct {
	dp        *Dispatcher
	s         *session.Session
	out       Outbox
	id        json.RawMessage
	prog      progressToken
	cancelled atomic.Bool
	header    []upstream.Header // upstream.Call.SetHeaders (upstreamCall.header)
	call      *upstream.Call    // set by Attach before the call enters the session's inflight table
}

// Tenant names the session the call serves (upstream.Owner).
func (o *callOwner) Tenant() string { return o.s.ID }

// Abandon ends the call's wait and cuts off a request still waiting for its answer
// (session.Call): the session ended.
func (o *callOwner) Abandon(reason string) { o.call.Conn().Abandon(o.call, reason) }

// Attach is called by the connection before the request is sent: from then on the call
// can be cancelled by the client, and progress for its token finds it.
func (o *callOwner) Attach(k *upstream.Call) {
	if o.header != nil {
		// Refused fields are not sent (the context still goes in params._meta); the
		// tracer's traceparent and tracestate are well formed.
		_ = k.SetHeaders(o.header)
	}
	o.call = k // before the table, whose lock publishes it to a cancellation
	o.s.Inflight.AddCall(string(o.id), o)
	if o.prog.gw != "" {
		route := backroutes.Progress[*session.Session]{Session: o.s, Token: append(json.RawMessage(nil), o.prog.client...), Call: k}
		o.dp.routes.RouteProgress(o.prog.gw, route)
	}
}

// busyText says why a request found no room in an instance's queue; a refusal at the
// agent's share of the queue names the agent, the server and the key to raise.
func busyText(server string, busy *upstream.BusyError) string {
	if busy.OwnerShare > 0 {
		return fmt.Sprintf("server %q busy: agent %q already has %d calls waiting for this instance, its whole share of the queue (servers.%s.queue.max_per_agent = %d)",
			server, busy.Owner, busy.OwnerWaiting, server, busy.OwnerShare)
	}
	return busy.Error()
}
