package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/registry/upstream"
	"github.com/mcpgw/mcpgw/registry/wire"
)

// dispatch answers one client request on out.
func (g *Gateway) dispatch(ctx context.Context, s *Session, m *wire.Msg, out outbox) {
	g.busy.RequestStarted() // busy polling for an upstream's answer only while this is the one request
	defer g.busy.RequestEnded()
	if g.tracing != nil {
		g.dispatchTraced(ctx, s, m, out)
		return
	}
	g.dispatchRequest(ctx, s, m, out)
}

// dispatchRequest is dispatch, inside its span when tracing is on.
func (g *Gateway) dispatchRequest(ctx context.Context, s *Session, m *wire.Msg, out outbox) {
	if m.Method != "initialize" && !s.used.Load() {
		s.used.Store(true)
	}
	switch m.Method {
	case "ping":
		_ = out.reply(wire.Result(m.ID, json.RawMessage(`{}`)))
	case "initialize":
		// A second initialize on a live session: answer it again (legacy SSE clients send
		// their first initialize here).
		_ = out.reply(wire.Result(m.ID, g.initializeResult(s.rec.ProtocolVersion, s.servers())))
	case "tools/list":
		g.list(s, m, "tools", out)
	case "prompts/list":
		g.list(s, m, "prompts", out)
	case "resources/list":
		g.list(s, m, "resources", out)
	case "resources/templates/list":
		g.list(s, m, "resourceTemplates", out)
	case "tools/call":
		g.callTool(ctx, s, m, out)
	case "prompts/get":
		g.getPrompt(ctx, s, m, out)
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		g.resourceRequest(ctx, s, m, out)
	case "completion/complete":
		g.complete(ctx, s, m, out)
	case "logging/setLevel":
		g.setLevel(ctx, s, m, out)
	default:
		_ = out.reply(wire.Error(m.ID, wire.CodeMethodNotFound, "Method not found: "+m.Method, nil))
	}
}

func (g *Gateway) list(s *Session, m *wire.Msg, kind string, out outbox) {
	p, err := readRouted(m.Params)
	if err != nil {
		_ = out.reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
		return
	}
	v := s.View()
	thin := kind == "tools" && g.form(s, v) == "thin"
	var page []byte
	var ok bool
	if thin {
		page, ok = v.ListPage(kind, true, p.Cursor, g.cfg.HTTP.PageSize, g.describeDef)
	} else {
		page, ok = v.ListPage(kind, false, p.Cursor, g.cfg.HTTP.PageSize)
	}
	if !ok {
		_ = out.reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: invalid cursor", nil))
		return
	}
	if kind == "tools" {
		tools, others := listFingerprints(v)
		s.viewMu.Lock()
		s.sentTools = tools
		if s.sentOthers == "" {
			s.sentOthers = others
		}
		s.viewMu.Unlock()
		form := "full"
		if thin {
			form = "thin"
		}
		s.viewMu.Lock()
		s.lastForm = form
		s.viewMu.Unlock()
		g.countList(s, v, form, p.Cursor, page)
	} else {
		_, others := listFingerprints(v)
		s.viewMu.Lock()
		s.sentOthers = others
		s.viewMu.Unlock()
	}
	if pr, ok := out.(*postReply); ok {
		_ = pr.replyResult(m.ID, page)
		return
	}
	_ = out.reply(wire.Result(m.ID, page))
}

