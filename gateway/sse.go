package gateway

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// legacyFront is the 2024-11-05 front: the SSE stream and its message endpoint (/sse,
// /message), and the bridge socket's line front (socket.go, line.go), which speaks the
// same one stream per session.
type legacyFront struct{ g *Gateway }

// serveSSE is the legacy HTTP+SSE transport (2024-11-05): GET /sse opens the session's
// event stream and names the POST endpoint in its first event: /message, or /mcp/messages
// for a stream opened as /mcp/sse.
func (lf *legacyFront) serveSSE(w http.ResponseWriter, r *http.Request) {
	g := lf.g
	if !g.checkOrigin(w, r) {
		return
	}
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeHTTPError(w, http.StatusMethodNotAllowed, wire.CodeConnection, "Method not allowed")
		return
	}
	id, ok := g.gate.authenticate(w, r)
	if !ok {
		return
	}
	now := time.Now().UTC()
	rec, _ := g.initialize(&wire.Msg{}, "sse", legacyVersions)
	rec.Created, rec.LastSeen = now, now
	if fail := g.gate.startIdentity(r.Context(), id, &rec); fail != nil {
		g.gate.refuse(w, fail, id)
		return
	}
	s := g.live.newSession(rec)
	st := clientstream.New("", g.cfg.HTTP.StreamQueue)
	s.attach(st)
	if err := g.live.register(s); err != nil {
		writeHTTPError(w, http.StatusServiceUnavailable, wire.CodeInternalError, "Session store unavailable")
		return
	}
	defer g.live.end(s, "event stream closed")
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	endpoint := "/message"
	if r.URL.Path == "/mcp/sse" {
		endpoint = "/mcp/messages"
	}
	_, _ = w.Write([]byte("event: endpoint\ndata: " + endpoint + "?sessionId=" + s.ID + "\n\n"))
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	st.Pump(w, r)
}

// serveMessage takes the POSTs of a legacy SSE session; answers travel on its stream.
func (lf *legacyFront) serveMessage(w http.ResponseWriter, r *http.Request) {
	g := lf.g
	if !g.checkOrigin(w, r) {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeHTTPError(w, http.StatusMethodNotAllowed, wire.CodeConnection, "Method not allowed")
		return
	}
	id, ok := g.gate.authenticate(w, r)
	if !ok {
		return
	}
	sid := r.URL.Query().Get("sessionId")
	if sid == "" {
		sid = r.URL.Query().Get("sessionid")
	}
	if sid == "" {
		writeHTTPError(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: sessionId query parameter is required")
		return
	}
	g.live.mu.RLock()
	s := g.live.sessions[sid]
	g.live.mu.RUnlock()
	if s == nil || s.Transport != "sse" {
		writeJSON(w, http.StatusNotFound, wire.Error(nil, wire.CodeSessionNotFound, "Session not found", nil))
		return
	}
	if !g.gate.continueSession(w, id, s) {
		return
	}
	body, ok := g.streamable.readBody(w, r)
	if !ok {
		return
	}
	var m wire.Msg
	if errMsg := parseClient(bytes.TrimSpace(body), &m); errMsg != nil {
		writeJSON(w, http.StatusBadRequest, errMsg)
		return
	}
	s.touch()
	switch {
	case m.IsResponse():
		g.calls.clientResponse(s, &m)
	case m.IsNotification():
		g.calls.clientNotification(s, &m)
	case m.Method == "initialize":
		rec, errMsg := g.initialize(&m, "sse", legacyVersions)
		if errMsg != nil {
			_ = s.send(errMsg)
			break
		}
		result := g.initializeResult(rec.ProtocolVersion, s.servers())
		s.mu.Lock()
		s.rec.ProtocolVersion, s.rec.ClientCaps, s.rec.ClientInfo = rec.ProtocolVersion, rec.ClientCaps, rec.ClientInfo
		s.mu.Unlock()
		// A view built before initialize knew no client: build it again for this one's
		// name rule (docs/sessions.md, "Names for the client that asked").
		s.viewMu.Lock()
		s.view = nil
		s.viewMu.Unlock()
		fresh := g.live.newSession(s.rec)
		s.caps = fresh.caps
		_ = g.store.Put(&s.rec)
		_ = s.send(wire.Result(m.ID, result))
	default:
		msg := m
		go func() {
			defer g.recovered("legacy message", msg.ID, s.send)
			g.calls.dispatch(context.WithoutCancel(r.Context()), s, &msg, streamOutbox{s})
		}()
	}
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte("Accepted"))
}
