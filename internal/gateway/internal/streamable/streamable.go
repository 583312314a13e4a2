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

// Host is what the transport needs of the gateway, for sessions it knows only as S: one
// question to admit a request (intake.Admitter: origin, caller, session, version, in
// that order, the transport's own checks read in at their places), then the serving
// calls. Methods that take a ResponseWriter write the refusal themselves when they
// return false.
type Host[S comparable] interface {
	intake.Admitter[S]
	// Stateless serves a POST of the stateless revision (no session: its own front).
	Stateless(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg)
	// Initialize opens a session for an initialize request and answers it.
	Initialize(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg)
	// Deliver takes a client's response or notification for s.
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
	// Body bounds a POST's body (http.max_body_bytes; the socket's own bound for a
	// trusted socket peer).
	Body intake.BodyLimit
	// Queue is a GET stream's queue (http.stream_queue).
	Queue int
	// Versions are the session revisions served; AllVersions are what server/discover without
	// the stateless revision's header is told is served.
	Versions, AllVersions []string
	// StatelessVersion is the stateless revision the stateless front serves.
	StatelessVersion string
}

// ServeHTTP is the /mcp endpoint. Every request is admitted first (its origin checked
// before its method), then served.
func (sv *Server[S]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		sv.servePost(w, r)
	case http.MethodGet:
		sv.serveGet(w, r)
	case http.MethodDelete:
		sv.serveDelete(w, r)
	default:
		sv.Host.Admit(w, r, otherMethod{})
	}
}

// otherMethod is the reading of a method /mcp does not serve: once its origin is checked,
// 405.
type otherMethod struct{}

func (otherMethod) Head(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Allow", "GET, POST, DELETE")
	reply.Error(w, http.StatusMethodNotAllowed, wire.CodeConnection, "Method not allowed")
	return false
}

func (otherMethod) Read(http.ResponseWriter, *http.Request, *auth.Identity) (intake.Want, bool) {
	return intake.Want{}, false
}

func (otherMethod) Accepts(http.ResponseWriter, *http.Request, string) bool { return false }

// checkVersionHeader enforces MCP-Protocol-Version. stateless reports a POST whose header
// names no session revision: the stateless front serves 2026-07-28 and answers any other
// value with -32022 and the versions it serves.
func (sv *Server[S]) checkVersionHeader(w http.ResponseWriter, r *http.Request) (stateless bool, ok bool) {
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

// post is a POST's reading: its body is read once its caller is admitted, and what it
// carries decides the session it needs.
type post[S comparable] struct {
	sv *Server[S]
	// batch is set for a JSON array body, whose messages are raws.
	batch bool
	raws  []json.RawMessage
	// route is what serves a single message: a session's call or delivery, or, needing
	// no session, the stateless front or initialize.
	route int
	m     wire.Msg
}

const (
	routeSession = iota
	routeStateless
	routeInitialize
)

func (p *post[S]) Head(http.ResponseWriter, *http.Request) bool { return true }

func (p *post[S]) Read(w http.ResponseWriter, r *http.Request, _ *auth.Identity) (intake.Want, bool) {
	sv := p.sv
	body, ok := sv.Body.Read(w, r)
	if !ok {
		return intake.Want{}, false
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &p.raws); err != nil {
			reply.JSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeParseError, "Parse error: "+err.Error(), nil))
			return intake.Want{}, false
		}
		// A batch may name no session: it is refused then, after the admission.
		p.batch = true
		return intake.Want{Session: r.Header.Get("Mcp-Session-Id")}, true
	}
	m := &p.m
	if errMsg := intake.ParseClient(trimmed, m); errMsg != nil {
		reply.JSON(w, http.StatusBadRequest, errMsg)
		return intake.Want{}, false
	}
	stateless, ok := sv.checkVersionHeader(w, r)
	if !ok {
		return intake.Want{}, false
	}
	if stateless {
		// The stateless revision: no session, per-request _meta.
		p.route = routeStateless
		return intake.Want{}, true
	}
	if m.Method == "server/discover" {
		// Sent without MCP-Protocol-Version: the versions served, so that the client asks
		// again with the stateless revision or initializes.
		reply.JSON(w, http.StatusBadRequest, wire.Error(m.ID, wire.CodeUnsupportedProtocolVersion,
			"server/discover needs MCP-Protocol-Version "+sv.StatelessVersion+"; session clients use initialize",
			map[string]any{"supported": sv.AllVersions, "requested": auth.HeaderValue(r.Header, "Mcp-Protocol-Version")}))
		return intake.Want{}, false
	}
	if m.Method == "initialize" {
		if !m.IsRequest() {
			reply.JSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeInvalidRequest, "Invalid Request: initialize must be a request", nil))
			return intake.Want{}, false
		}
		p.route = routeInitialize
		return intake.Want{}, true
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		reply.JSON(w, http.StatusBadRequest, wire.Error(m.ID, wire.CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required", nil))
		return intake.Want{}, false
	}
	return intake.Want{Session: sid, MsgID: m.ID, Touch: true}, true
}