func (g *Gateway) callTool(ctx context.Context, s *Session, m *wire.Msg, out outbox) {
	p, err := readRouted(m.Params)
	if err != nil || p.Name == "" {
		msg := "Invalid params: tools/call needs a tool name"
		if err != nil {
			msg = "Invalid params: " + err.Error()
		}
		_ = out.reply(wire.Error(m.ID, wire.CodeInvalidParams, msg, nil))
		return
	}
	start := time.Now()
	if p.Name == g.describeName {
		g.describeTools(s, m, p.Arguments, out)
		return
	}
	v := s.View()
	t := v.Tool(p.Name)
	if t == nil {
		g.denial(s, p.Name, start)
		_ = out.reply(wire.Error(m.ID, wire.CodeInvalidParams, "Unknown tool: "+p.Name, nil))
		return
	}
	if g.tracing != nil {
		traceTool(ctx, t)
	}
	if s.thinFor(v) {
		if err := t.ValidateArgs(p.Arguments); err != nil {
			g.schemaOnError(s, m, t, err, out, start)
			return
		}
	}
	if t.PluginTool != nil {
		g.callPlugin(ctx, s, m, t, p.Arguments, out, start)
		return
	}
	b := make([]byte, 0, 64+len(t.Name)+len(p.Arguments)+len(p.Meta))
	b = append(b, `{"name":`...)
	b = wire.AppendQuote(b, t.Name)
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
		b = append(b, `,"arguments":`...)
		b = append(b, p.Arguments...)
	}
	meta, route, err := g.rewriteMeta(p.Meta)
	if err != nil {
		_ = out.reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: _meta "+err.Error(), nil))
		return
	}
	if meta != nil {
		b = append(b, `,"_meta":`...)
		b = append(b, meta...)
	}
	if len(p.Task) > 0 {
		b = append(b, `,"task":`...)
		b = append(b, p.Task...)
	}
	if len(p.InputResponses) > 0 || len(p.RequestState) > 0 {
		b = appendInputs(b, &p)
	}
	b = append(b, '}')
	outcome := g.forward(ctx, s, m, t.Server, "tools/call", b, route, out, true)
	d := time.Since(start)
	if g.tracing != nil {
		traceOutcome(ctx, outcome)
	}
	g.metrics.observeCall(s.rec.Agent, t, outcome, d.Seconds())
	s.calls.Add(1)
	g.audit.Record(auth.AuditEvent{Kind: "call", Agent: s.rec.Agent, Conversation: s.rec.Conversation, Task: s.rec.Task,
		Session: s.ID, Tool: t.Exposed, Upstream: t.Server, Outcome: outcome, DurationMS: ms(d)})
}

// rewriteMeta replaces a progress token with a gateway token, so that tokens of different
// sessions never collide on a shared upstream, and no session can name another's. It
// returns the _meta to forward (rebuilt, members in their order) and the token. A _meta
// that is not an object, or names a member twice, is refused.
func (g *Gateway) rewriteMeta(meta json.RawMessage) (json.RawMessage, string, error) {
	if len(meta) == 0 || string(meta) == "null" {
		return nil, "", nil
	}
	var out objBuf
	var orig json.RawMessage
	tok := ""
	err := wire.StrictMembers(meta, func(k, v []byte) error {
		if string(k) == "progressToken" {
			orig = v
			tok = g.progPrefix + itoa(g.progSeq.Add(1))
			out.str("progressToken", tok)
			return nil
		}
		out.raw(string(k), v)
		return nil
	})
	if err != nil {
		if errors.Is(err, wire.ErrNotObject) {
			err = errParamsNotObject
		}
		return nil, "", err
	}
	if tok != "" {
		g.progMu.Lock()
		g.progress[tok] = progressRoute{token: append(json.RawMessage(nil), orig...)}
		g.progMu.Unlock()
	}
	return out.bytes(), tok, nil
}

// forward sends a request to one upstream on behalf of a session and relays everything
// that belongs to it back on out. It returns the outcome for metrics.
func (g *Gateway) forward(ctx context.Context, s *Session, m *wire.Msg, server, method string, params []byte, progTok string, out outbox, isTool bool) string {
	if g.tracing != nil {
		return g.forwardTraced(ctx, s, m, server, method, params, progTok, out, isTool)
	}
	return g.forwardCall(ctx, s, m, server, method, params, progTok, out, isTool, "")
}

