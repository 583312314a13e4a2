package gateway

import (
	"encoding/json"

	"github.com/mcpgw/mcpgw/registry/upstream"
	"github.com/mcpgw/mcpgw/registry/wire"
)

// handleUpstream routes what an upstream sends that is not a response: progress to the
// call that asked for it, logging and server-to-client requests to the session the call
// belongs to (on the call's own stream while it runs), resource updates to subscribers.
// owner is the session of a per-session instance, nil for shared connections.
func (g *Gateway) handleUpstream(owner *Session, c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
	switch m.Method {
	case "notifications/progress":
		var p map[string]json.RawMessage
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		var tok string
		if json.Unmarshal(p["progressToken"], &tok) != nil {
			return
		}
		g.progMu.Lock()
		route, ok := g.progress[tok]
		g.progMu.Unlock()
		if !ok || route.call == nil {
			return
		}
		p["progressToken"] = route.token
		params, _ := json.Marshal(p)
		route.call.Push(wire.Notification(m.Method, params))
	case "notifications/message":
		if k := g.relatedCall(owner, c, rel); k != nil {
			if o, ok := k.Owner.(*callOwner); ok && levelAllowed(o.s.level(), m.Params) {
				k.Push(raw)
			}
			return
		}
		if owner != nil && levelAllowed(owner.level(), m.Params) {
			_ = owner.send(raw)
		}
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		for _, s := range g.subscribers(owner, c.Name, p.URI) {
			_ = s.send(raw)
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason,omitempty"`
		}
		if json.Unmarshal(m.Params, &p) != nil {
			return
		}
		g.reqMu.Lock()
		var gwID string
		var pr pendingReq
		for id, r := range g.pendingReqs {
			if r.conn == c && string(r.upstreamID) == string(p.RequestID) {
				gwID, pr = id, r
				delete(g.pendingReqs, id)
				break
			}
		}
		g.reqMu.Unlock()
		if gwID != "" {
			params, _ := json.Marshal(map[string]any{"requestId": gwID, "reason": p.Reason})
			_ = pr.session.send(wire.Notification(m.Method, params))
		}
	default:
		if m.IsRequest() {
			g.serverRequest(owner, c, m, rel)
		}
	}
}

// relatedCall finds the call an unrelated-looking message most likely belongs to: the
// stream it came on, else the newest call in flight on the connection.
func (g *Gateway) relatedCall(owner *Session, c *upstream.Conn, rel *upstream.Call) *upstream.Call {
	if rel != nil {
		if _, ok := rel.Owner.(*callOwner); ok {
			return rel
		}
	}
	calls := c.InFlight()
	for i := len(calls) - 1; i >= 0; i-- {
		if o, ok := calls[i].Owner.(*callOwner); ok && (owner == nil || o.s == owner) {
			return calls[i]
		}
	}
	return nil
}

// serverRequest relays sampling, elicitation and roots requests to the client whose call
// caused them, under a gateway id, and remembers where the answer goes.
func (g *Gateway) serverRequest(owner *Session, c *upstream.Conn, m *wire.Msg, rel *upstream.Call) {
	k := g.relatedCall(owner, c, rel)
	s := owner
	if k != nil {
		s = k.Owner.(*callOwner).s
	}
	if s == nil {
		if m.Method == "roots/list" {
			_ = c.Reply(m.ID, json.RawMessage(`{"roots":[]}`), nil)
			return
		}
		e, _ := json.Marshal(wire.ErrorObject{Code: wire.CodeInternalError, Message: "no client session to relay " + m.Method + " to"})
		_ = c.Reply(m.ID, nil, e)
		return
	}
	capOK := true
	switch m.Method {
	case "sampling/createMessage":
		capOK = s.caps.sampling
	case "elicitation/create":
		capOK = s.caps.elicitation
	case "roots/list":
		capOK = s.caps.roots
	}
	if !capOK {
		e, _ := json.Marshal(wire.ErrorObject{Code: wire.CodeMethodNotFound, Message: "the client did not declare the capability for " + m.Method})
		_ = c.Reply(m.ID, nil, e)
		return
	}
	id := "mcpgw-r" + itoa(g.reqSeq.Add(1))
	g.reqMu.Lock()
	g.pendingReqs[id] = pendingReq{conn: c, upstreamID: append(json.RawMessage(nil), m.ID...), session: s}
	g.reqMu.Unlock()
	msg := wire.Request(wire.Quote(id), m.Method, m.Params)
	if k != nil {
		k.Push(msg)
		return
	}
	if err := s.send(msg); err != nil {
		g.reqMu.Lock()
		delete(g.pendingReqs, id)
		g.reqMu.Unlock()
		e, _ := json.Marshal(wire.ErrorObject{Code: wire.CodeInternalError, Message: "client session has no open stream for " + m.Method})
		_ = c.Reply(m.ID, nil, e)
	}
}

// subscribers are the sessions subscribed to uri on server (for a per-session instance,
// only its own session).
func (g *Gateway) subscribers(owner *Session, server, uri string) []*Session {
	if owner != nil {
		owner.mu.Lock()
		defer owner.mu.Unlock()
		if owner.subs[uri] == server {
			return []*Session{owner}
		}
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*Session
	for _, s := range g.sessions {
		s.mu.Lock()
		if s.subs[uri] == server {
			out = append(out, s)
		}
		s.mu.Unlock()
	}
	return out
}

var levelRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// levelAllowed filters log notifications by the session's level (no level: everything).
func levelAllowed(sessionLevel string, params json.RawMessage) bool {
	if sessionLevel == "" {
		return true
	}
	var p struct {
		Level string `json:"level"`
	}
	_ = json.Unmarshal(params, &p)
	r, ok := levelRank[p.Level]
	return !ok || r >= levelRank[sessionLevel]
}
