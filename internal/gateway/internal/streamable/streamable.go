// Package streamable is the streamable HTTP transport at /mcp: POST carries client
// messages (and 2025-03-26 batches), GET opens a session's stream, DELETE ends a session.
package streamable

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Host is what the transport needs of the gateway, for sessions it knows only as S.
// Methods that take a ResponseWriter write the refusal themselves when they return false.
type Host[S comparable] interface {
	intake.Gate
	// ReadBody reads a POST's body within the gateway's bounds.
	ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, bool)
	// Stateless serves a POST of the stateless revision (no session: its own front).
	Stateless(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg)
	// Initialize opens a session for an initialize request and answers it.
	Initialize(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg)
	// Session finds the live session sid (answering 404 for msgID otherwise), and
	// MayContinue reports whether id may use it.
	Session(w http.ResponseWriter, sid string, msgID json.RawMessage) (S, bool)
	MayContinue(w http.ResponseWriter, id *auth.Identity, s S) bool
	// Version is the protocol version s negotiated.
	Version(s S) string
	// Touch marks s used; Deliver takes a client's response or notification for s.
	Touch(s S)
	Deliver(s S, m *wire.Msg)
	// Call serves a request of s and writes its answer (a JSON body or an event stream).
	Call(w http.ResponseWriter, r *http.Request, s S, m *wire.Msg)
	// Collect serves a request of a batch and returns its answer (nil: none).
	Collect(ctx context.Context, s S, m *wire.Msg) []byte
	// Attach makes st s's GET stream (false: one is open); Detach undoes it.
	Attach(s S, st *clientstream.Stream) bool
	Detach(s S, st *clientstream.Stream)
	// Resume answers a GET whose Last-Event-ID names a POST event stream of s.
	Resume(w http.ResponseWriter, r *http.Request, s S, last string)
	// End ends s, for why.
	End(s S, why string)
}

// Server serves the transport for one gateway.
type Server[S comparable] struct {
	Host Host[S]
	// Queue is a GET stream's queue (http.stream_queue).
	Queue int
	// Versions are the session revisions served; Newer are what server/discover without
	// the stateless revision's header is told is served.
	Versions, Newer []string
	// NewerVersion is the stateless revision the stateless front serves.
	NewerVersion string
}

// ServeHTTP is the /mcp endpoint.
func (sv *Server[S]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !sv.Host.CheckOrigin(w, r) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		sv.servePost(w, r)
	case http.MethodGet:
		sv.serveGet(w, r)
	case http.MethodDelete:
		sv.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		reply.Error(w, http.StatusMethodNotAllowed, wire.CodeConnection, "Method not allowed")
	}
}

// checkVersionHeader enforces MCP-Protocol-Version. newer reports a POST whose header
// names no session revision: the stateless front serves 2026-07-28 and answers any other
// value with -32022 and the versions it serves.
func (sv *Server[S]) checkVersionHeader(w http.ResponseWriter, r *http.Request) (newer bool, ok bool) {
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
	if v == "" || slices.Contains(sv.Versions, v) {
		return false, true
	}
	if r.Method == http.MethodPost {
		return true, true
	}
	reply.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest,
		"Bad Request: Unsupported protocol version: "+v+" (supported versions: "+strings.Join(sv.Versions, ", ")+")")
	return false, false
}

func (sv *Server[S]) servePost(w http.ResponseWriter, r *http.Request) {
	h := sv.Host
	id, ok := h.Authenticate(w, r)
	if !ok {
		return
	}
	body, ok := h.ReadBody(w, r)
	if !ok {
		return
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		sv.serveBatch(w, r, trimmed, id)
		return
	}
	var m wire.Msg
	if errMsg := intake.ParseClient(trimmed, &m); errMsg != nil {
		reply.JSON(w, http.StatusBadRequest, errMsg)
		return
	}
	newer, ok := sv.checkVersionHeader(w, r)
	if !ok {
		return
	}
	if newer {
		// The stateless revision: no session, per-request _meta.
		h.Stateless(w, r, id, &m)
		return
	}
	if m.Method == "server/discover" {
		// Sent without MCP-Protocol-Version: the versions served, so that the client asks
		// again with the stateless revision or initializes.
		reply.JSON(w, http.StatusBadRequest, wire.Error(m.ID, wire.CodeUnsupportedProtocolVersion,
			"server/discover needs MCP-Protocol-Version "+sv.NewerVersion+"; session clients use initialize",
			map[string]any{"supported": sv.Newer, "requested": auth.HeaderValue(r.Header, "Mcp-Protocol-Version")}))
		return
	}
	if m.Method == "initialize" {
		if !m.IsRequest() {
			reply.JSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeInvalidRequest, "Invalid Request: initialize must be a request", nil))
			return
		}
		h.Initialize(w, r, id, &m)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		reply.JSON(w, http.StatusBadRequest, wire.Error(m.ID, wire.CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required", nil))
		return
	}
	s, ok := h.Session(w, sid, m.ID)
	if !ok || !h.MayContinue(w, id, s) || !sv.sameVersion(w, r, s, m.ID) {
		return
	}
	h.Touch(s)
	switch {
	case m.IsResponse(), m.IsNotification():
		h.Deliver(s, &m)
		w.WriteHeader(http.StatusAccepted)
	default:
		h.Call(w, r, s, &m)
	}
}

