package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/subscriptions"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/backroutes"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/plugin"
)

// A plugin's tools are in a session's view like an upstream's (registry.ViewWith generates
// them for the session), and tools/call reaches callPlugin instead of forward: the call runs
// in the gateway, through the plugin's dispatcher, with no network in between.

// pluginCalls run plugin tools and serve plugin resources (pluginresources.go) for the
// dispatcher: the plugin's side of the call path, with what it uses of the dispatcher's
// parts, and the sessions' plugin resource subscriptions.
type pluginCalls struct {
	cfg       *config.Config
	ctx       context.Context // ends when the gateway stops
	reg       *registry.Registry
	host      Host
	subAgents *subscriptions.Agents
	routes    *backroutes.Table[*session.Session]
	obs       *Observer
	// subs are the sessions' plugin resource subscriptions (pluginresources.go).
	subs pluginWatch
}

// pluginCall is one plugin tool call in flight, by the client's request id: a
// notifications/cancelled for that id, or the session ending, cancels its context.
type pluginCall struct {
	cancel    context.CancelFunc
	cancelled atomic.Bool // by the client
}

// Cancel ends the plugin call (session.PluginCall).
func (pc *pluginCall) Cancel() { pc.cancel() }

// callPlugin runs a plugin tool for a session and answers on out.
func (pl *pluginCalls) callPlugin(ctx context.Context, s *session.Session, m *wire.Msg, t *registry.Tool, args json.RawMessage, out Outbox, start time.Time) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The gateway shutting down cancels the call too.
	stop := context.AfterFunc(pl.ctx, cancel)
	defer stop()
	pc := &pluginCall{cancel: cancel}
	key := string(m.ID)
	if !s.Inflight.AddPlugin(key, pc) {
		_ = out.Reply(wire.Result(m.ID, toolError("the session ended")))
		return
	}
	defer s.Inflight.DropPlugin(key, pc)
	// A plugin's result is bounded like an upstream's message: the same setting, named in
	// the refusal.
	o := plugin.CallOptions{Limit: plugin.ResultLimit{Bytes: pl.cfg.Upstream.MaxMessageBytes, Setting: maxMessageSetting},
		Unvalidated: func(reason string) { pl.obs.unvalidatedCall(t.Server, reason) }}
	if s.Caps.Elicitation {
		o.Confirm = func(ctx context.Context, message string) (bool, error) { return pl.confirm(ctx, s, message, out) }
	}
	// The plugin by name; nil when a reload replaced or removed it since the view was
	// built: the call fails as one on a stopped plugin.
	host := pl.reg.PluginFor(t)
	var res *plugin.Result
	err := registry.ErrPluginStopped
	if host != nil {
		res, err = host.Call(WithCaller(ctx, s), t.PluginTool, args, o)
	}
	outcome := "ok"
	switch {
	case pc.cancelled.Load():
		_ = out.Reply(nil)
		outcome = "cancelled"
	case errors.Is(err, registry.ErrPluginTimeout):
		_ = out.Reply(wire.Result(m.ID, toolError(fmt.Sprintf("plugin %q did not answer within %s", t.Server, host.Def.CallTimeout))))
		outcome = "timeout"
	case errors.Is(err, registry.ErrPluginStopped):
		_ = out.Reply(wire.Result(m.ID, toolError(fmt.Sprintf("plugin %q stopped during the call (reloaded or removed); call it again", t.Server))))
		outcome = "unavailable"
	case err != nil && pl.ctx.Err() != nil:
		_ = out.Reply(wire.Result(m.ID, toolError("the gateway is shutting down")))
		outcome = "cancelled"
	case err != nil:
		outcome = "cancelled" // the client went away: no one to answer
	default:
		b, merr := plugin.MarshalResult(res)
		if merr != nil {
			_ = out.Reply(wire.Result(m.ID, toolError(fmt.Sprintf("plugin %q returned a result that cannot be written as JSON: %v", t.Server, merr))))
			outcome = "error"
			break
		}
		// The dispatcher refused what it could tell was too large before writing it; this
		// is the exact check, of what the client would receive.
		if limit := o.Limit.Bytes; limit > 0 && len(b) > limit {
			_ = out.Reply(wire.Result(m.ID, toolError(fmt.Sprintf("plugin %q: the result is %d bytes, larger than %d bytes, the limit %s sets; ask for less or raise %s",
				t.Server, len(b), limit, maxMessageSetting, maxMessageSetting))))
			outcome = "tool_error"
			break
		}
		_ = out.Reply(wire.Result(m.ID, b))
		if res.IsError {
			outcome = "tool_error"
		}
	}
	pl.obs.toolCalled(ctx, callEvent{s: s, t: t, outcome: outcome, duration: time.Since(start)})
	s.Calls.Add(1) // a plugin tool call is a call of the session, as an upstream's is
}

// cancelPlugin cancels the session's plugin call of a client request id; it reports
// whether there was one.
func cancelPlugin(s *session.Session, id json.RawMessage) bool {
	c, ok := s.Inflight.Plugin(string(id))
	if !ok {
		return false
	}
	pc := c.(*pluginCall)
	pc.cancelled.Store(true)
	pc.cancel()
	return true
}

// maxMessageSetting is the setting that bounds an upstream's message and a plugin's result.
const maxMessageSetting = "upstream.max_message_bytes"

// confirmSchema is what an elicitation for a plugin confirmation asks for: one boolean.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm","description":"Yes: go ahead. This cannot be undone."}},"required":["confirm"]}`)

// confirm asks the session's user to approve a plugin's delete or Dangerous action: an
// elicitation/create request on the call's own stream. Only an accept with
// "confirm": true approves; a decline, a cancel, or an error does not.
func (pl *pluginCalls) confirm(ctx context.Context, s *session.Session, message string, out Outbox) (bool, error) {
	wait := make(chan backroutes.Answer, 1)
	id := pl.routes.Ask(backroutes.Request[*session.Session]{Session: s, Wait: wait})
	defer pl.routes.Forget(id)
	params, err := json.Marshal(map[string]any{"message": message, "requestedSchema": confirmSchema})
	if err != nil {
		return false, err
	}
	if err := out.Related(wire.Request(wire.Quote(id), "elicitation/create", params)); err != nil {
		return false, fmt.Errorf("the client cannot be asked: %v", err)
	}
	var a backroutes.Answer
	select {
	case a = <-wait:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	if a.Err != nil {
		return false, fmt.Errorf("the client answered with an error: %s", a.Err.Message)
	}
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(a.Result, &r); err != nil {
		return false, fmt.Errorf("the client's answer is not an elicitation result: %v", err)
	}
	return r.Action == "accept" && r.Content["confirm"] == true, nil
}
