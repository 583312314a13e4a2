package dispatch

import (
	"encoding/json"
	"log/slog"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/backroutes"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/mcptask"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// upstreamRelay is the way back from upstreams to sessions: what an upstream sends that
// is not a response (progress, logging, server-to-client requests, resource updates), and
// the clients' answers to the requests relayed to them (clientmsg.go). It holds the
// dispatcher's routes back, its host (the live sessions) and its observer.
type upstreamRelay struct {
	routes *backroutes.Table[*session.Session]
	tasks  *mcptask.Table // MCP task routes (mcptasks.go)
	host   Host
	log    *slog.Logger
	obs    *Observer
}

// HandleUpstream routes what an upstream sends that is not a response: progress to the
// call that asked for it, logging and server-to-client requests to the session the call
// belongs to (on the call's own stream while it runs), resource updates to subscribers.
// owner is the session of a per-session instance, nil for shared connections.
func (r *upstreamRelay) HandleUpstream(owner *session.Session, c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
	switch m.Method {
	case "notifications/progress":
		r.relayProgress(c, m)
	case "notifications/message":
		k, s := r.relatedCall(owner, c, rel)
		switch {
		case k != nil:
			if reqparams.LevelAllowed(s.Level(), m.Params) && !k.Push(raw) {
				r.unroutable(c, "overflow")
			}
		case s != nil:
			if reqparams.LevelAllowed(s.Level(), m.Params) {
				_ = s.Send(raw)
			}
		default:
			r.unroutable(c, "notification")
		}
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		// A session's own instance said its lists changed (the registry re-reads them):
		// its listen streams are told after the re-read even when nothing they list
		// changed (internal/gateway/listen.go).
		if owner != nil {
			if ls := owner.Listen.Load(); ls != nil {
				ls.Said(m.Method)
			}
		}
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		if ex := registry.ExposedURI(c.Name, p.URI, r.host.Policy().Naming); ex != p.URI {
			// Subscribers know the resource by the gateway's name for it (uilinks.go).
			p.URI, raw = ex, renameUpdated(m, ex)
		}
		for _, s := range r.subscribers(owner, c.Name, p.URI) {
			_ = s.Send(raw)
		}
	case "notifications/tasks/status":
		r.taskStatusNote(c, m, raw)
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason,omitempty"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		gwID, pr := r.routes.Withdrawn(c, p.RequestID)
		if gwID != "" {
			params, _ := json.Marshal(map[string]any{"requestId": gwID, "reason": p.Reason})
			_ = pr.Session.Send(wire.Notification(m.Method, params))
		}
	default:
		if m.IsRequest() {
			r.serverRequest(owner, c, m, rel)
		}
	}
}

// relayProgress sends an upstream's progress notification to the call that asked for it,
// under the progress token the client gave.
func (r *upstreamRelay) relayProgress(c *upstream.Conn, m *wire.Msg) {
	var p map[string]json.RawMessage
	if json.Unmarshal(m.Params, &p) != nil {
		return
	}
	var tok string
	if json.Unmarshal(p["progressToken"], &tok) != nil {
		return
	}
	route, ok := r.routes.ProgressRoute(tok)
	// A token only counts on the connection its call went out on: another upstream (or
	// another tenant's instance) that learnt or guessed it reaches nobody.
	if !ok || route.Call == nil || route.Call.Conn() != c {
		r.unroutable(c, "notification")
		return
	}
	p["progressToken"] = route.Token
	params, _ := json.Marshal(p)
	if !route.Call.Push(wire.Notification(m.Method, params)) {
		r.unroutable(c, "overflow")
	}
}

// relatedCall says whom a message that is not a response belongs to, only where that is
// certain: the call whose stream it came on (streamable HTTP), else the session that owns
// the whole instance (per_session). On a shared stdio or legacy SSE connection nothing ties
// a message to a call, and guessing ("the newest call in flight") once delivered one
// tenant's sampling requests and log lines to another: there it returns nothing, and the
// caller refuses the request or drops the notification. On an instance the session owns,
// every call is that session's, so the message rides the newest call's stream (a client
// without a GET stream still sees it); k is nil when it goes to the session's own stream.
func (r *upstreamRelay) relatedCall(owner *session.Session, c *upstream.Conn, rel *upstream.Call) (k *upstream.Call, s *session.Session) {
	if rel != nil && rel.Owner != nil {
		return rel, r.host.Live(rel.Owner.Tenant())
	}
	if owner == nil {
		return nil, nil
	}
	calls := c.InFlight()
	for i := len(calls) - 1; i >= 0; i-- {
		if o := calls[i].Owner; o != nil && o.Tenant() == owner.ID {
			return calls[i], owner
		}
	}
	return nil, owner
}

// unroutable counts an upstream message that reached no session (docs/security.md).
func (r *upstreamRelay) unroutable(c *upstream.Conn, kind string) {
	r.obs.unroutableMsg(c.Name, kind)
}

// serverRequest relays sampling, elicitation and roots requests to the client whose call
// caused them, under a gateway id, and remembers where the answer goes.
func (r *upstreamRelay) serverRequest(owner *session.Session, c *upstream.Conn, m *wire.Msg, rel *upstream.Call) {
	upID := append(json.RawMessage(nil), m.ID...) // outlives the reader's buffer (answers go off the reader)
	k, s := r.relatedCall(owner, c, rel)
	if s == nil {
		if m.Method == "roots/list" {
			// No client to ask: an empty list tells the upstream nothing about anyone.
			go c.Reply(upID, json.RawMessage(`{"roots":[]}`), nil) // off the reader: the upstream may not be reading
			return
		}
		r.unroutable(c, "request")
		e, _ := json.Marshal(wire.ErrorObject{Code: wire.CodeInternalError,
			Message: "mcpgw cannot tell which client session " + m.Method + " is for on a shared connection; it is not relayed"})
		go c.Reply(upID, nil, e)
		return
	}
	capOK, known := s.Caps.For(m.Method)
	capOK = capOK || !known // a request that needs no declared capability is relayed
	// A stateless caller declares its capabilities per request: the call's own request
	// decides (internal/gateway/mrtr.go, askClient), not the session's first one.
	if !capOK && s.Transport != "stateless" {
		e, _ := json.Marshal(wire.ErrorObject{Code: wire.CodeMethodNotFound, Message: "the client did not declare the capability for " + m.Method})
		go c.Reply(upID, nil, e)
		return
	}
	id := r.routes.Ask(backroutes.Request[*session.Session]{Conn: c, UpstreamID: upID, Session: s})
	msg := wire.Request(wire.Quote(id), m.Method, m.Params)
	var err error
	if k != nil {
		if !k.Push(msg) {
			r.unroutable(c, "overflow")
			err = clientstream.ErrNoStream
		}
	} else {
		err = s.Send(msg)
	}
	if err != nil {
		r.routes.Forget(id)
		e, _ := json.Marshal(wire.ErrorObject{Code: wire.CodeInternalError, Message: "client session has no open stream for " + m.Method})
		go c.Reply(upID, nil, e)
	}
}

// subscribers are the sessions subscribed to uri on server (for a per-session instance,
// only its own session).
func (r *upstreamRelay) subscribers(owner *session.Session, server, uri string) []*session.Session {
	if owner != nil {
		if owner.Subs.Subscribed(uri, server) {
			return []*session.Session{owner}
		}
		return nil
	}
	var out []*session.Session
	for _, s := range r.host.Sessions() {
		if s.Subs.Subscribed(uri, server) {
			out = append(out, s)
		}
	}
	return out
}
