// Package dispatch answers a client session's requests: the method table, the call path
// to an upstream or a plugin, and the way back from upstreams to the session that asked.
package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/backroutes"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/listform"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/mcptask"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/subscriptions"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/toolrank"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Dispatcher answers clients' requests: the method table (dispatch.go) and the call path
// to an upstream (forward.go, requests.go). Its parts of their own: the lists and the
// gateway's own tools of the thin and search forms (lists, lists.go, handshake.go), the
// call path to a plugin (pluginCalls, plugins.go, pluginresources.go), and the way back
// from upstreams (upstreamRelay, relay.go, clientmsg.go, internal/gateway/internal/backroutes).
type Dispatcher struct {
	Parts
	routes *backroutes.Table[*session.Session]
	lists  toolLists
	pluginCalls
	upstreamRelay
	// tasks are the routes of MCP tasks (SEP-1686) started through the gateway
	// (mcptasks.go).
	tasks *mcptask.Table
	// consents are the sessions told to open a sign-in URL, told again once it was
	// given (upstreamconsent.go).
	consents consentWaiters
}

// Parts are what a Dispatcher works with, set once by its gateway.
type Parts struct {
	// cfg is the config the gateway started with (page size, upstream limits); the
	// running config, which reloads change, is the host's Policy.
	Cfg   *config.Config
	Reg   *registry.Registry
	Store store.Store
	Log   *slog.Logger
	// Busy is the registry's busy polling: every request is counted in it.
	Busy *upstream.BusyPoll
	// Obs watches the request path (observer.go): metrics, audit and tracing, as the
	// gateway joins them; the zero Observer watches nothing.
	Obs Observer
	// Ctx ends when the gateway stops.
	Ctx  context.Context
	Host Host
	// SubAgents counts each agent's resource subscriptions (the listen front counts in
	// it too); nil counts none.
	SubAgents *subscriptions.Agents
}

// Host is what the dispatcher asks of the gateway that holds it.
type Host interface {
	// Policy is the running config.
	Policy() *config.Config
	// Live is the session of an id live in this process, or nil; Sessions are all of them.
	Live(id string) *session.Session
	Sessions() []*session.Session
	// InitializeResult is the gateway's answer to initialize.
	InitializeResult(protocol string, servers []string) json.RawMessage
	// Refusal says why a tool the session's view lacks is refused: reason unknown_tool
	// (no server of the session has it) or hidden_tool (the policy hides it), and the
	// policy's rule.
	Refusal(s *session.Session, tool string) (reason, rule string)
}

// New is a dispatcher of parts; its own tools are named with sep (naming.separator).
func New(p Parts, sep string) *Dispatcher {
	dp := &Dispatcher{Parts: p, routes: backroutes.New[*session.Session]("mcpgw-p"), tasks: mcptask.New(p.Store)}
	// The parts watch through the dispatcher's Obs, which the gateway may set after New.
	obs := &dp.Obs
	describe, search := "mcpgw"+sep+"describe_tools", "mcpgw"+sep+"search_tools"
	dp.lists = toolLists{cfg: p.Cfg, host: p.Host, store: p.Store, log: p.Log, obs: obs,
		describeName: describe, describeDef: listform.DescribeTool(describe),
		searchName: search, ranks: toolrank.New(store.ToolUseOf(p.Store), p.Log)}
	dp.pluginCalls = pluginCalls{cfg: p.Cfg, ctx: p.Ctx, reg: p.Reg, host: p.Host, subAgents: p.SubAgents, routes: dp.routes, obs: obs}
	dp.upstreamRelay = upstreamRelay{routes: dp.routes, tasks: dp.tasks, host: p.Host, log: p.Log, obs: obs}
	return dp
}

// Routes are the ways back from upstreams to sessions: forwarded server-to-client
// requests and progress tokens.
func (dp *Dispatcher) Routes() *backroutes.Table[*session.Session] { return dp.routes }