// forwardCall is forward; traceHdr are the trace context header lines a streamable HTTP
// upstream gets with the request ("" when tracing is off).
func (g *Gateway) forwardCall(ctx context.Context, s *Session, m *wire.Msg, server, method string, params []byte, progTok string, out outbox, isTool bool, traceHdr string) string {
	defer func() {
		if progTok != "" {
			g.progMu.Lock()
			delete(g.progress, progTok)
			g.progMu.Unlock()
		}
	}()
	fail := func(outcome, text string) string {
		if isTool {
			_ = out.reply(wire.Result(m.ID, toolError(text)))
		} else {
			_ = out.reply(wire.Error(m.ID, wire.CodeInternalError, text, nil))
		}
		return outcome
	}
	srv := g.reg.Server(server)
	timeout := g.cfg.Upstream.CallTimeout
	if srv != nil {
		timeout = srv.Def.Timeouts.Call
	}
	// The call is bounded by a deadline carried on the call, not by a derived context: one
	// context, timer and cancel registration less per call. The client going away still
	// ends the wait through ctx.
	deadline := time.Now().Add(timeout)
	conn, done, err := s.acquire(ctx, server)
	if err != nil {
		return fail("unavailable", fmt.Sprintf("upstream %q is unavailable: %v", server, err))
	}
	defer done()
	if conn.Modern {
		params = modernParams(s, params)
	}
	var release func() // the instance slot held, given back early by a multi round-trip
	defer func() {
		if release != nil {
			release()
		}
	}()
	if l := conn.Limit; l != nil {
		// The instance takes max_concurrency requests at once; the rest wait their turn.
		// Unlimited instances (nil) skip this entirely: the common path stays as cheap.
		waited, err := g.takeSlot(ctx, s, m.ID, server, l)
		if err != nil {
			var busy *upstream.BusyError
			if errors.As(err, &busy) {
				return fail("busy", busyText(server, busy))
			}
			if ctx.Err() == nil {
				// Cancelled by the client (notifications/cancelled) while queued.
				_ = out.reply(nil)
			}
			return "cancelled"
		}
		release = l.Release
		if waited {
			// The call's own timeout starts when it reaches the upstream.
			deadline = time.Now().Add(timeout)
		}
	}
	owner := &callOwner{s: s, out: out, id: m.ID, progTok: progTok, g: g, traceHdr: traceHdr}
	key := string(m.ID)
	defer func() {
		s.mu.Lock()
		if k := s.inflight[key]; k != nil && k.Owner == owner {
			delete(s.inflight, key)
		}
		s.mu.Unlock()
	}()
	// ended says what became of a call whose wait ended with err: cancelled by the
	// client, timed out, or the client went away. k is nil when the request did not get
	// its answer's head (Begin has told the upstream already).
	ended := func(err error, k *upstream.Call) (string, bool) {
		switch {
		case errors.Is(err, context.Canceled) && owner.cancelled.Load():
			_ = out.reply(nil)
			return "cancelled", true
		case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			if k != nil {
				conn.Abandon(k, "timeout")
			}
			return fail("timeout", fmt.Sprintf("upstream %q did not answer within %s", server, timeout)), true
		case ctx.Err() != nil:
			if k != nil {
				conn.Abandon(k, "client went away")
			}
			return "cancelled", true
		case errors.Is(err, context.Canceled):
			_ = out.reply(nil)
			return "cancelled", true
		}
		return "", false
	}
	k, err := conn.BeginUntil(ctx, deadline, method, params, owner)
	if err != nil {
		if outcome, ok := ended(err, nil); ok {
			return outcome
		}
		return fail("unavailable", fmt.Sprintf("upstream %q is unavailable: %v", server, err))
	}
	for {
		raw, final, err := k.Next(ctx)
		if err != nil {
			if ctx.Err() != nil && !owner.cancelled.Load() && resumable(out) {
				// The client's connection dropped, but it holds the stream's event ids and
				// may resume it (GET with Last-Event-ID): the call goes on, its events kept.
				ctx = context.WithoutCancel(ctx)
				g.log.Debug("client connection dropped: the call goes on for a resume", "session", s.ID, "server", server)
				continue
			}
			if outcome, ok := ended(err, k); ok {
				return outcome
			}
			return fail("unavailable", fmt.Sprintf("upstream %q failed during the call: %v", server, err))
		}
		if !final {
			_ = out.related(raw)
			continue
		}
		var resp wire.Msg
		if err := wire.ParseInto(raw, &resp); err != nil {
			return fail("error", fmt.Sprintf("upstream %q sent a malformed response", server))
		}
		if resp.Error != nil {
			_ = out.reply(wire.RawError(m.ID, resp.Error))
			return "error"
		}
		if conn.Modern && s.Transport != "stateless" && bytes.Contains(resp.Result, inputRequired) {
			// A stateless upstream needs input from a session client (modernup.go). The
			// retry takes the instance's slot again.
			if release != nil {
				release()
				release = nil
			}
			return g.completeInputs(ctx, s, m, server, method, params, progTok, resp.Result, out, isTool, deadline)
		}
		if pr, ok := out.(*postReply); ok && len(resp.Result) > largeResult {
			// Written around the upstream's bytes, not copied into a new message first: a
			// large result is held once, not twice.
			_ = pr.replyResult(m.ID, wire.OneLine(resp.Result))
		} else {
			_ = out.reply(wire.Result(m.ID, resp.Result))
		}
		if isTool && isErrorResult(resp.Result) {
			return "tool_error"
		}
		return "ok"
	}
}

