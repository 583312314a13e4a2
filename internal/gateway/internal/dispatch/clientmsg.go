package dispatch

import (
	"encoding/json"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// A client's messages that are not requests: its notifications, and its answers to the
// requests the gateway sent it (server-to-client requests, relayed or the gateway's own).

// ClientNotification handles notifications from a client.
func (dp *Dispatcher) ClientNotification(s *session.Session, m *wire.Msg) {
	switch m.Method {
	case "notifications/cancelled":
		p, err := reqparams.Read(m.Params)
		if err != nil || len(p.RequestID) == 0 {
			return
		}
		o, ok, cancelWait := s.Inflight.Cancelled(string(p.RequestID))
		if !ok {
			if cancelWait != nil {
				cancelWait() // still waiting for a slot: it leaves the queue, unsent
				return
			}
			cancelPlugin(s, p.RequestID)
			return
		}
		co := o.(*callOwner)
		k := co.call
		co.cancelled.Store(true)
		dp.Log.Debug("relaying cancellation upstream", "session", s.ID, "server", k.Conn().Name)
		// Abandon ends the call's wait and cuts off a request still waiting for its
		// answer's head (that request then fails as cancelled, not as a broken upstream).
		k.Conn().Abandon(k, "cancelled by client")
	case "notifications/roots/list_changed":
		conns := dp.Reg.Instances().OwnConns(s.Upstreams)
		// The notification carries nothing an upstream needs (it asks roots/list again):
		// it goes on without the client's params.
		for _, c := range conns {
			_ = c.Notify(dp.Ctx, m.Method, nil)
		}
	case "notifications/initialized", "notifications/progress":
	}
}

// ClientResponse routes a client's answer to a server-to-client request to the upstream
// (or the gateway's own wait) that asked. Only the session that was asked may answer: an
// answer from another changes nothing, so the owner's own answer still completes the call.
func (r *upstreamRelay) ClientResponse(s *session.Session, m *wire.Msg) {
	var id string
	_ = json.Unmarshal(m.ID, &id)
	pr, ok := r.routes.Answered(id, s)
	switch {
	case !ok:
		r.obs.answerDropped("unknown")
		r.log.Debug("response to an unknown request", "session", s.ID, "id", string(m.ID))
		return
	case pr.Session != s:
		r.obs.answerDropped("wrong_session")
		r.log.Warn("dropped a response to a request sent to another session", "session", s.ID,
			"owner_session", pr.Session.ID, "id", string(m.ID))
		return
	}
	if pr.Wait != nil {
		pr.Answer(m.Result, m.Error)
		return
	}
	errObj := m.Error
	if errObj != nil {
		// A client's error without a defined code (go-sdk's for a handler's plain Go error)
		// reaches the upstream as errors reach clients: -32603, the client named.
		errObj = wire.DefinedCode(errObj, "client")
	}
	if err := pr.Conn.Reply(pr.UpstreamID, m.Result, errObj); err != nil {
		r.log.Warn("relaying a client response upstream failed", "server", pr.Conn.Name, "err", err)
	}
}
