// Package legacysse is the 2024-11-05 HTTP+SSE transport: GET /sse opens a session whose
// event stream names its POST endpoint; POSTs to that endpoint carry the session's messages.
package legacysse

import (
	"bytes"
	"context"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Host is the gateway as the legacy transport sees it; S is its session type: one
// question to admit a request (intake.Admitter), then the serving calls. A method given a
// ResponseWriter that returns false has written the answer already.
type Host[S comparable] interface {
	intake.Admitter[S]
	// Open starts a session of id whose event stream is st, registered and stored.
	Open(w http.ResponseWriter, r *http.Request, id *auth.Identity, st *clientstream.Stream) (S, bool)
	// ID is s's session id; End ends s, for why.
	ID(s S) string
	End(s S, why string)
	// Deliver takes a client's response or notification; Initialize answers an initialize
	// on s's stream; Dispatch serves a request, answering on s's stream (it returns at
	// once: the request runs on). Each marks s used.
	Deliver(s S, m *wire.Msg)
	Initialize(s S, m *wire.Msg)
	Dispatch(ctx context.Context, s S, m *wire.Msg)
}

// Server serves the transport for one gateway.
type Server[S comparable] struct {
	Host Host[S]
	// Body bounds a POST's body (http.max_body_bytes; the socket's own bound for a
	// trusted socket peer).
	Body intake.BodyLimit
	// Queue is a session stream's queue (http.stream_queue).
	Queue int
}

// opening is the reading of GET /sse: a GET, naming no session (it opens one).
type opening struct{}

func (opening) Head(w http.ResponseWriter, r *http.Request) bool {
	return onlyMethod(w, r, http.MethodGet)
}

func (opening) Read(http.ResponseWriter, *http.Request, *auth.Identity) (intake.Want, bool) {
	return intake.Want{}, true
}

func (opening) Accepts(http.ResponseWriter, *http.Request, string) bool { return true }

// message is the reading of a POST to the message endpoint: it names its session in
// the query; its body is read once the session is found.
type message struct{}

func (message) Head(w http.ResponseWriter, r *http.Request) bool {
	return onlyMethod(w, r, http.MethodPost)
}

func (message) Read(w http.ResponseWriter, r *http.Request, _ *auth.Identity) (intake.Want, bool) {
	sid := r.URL.Query().Get("sessionId")
	if sid == "" {
		sid = r.URL.Query().Get("sessionid")
	}
	if sid == "" {
		reply.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: sessionId query parameter is required")
		return intake.Want{}, false
	}
	return intake.Want{Session: sid, Transport: "sse"}, true
}

func (message) Accepts(http.ResponseWriter, *http.Request, string) bool { return true }

// onlyMethod answers 405 (with Allow) to a request of another method than method.
func onlyMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	reply.Error(w, http.StatusMethodNotAllowed, wire.CodeConnection, "Method not allowed")
	return false
}

// ServeSSE is GET /sse (or /mcp/sse): it opens a session, names the POST endpoint in the
// stream's first event (/message, or /mcp/messages for a stream opened as /mcp/sse), and
// pumps the session's messages until the client goes; then the session ends.
func (sv *Server[S]) ServeSSE(w http.ResponseWriter, r *http.Request) {
	h := sv.Host
	a, ok := h.Admit(w, r, opening{})
	if !ok {
		return
	}
	st := clientstream.New("", sv.Queue)
	s, ok := h.Open(w, r, a.ID, st)
	if !ok {
		return
	}
	defer h.End(s, "event stream closed")
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	endpoint := "/message"
	if r.URL.Path == "/mcp/sse" {
		endpoint = "/mcp/messages"
	}
	_, _ = w.Write([]byte("event: endpoint\ndata: " + endpoint + "?sessionId=" + h.ID(s) + "\n\n"))
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	st.Pump(w, r)
}

// ServeMessage takes the POSTs of a session; answers travel on its stream, and the POST
// itself is answered 202 Accepted.
func (sv *Server[S]) ServeMessage(w http.ResponseWriter, r *http.Request) {
	h := sv.Host
	a, ok := h.Admit(w, r, message{})
	if !ok {
		return
	}
	s := a.Session
	body, ok := sv.Body.Read(w, r)
	if !ok {
		return
	}
	var m wire.Msg
	if errMsg := intake.ParseClient(bytes.TrimSpace(body), &m); errMsg != nil {
		reply.JSON(w, http.StatusBadRequest, errMsg)
		return
	}
	switch {
	case m.IsResponse(), m.IsNotification():
		h.Deliver(s, &m)
	case m.Method == "initialize":
		h.Initialize(s, &m)
	default:
		h.Dispatch(r.Context(), s, &m)
	}
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte("Accepted"))
}
