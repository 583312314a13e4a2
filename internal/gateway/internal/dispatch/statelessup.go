package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/backroutes"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// A session client in front of an upstream of the stateless revision (2026-07-28,
// internal/upstream/stateless.go). Such an upstream never sends requests: when a call needs
// sampling, elicitation or roots it answers input_required with inputRequests and a
// requestState. The gateway asks the session client each of them as an ordinary
// server-to-client request on the call's stream, collects the answers, and repeats the
// upstream call with inputResponses and the requestState, until the upstream's result is
// complete (at most maxRounds rounds).

var inputRequired = []byte(`"input_required"`)

const maxRounds = 8

type roundKey struct{}

// completeInputs runs the rounds of an upstream's input_required result for session s.
func (dp *Dispatcher) completeInputs(ctx context.Context, c *upstreamCall, result json.RawMessage, deadline time.Time) string {
	s, m, server, out := c.s, c.m, c.server, c.out
	fail := func(text string) string { return c.fail("error", text) }
	round, _ := ctx.Value(roundKey{}).(int)
	if round >= maxRounds {
		return fail(fmt.Sprintf("upstream %q asked for input more than %d times in one call", server, maxRounds))
	}
	var ir struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  json.RawMessage            `json:"requestState"`
	}
	if json.Unmarshal(result, &ir) != nil || ir.ResultType != "input_required" {
		// Not an input_required result after all ("input_required" in some text): as is.
		_ = out.Reply(wire.Result(m.ID, result))
		return "ok"
	}
	type asked struct {
		key  string
		id   string
		wait chan backroutes.Answer
	}
	var pending []asked
	defer func() {
		for _, a := range pending {
			dp.routes.Forget(a.id)
		}
	}()
	for key, raw := range ir.InputRequests {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(raw, &r) != nil {
			return fail(fmt.Sprintf("upstream %q sent a malformed input request %q", server, key))
		}
		if capOK, _ := s.Caps.For(r.Method); !capOK {
			return fail(fmt.Sprintf("upstream %q needs %s, which the client did not declare", server, r.Method))
		}
		wait := make(chan backroutes.Answer, 1)
		id := dp.routes.Ask(backroutes.Request[*session.Session]{Session: s, Wait: wait})
		pending = append(pending, asked{key: key, id: id, wait: wait})
		if err := out.Related(wire.Request(wire.Quote(id), r.Method, r.Params)); err != nil {
			return fail(fmt.Sprintf("upstream %q needs %s, and the client has no stream to be asked on", server, r.Method))
		}
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	responses := make(map[string]json.RawMessage, len(pending))
	for _, a := range pending {
		select {
		case ans := <-a.wait:
			if ans.Err != nil {
				return fail(fmt.Sprintf("the client refused upstream %q's input request: %s", server, ans.Err.Message))
			}
			responses[a.key] = ans.Result
		case <-timer.C:
			return fail(fmt.Sprintf("the client did not answer upstream %q's input request in time", server))
		case <-ctx.Done():
			_ = out.Reply(nil)
			return "cancelled"
		}
	}
	var p wire.Object
	_ = wire.MembersRaw(reqparams.NonNull(c.params), func(k, v []byte) error {
		if string(k) != "inputResponses" && string(k) != "requestState" {
			p.Raw(string(k), v)
		}
		return nil
	})
	rb, _ := json.Marshal(responses)
	p.Raw("inputResponses", rb)
	p.Raw("requestState", ir.RequestState)
	retry := *c
	retry.params, retry.header = p.Bytes(), nil
	return dp.forward(context.WithValue(ctx, roundKey{}, round+1), &retry)
}

// appendInputs appends a retried request's inputResponses and requestState members.
func appendInputs(b []byte, p *reqparams.Routed) []byte {
	if len(p.InputResponses) > 0 && string(p.InputResponses) != "null" {
		b = append(b, `,"inputResponses":`...)
		b = append(b, p.InputResponses...)
	}
	if len(p.RequestState) > 0 && string(p.RequestState) != "null" {
		b = append(b, `,"requestState":`...)
		b = append(b, p.RequestState...)
	}
	return b
}

// statelessParams adds what a session says once and the stateless revision wants on every
// request: the session's log level (io.modelcontextprotocol/logLevel; without it such an
// upstream logs nothing; a stateless caller's own level filters at the gateway), and the
// session's client capabilities and info. A connection shared by sessions offers the
// gateway's (everything it can relay): without the caller's own on the request, the
// upstream would ask a caller for what it never declared, or run a tool that needs what
// the caller lacks instead of refusing it (-32021).
func statelessParams(s *session.Session, raw []byte) []byte {
	lvl := s.Level()
	if s.Transport == "stateless" {
		lvl = ""
	}
	caps, info := s.Rec.ClientCaps, s.Rec.ClientInfo
	if lvl == "" && len(caps) == 0 && len(info) == 0 {
		return raw
	}
	set := func(meta *wire.Object) {
		if len(caps) > 0 {
			meta.Raw(stateless.MetaClientCaps, caps)
		}
		if len(info) > 0 {
			meta.Raw(stateless.MetaClientInfo, info)
		}
		if lvl != "" {
			meta.Str(stateless.MetaLogLevel, lvl)
		}
	}
	var out, meta wire.Object
	hasMeta := false
	_ = wire.MembersRaw(reqparams.NonNull(raw), func(k, v []byte) error {
		if string(k) == "_meta" {
			hasMeta = true
			_ = wire.MembersRaw(v, func(mk, mv []byte) error {
				switch string(mk) {
				case stateless.MetaLogLevel, stateless.MetaClientCaps, stateless.MetaClientInfo:
				default:
					meta.Raw(string(mk), mv)
				}
				return nil
			})
			set(&meta)
			out.Raw("_meta", meta.Bytes())
			return nil
		}
		out.Raw(string(k), v)
		return nil
	})
	if !hasMeta {
		set(&meta)
		out.Raw("_meta", meta.Bytes())
	}
	return out.Bytes()
}

// watchStateless serves resources/subscribe and unsubscribe for an upstream of the stateless
// revision (it has neither): a subscriptions/listen for the URI on the session's behalf.
// It reports whether it answered.
func (dp *Dispatcher) watchStateless(ctx context.Context, s *session.Session, m *wire.Msg, server, uri string, out Outbox) bool {
	conn, err := s.Upstreams.Conn(ctx, server)
	if err != nil || !conn.Stateless {
		return false
	}
	if stop := s.Subs.TakeWatch(uri); stop != nil {
		stop()
	}
	if m.Method == "resources/subscribe" {
		stop, err := conn.WatchResource(uri)
		if err != nil {
			_ = out.Reply(wire.Error(m.ID, wire.CodeInternalError, fmt.Sprintf("upstream %q: subscribing to %s failed: %v", server, uri, err), nil))
			return true
		}
		if !s.Subs.Watch(uri, stop) {
			stop() // the session ended meanwhile
		}
	}
	_ = out.Reply(wire.Result(m.ID, json.RawMessage(`{}`)))
	return true
}