// Accepts: a batch takes its session's version as it comes (serveBatch decides).
func (p *post[S]) Accepts(w http.ResponseWriter, r *http.Request, v string) bool {
	return p.batch || sameVersion(w, r, v, p.m.ID)
}

func (sv *Server[S]) servePost(w http.ResponseWriter, r *http.Request) {
	h := sv.Host
	p := &post[S]{sv: sv}
	a, ok := h.Admit(w, r, p)
	if !ok {
		return
	}
	switch {
	case p.batch:
		sv.serveBatch(w, r, p.raws, a)
	case p.route == routeStateless:
		h.Stateless(w, r, a.ID, &p.m)
	case p.route == routeInitialize:
		h.Initialize(w, r, a.ID, &p.m)
	case p.m.IsResponse(), p.m.IsNotification():
		h.Deliver(a.Session, &p.m)
		w.WriteHeader(http.StatusAccepted)
	default:
		h.Call(w, r, a.Session, &p.m)
	}
}

// serveBatch handles a JSON array body: refused on 2025-06-18 and later (batching was
// removed), processed one by one for 2025-03-26 sessions.
func (sv *Server[S]) serveBatch(w http.ResponseWriter, r *http.Request, raws []json.RawMessage, a intake.Admission[S]) {
	h := sv.Host
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
	if a.Has && v == "" {
		v = a.Version
	}
	if !a.Has || v != "2025-03-26" || len(raws) == 0 {
		reply.JSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeInvalidRequest, "Bad Request: JSON-RPC batching is not supported in 2025-06-18 and later", nil))
		return
	}
	s := a.Session
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

// named is the reading of a GET or DELETE: no body; the session its Mcp-Session-Id
// header names. A GET first wants an event stream and a revision it serves.
type named[S comparable] struct {
	sv *Server[S]
}

type getReading[S comparable] struct{ named[S] }

func (n named[S]) Head(http.ResponseWriter, *http.Request) bool { return true }

func (n getReading[S]) Head(w http.ResponseWriter, r *http.Request) bool {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		reply.Error(w, http.StatusNotAcceptable, wire.CodeConnection, "Not Acceptable: the client must accept text/event-stream")
		return false
	}
	_, ok := n.sv.checkVersionHeader(w, r)
	return ok
}

func (n named[S]) Read(w http.ResponseWriter, r *http.Request, _ *auth.Identity) (intake.Want, bool) {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		reply.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required")
		return intake.Want{}, false
	}
	return intake.Want{Session: sid}, true
}

func (n named[S]) Accepts(w http.ResponseWriter, r *http.Request, v string) bool {
	return sameVersion(w, r, v, nil)
}

// sameVersion refuses a request whose MCP-Protocol-Version differs from the version the
// session negotiated (400): a client may not switch revisions under a session. Like no
// header at all, 2025-03-26 is accepted: it is the version the specification has servers
// assume when they cannot tell, and the protocol's conformance suite sends it on sessions
// of every revision. Either way the session's negotiated rules apply, never the header's.
func sameVersion(w http.ResponseWriter, r *http.Request, negotiated string, id json.RawMessage) bool {
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
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
	a, ok := h.Admit(w, r, getReading[S]{named[S]{sv}})
	if !ok {
		return
	}
	s := a.Session
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
	a, ok := sv.Host.Admit(w, r, named[S]{sv})
	if !ok {
		return
	}
	sv.Host.End(a.Session, "client DELETE")
	w.WriteHeader(http.StatusOK)
}