// serveBatch handles a JSON array body: refused on 2025-06-18 and later (batching was
// removed), processed one by one for 2025-03-26 sessions.
func (sv *Server[S]) serveBatch(w http.ResponseWriter, r *http.Request, body []byte, id *auth.Identity) {
	h := sv.Host
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		reply.JSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeParseError, "Parse error: "+err.Error(), nil))
		return
	}
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
	var s S
	found := false
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		var ok bool
		if s, ok = h.Session(w, sid, nil); !ok || !h.MayContinue(w, id, s) {
			return
		}
		found = true
		if v == "" {
			v = h.Version(s)
		}
	}
	if !found || v != "2025-03-26" || len(raws) == 0 {
		reply.JSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeInvalidRequest, "Bad Request: JSON-RPC batching is not supported in 2025-06-18 and later", nil))
		return
	}
	var replies [][]byte
	for _, raw := range raws {
		var m wire.Msg
		if err := wire.ParseInto(raw, &m); err != nil || !m.Valid() {
			replies = append(replies, wire.Error(nil, wire.CodeInvalidRequest, "Invalid Request", nil))
			continue
		}
		if m.IsResponse() || m.IsNotification() {
			h.Deliver(s, &m)
			continue
		}
		if msg := h.Collect(r.Context(), s, &m); msg != nil {
			replies = append(replies, msg)
		}
	}
	if len(replies) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	reply.JSON(w, http.StatusOK, append(append([]byte("["), bytes.Join(replies, []byte(","))...), ']'))
}

// sessionFor is the session a GET or DELETE names, if its caller may use it.
func (sv *Server[S]) sessionFor(w http.ResponseWriter, r *http.Request) (S, bool) {
	h := sv.Host
	var none S
	id, ok := h.Authenticate(w, r)
	if !ok {
		return none, false
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		reply.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required")
		return none, false
	}
	s, ok := h.Session(w, sid, nil)
	if !ok || !h.MayContinue(w, id, s) || !sv.sameVersion(w, r, s, nil) {
		return none, false
	}
	return s, true
}

// sameVersion refuses a request whose MCP-Protocol-Version differs from the version the
// session negotiated (400): a client may not switch revisions under a session. Like no
// header at all, 2025-03-26 is accepted: it is the version the specification has servers
// assume when they cannot tell, and the protocol's conformance suite sends it on sessions
// of every revision. Either way the session's negotiated rules apply, never the header's.
func (sv *Server[S]) sameVersion(w http.ResponseWriter, r *http.Request, s S, id json.RawMessage) bool {
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
	negotiated := sv.Host.Version(s)
	if v == "" || v == "2025-03-26" || negotiated == "" || v == negotiated {
		return true
	}
	reply.JSON(w, http.StatusBadRequest, wire.Error(id, wire.CodeInvalidRequest,
		"Bad Request: MCP-Protocol-Version "+v+" differs from the session's negotiated version "+negotiated, nil))
	return false
}

// serveGet opens the session's stream for server-initiated messages.
func (sv *Server[S]) serveGet(w http.ResponseWriter, r *http.Request) {
	h := sv.Host
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		reply.Error(w, http.StatusNotAcceptable, wire.CodeConnection, "Not Acceptable: the client must accept text/event-stream")
		return
	}
	if _, ok := sv.checkVersionHeader(w, r); !ok {
		return
	}
	s, ok := sv.sessionFor(w, r)
	if !ok {
		return
	}
	// A Last-Event-ID of a POST event stream resumes that stream; one of an earlier GET
	// stream ("g-…") reopens the session's GET stream, whose messages sent while none was
	// open waited for it (pending). Anything else is no id of ours.
	if last := r.Header.Get("Last-Event-ID"); last != "" && !strings.HasPrefix(last, "g-") {
		h.Resume(w, r, s, last)
		return
	}
	st := clientstream.New("g", sv.Queue)
	if !h.Attach(s, st) {
		reply.Error(w, http.StatusConflict, wire.CodeConnection, "Conflict: only one GET stream is allowed per session")
		return
	}
	defer h.Detach(s, st)
	defer st.Close()
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	st.Pump(w, r)
}

func (sv *Server[S]) serveDelete(w http.ResponseWriter, r *http.Request) {
	s, ok := sv.sessionFor(w, r)
	if !ok {
		return
	}
	sv.Host.End(s, "client DELETE")
	w.WriteHeader(http.StatusOK)
}