// Dispatch answers one client request on out.
func (dp *Dispatcher) Dispatch(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	dp.Busy.RequestStarted() // busy polling for an upstream's answer only while this is the one request
	defer dp.Busy.RequestEnded()
	ctx, end := dp.Obs.startRequest(ctx, s, m)
	if end != nil {
		defer end()
	}
	if m.Method != "initialize" && !s.Used.Load() {
		s.Used.Store(true)
	}
	switch m.Method {
	case "ping":
		_ = out.Reply(wire.Result(m.ID, json.RawMessage(`{}`)))
	case "initialize":
		// A second initialize on a live session: answer it again (legacy SSE clients send
		// their first initialize here).
		_ = out.Reply(wire.Result(m.ID, dp.Host.InitializeResult(s.Rec.ProtocolVersion, s.Servers())))
	case "tools/list":
		dp.lists.list(ctx, s, m, "tools", out)
	case "prompts/list":
		dp.lists.list(ctx, s, m, "prompts", out)
	case "resources/list":
		dp.lists.list(ctx, s, m, "resources", out)
	case "resources/templates/list":
		dp.lists.list(ctx, s, m, "resourceTemplates", out)
	case "tools/call":
		dp.callTool(ctx, s, m, out)
	case "prompts/get":
		dp.getPrompt(ctx, s, m, out)
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		dp.resourceRequest(ctx, s, m, out)
	case "skills/list":
		dp.lists.list(ctx, s, m, "skills", out)
	case "skills/get":
		dp.getSkill(ctx, s, m, out)
	case "resources/directory/read":
		dp.directoryRead(ctx, s, m, out)
	case "completion/complete":
		dp.complete(ctx, s, m, out)
	case "logging/setLevel":
		dp.setLevel(ctx, s, m, out)
	case "tasks/get", "tasks/result", "tasks/cancel", "tasks/update":
		dp.taskRequest(ctx, s, m, out)
	case "tasks/list":
		dp.taskList(ctx, s, m, out)
	default:
		_ = out.Reply(wire.Error(m.ID, wire.CodeMethodNotFound, "Method not found: "+m.Method, nil))
	}
}

func (dp *Dispatcher) callTool(ctx context.Context, s *session.Session, m *wire.Msg, out Outbox) {
	p, err := reqparams.Read(m.Params)
	if err != nil || p.Name == "" {
		msg := "Invalid params: tools/call needs a tool name"
		if err != nil {
			msg = "Invalid params: " + err.Error()
		}
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, msg, nil))
		return
	}
	start := time.Now()
	switch p.Name {
	case dp.lists.describeName:
		dp.lists.describeTools(s, m, p.Arguments, out)
		return
	case dp.lists.searchName:
		dp.lists.searchTools(s, m, p.Arguments, out)
		return
	}
	v, t, also := lookupTool(ctx, s, p.Name)
	if t == nil && v.Held(p.Name) {
		dp.heldCall(ctx, s, m, p.Name, out, start)
		return
	}
	if t == nil {
		reason, rule := dp.Host.Refusal(s, p.Name)
		dp.Obs.deniedCall(ctx, denialEvent{s: s, tool: p.Name, reason: reason, rule: rule, duration: time.Since(start)})
		msg := unknownTool(p.Name, also)
		if why := dp.downTool(s, p.Name); why != "" {
			msg += ": " + why
		}
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, msg, nil))
		return
	}
	dp.Obs.sawTool(ctx, t)
	dp.Obs.usedTool(s, t)
	if thinFor(s, v, dp.lists.form) {
		why, err := t.ValidateArgs(p.Arguments)
		if err != nil {
			dp.schemaOnError(ctx, s, m, t, err, out, start)
			return
		}
		if why != "" && t.PluginTool == nil { // a plugin's tool says so itself (callPlugin)
			dp.Obs.unvalidatedCall(t.Server, why)
		}
	}
	if t.PluginTool != nil {
		dp.callPlugin(ctx, s, m, t, p.Arguments, out, start)
		return
	}
	b := make([]byte, 0, 64+len(t.Name)+len(p.Arguments)+len(p.Meta))
	b = append(b, `{"name":`...)
	b = wire.AppendQuote(b, t.Name)
	if len(p.Arguments) > 0 && string(p.Arguments) != "null" {
		b = append(b, `,"arguments":`...)
		b = append(b, p.Arguments...)
	}
	meta, route, err := dp.rewriteMeta(p.Meta)
	if err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: _meta "+err.Error(), nil))
		return
	}
	if meta != nil {
		b = append(b, `,"_meta":`...)
		b = append(b, meta...)
	}
	if b, out, err = withTask(taskCreateOutbox{Outbox: out, dp: dp, s: s, server: t.Server, def: t.Def}, p.Task, b); err != nil {
		_ = out.Reply(wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil))
		return
	}
	if len(p.InputResponses) > 0 || len(p.RequestState) > 0 {
		b = appendInputs(b, &p)
	}
	b = append(b, '}')
	outcome := dp.forward(ctx, &upstreamCall{s: s, m: m, server: t.Server, method: "tools/call", params: b, prog: route, out: out, isTool: true})
	dp.Obs.toolCalled(ctx, callEvent{s: s, t: t, outcome: outcome, duration: time.Since(start)})
	s.Calls.Add(1)
}