// takeSlot takes a slot of a limited instance for a session's request, waiting in the
// instance's FIFO queue if none is free. It reports whether the request waited. While it
// waits, notifications/cancelled for the request's id (or the client going away) takes it
// out of the queue: it never reaches the upstream.
func (g *Gateway) takeSlot(ctx context.Context, s *Session, id json.RawMessage, server string, l *upstream.Limiter) (bool, error) {
	wait := g.metrics.queueWait.WithLabelValues(server)
	if l.TryAcquire() {
		wait.Observe(0)
		return false, nil
	}
	start := time.Now()
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key := string(id)
	s.mu.Lock()
	if s.queued == nil {
		s.queued = map[string]context.CancelFunc{}
	}
	s.queued[key] = cancel
	s.mu.Unlock()
	depth := g.metrics.queueDepth.WithLabelValues(server)
	depth.Inc()
	err := l.AcquireAs(qctx, s.rec.Agent)
	depth.Dec()
	s.mu.Lock()
	delete(s.queued, key)
	s.mu.Unlock()
	wait.Observe(time.Since(start).Seconds())
	if err != nil {
		g.log.Debug("request left the queue", "session", s.ID, "server", server, "err", err)
	}
	return true, err
}

// resumable reports whether out is an event stream the client can resume.
func resumable(out outbox) bool {
	p, ok := out.(*postReply)
	return ok && p.resumable()
}

// largeResult is the result size from which an HTTP answer is written around the result's
// bytes instead of being built as one message (small ones are cheaper built: one write).
const largeResult = 64 << 10

// callOwner ties an upstream call to the client request it serves.
type callOwner struct {
	g         *Gateway
	s         *Session
	out       outbox
	id        json.RawMessage
	progTok   string
	cancelled atomic.Bool
	traceHdr  string // upstream.Call.Headers (tracing.go)
}

// Attach is called by the connection before the request is sent: from then on the call
// can be cancelled by the client, and progress for its token finds it.
func (o *callOwner) Attach(k *upstream.Call) {
	if o.traceHdr != "" {
		k.Headers = o.traceHdr
	}
	o.s.mu.Lock()
	o.s.inflight[string(o.id)] = k
	o.s.mu.Unlock()
	if o.progTok != "" {
		g := o.g
		g.progMu.Lock()
		r := g.progress[o.progTok]
		r.session, r.call = o.s, k
		g.progress[o.progTok] = r
		g.progMu.Unlock()
	}
}

var isErrorKey = []byte(`"isError"`)

// isErrorResult reports a result's top-level "isError": true, scanning without decoding.
func isErrorResult(res json.RawMessage) bool {
	if !bytes.Contains(res, isErrorKey) {
		return false
	}
	isErr := false
	_ = wire.MembersRaw(res, func(k, v []byte) error {
		if string(k) == "isError" {
			isErr = string(v) == "true"
		}
		return nil
	})
	return isErr
}

// toolError is a tool result that reports a gateway-side failure to the model.
func toolError(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": text}},
		"isError": true,
	})
	return b
}