// lookupTool finds the tool a call names in s's view, and the view it was found in. A
// resumed client may call before it lists: a name it was listed before the restart is not
// unknown while its server starts, so a miss waits for the servers' start (only that: the
// call starts the own instance it needs, not every server's) and looks again. An MCP App
// calls its server's tools by their own names (catalog's AppTool); also names the
// servers whose tools share such a name when it is ambiguous.
func lookupTool(ctx context.Context, s *session.Session, name string) (v *registry.View, t *registry.Tool, also []string) {
	v = s.View()
	if t = v.Tool(name); t != nil {
		return v, t, nil
	}
	s.Upstreams.AwaitStarted(ctx)
	v = s.View()
	if t = v.Tool(name); t != nil {
		return v, t, nil
	}
	t, also = v.AppTool(name)
	return v, t, also
}

// withTask appends a task-augmented call's task param to b and answers the outbox the
// call's reply goes through: o, which records the task the upstream creates under the
// client's id, or o's own Outbox for a call that makes no task. A stateless caller's reply
// goes through o whatever its params: under the Tasks extension the server, not the call,
// decides to answer with a task. A bad task param is answered with o's own Outbox.
func withTask(o taskCreateOutbox, param json.RawMessage, b []byte) ([]byte, Outbox, error) {
	if len(param) > 0 {
		task, ttl, err := taskParam(param)
		if err != nil {
			return b, o.Outbox, err
		}
		b = append(b, `,"task":`...)
		b = append(b, task...)
		rec := o // on the heap only here: a call without a task allocates nothing for it
		rec.ttl, rec.def = ttl, nil
		return b, &rec, nil
	}
	if o.s.Transport == "stateless" {
		rec := o
		return b, &rec, nil
	}
	return b, o.Outbox, nil
}

// progressToken is a request's progress token twice: the gateway's, which the upstream
// sees, and the client's, which its progress notifications carry back. The zero value is
// no token. The route between them is made in one place, when the upstream call is
// attached (callOwner.Attach), and dropped when the call ends.
type progressToken struct {
	gw     string
	client json.RawMessage // a slice of the client's message, copied into the route
}

// rewriteMeta replaces a progress token with a gateway token, so that tokens of different
// sessions never collide on a shared upstream, and no session can name another's. It
// returns the _meta to forward (rebuilt, members in their order) and the token. A _meta
// that is not an object, or names a member twice, is refused.
func (dp *Dispatcher) rewriteMeta(meta json.RawMessage) (json.RawMessage, progressToken, error) {
	if len(meta) == 0 || string(meta) == "null" {
		return nil, progressToken{}, nil
	}
	var out wire.Object
	var tok progressToken
	err := wire.StrictMembers(meta, func(k, v []byte) error {
		if string(k) == "progressToken" {
			tok = progressToken{gw: dp.routes.ProgressToken(), client: v}
			out.Str("progressToken", tok.gw)
			return nil
		}
		out.Raw(string(k), v)
		return nil
	})
	if err != nil {
		if errors.Is(err, wire.ErrNotObject) {
			err = reqparams.ErrNotObject
		}
		return nil, progressToken{}, err
	}
	return out.Bytes(), tok, nil
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
func toolError(text string) json.RawMessage { return listform.ToolError(text) }

// Outbox is where one request's related messages and its response are written.
type Outbox interface {
	// Related writes a notification or request that belongs to the request.
	Related(msg []byte) error
	// Reply writes the response; nil ends the request without one (after cancellation).
	Reply(msg []byte) error
}

// StreamOutbox sends a request's messages and response on the session's stream (legacy
// SSE, where every response travels on the event stream).
type StreamOutbox struct{ S *session.Session }

// Related sends msg on the session's stream.
func (o StreamOutbox) Related(msg []byte) error { return o.S.Send(msg) }

// Reply sends the response on the session's stream.
func (o StreamOutbox) Reply(msg []byte) error {
	if msg == nil {
		return nil
	}
	return o.S.Send(msg)
}

// ms is a duration in milliseconds (the audit log's unit).
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// callerKey marks a plugin call's context with the session making it.
type callerKey struct{}

// WithCaller records the calling session in a plugin call's context.
func WithCaller(ctx context.Context, s *session.Session) context.Context {
	return context.WithValue(ctx, callerKey{}, s)
}

// Caller is the session a plugin call's context was made for (nil if none).
func Caller(ctx context.Context) *session.Session {
	s, _ := ctx.Value(callerKey{}).(*session.Session)
	return s
}

// DropSession forgets what the dispatcher keeps for a session that ended: the routes back
// to it and its plugin subscriptions. between is run after the routes are forgotten and
// before the subscriptions go (the session's instances are released there).
func (dp *Dispatcher) DropSession(s *session.Session, between func()) {
	dp.routes.ForgetSession(s)
	between()
	dp.pluginCalls.subs.dropSession(s)
}
