package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/gateway/internal/resume"
	"github.com/mcpgw/mcpgw/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/sessions"
)

// streamableFront is the streamable HTTP front (/mcp): POST, GET and DELETE, batches,
// the session's GET stream and its resumption (resume.go).
type streamableFront struct {
	g *Gateway
	// resumes bound the replay buffers of every session's POST event streams (resume.go).
	resumes *resume.Store
}

// serveMCP is the streamable HTTP endpoint: POST carries client messages, GET opens the
// session's stream for server-initiated messages, DELETE ends the session.
func (sf *streamableFront) serveMCP(w http.ResponseWriter, r *http.Request) {
	g := sf.g
	if !g.checkOrigin(w, r) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		sf.servePost(w, r)
	case http.MethodGet:
		sf.serveGet(w, r)
	case http.MethodDelete:
		sf.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeHTTPError(w, http.StatusMethodNotAllowed, wire.CodeConnection, "Method not allowed")
	}
}

// presizeBody is the largest declared body length that readBody allocates up front.
const presizeBody = 64 << 10

// readBody reads a request body within the configured limit; false means an error answer
// was written.
func (sf *streamableFront) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	g := sf.g
	limit := g.cfg.HTTP.MaxBodyBytes
	if auth.Trusted(r.Context()) && limit < SocketMaxBody {
		limit = SocketMaxBody
	}
	if r.ContentLength > limit {
		writeHTTPError(w, http.StatusRequestEntityTooLarge, wire.CodeInvalidRequest, "Request body is larger than the limit")
		return nil, false
	}
	// A body that arrives slowly holds its buffer and connection: bounded by body_timeout.
	// The deadline is lifted afterwards, so a long call or stream is not cut off by it.
	rc := http.NewResponseController(w)
	if g.cfg.HTTP.BodyTimeout > 0 {
		_ = rc.SetReadDeadline(time.Now().Add(g.cfg.HTTP.BodyTimeout))
		defer rc.SetReadDeadline(time.Time{})
	}
	var body []byte
	var err error
	if n := r.ContentLength; n >= 0 && n <= presizeBody {
		// net/http's body reader stops at Content-Length: one exact buffer, no growth.
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
	} else if n > presizeBody {
		// A large declared length is not taken on trust: the buffer grows with the bytes
		// that really arrive, so a client that declares 4 MiB and sends nothing holds
		// nothing.
		var b bytes.Buffer
		b.Grow(presizeBody)
		_, err = b.ReadFrom(io.LimitReader(r.Body, n))
		if err == nil && int64(b.Len()) != n {
			err = io.ErrUnexpectedEOF
		}
		body = b.Bytes()
	} else {
		body, err = io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeHTTPError(w, http.StatusRequestEntityTooLarge, wire.CodeInvalidRequest, "Request body is larger than the limit")
			return nil, false
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			writeHTTPError(w, http.StatusRequestTimeout, wire.CodeInvalidRequest, "Request body not received within http.body_timeout")
			return nil, false
		}
		writeHTTPError(w, http.StatusBadRequest, wire.CodeParseError, "Could not read the request body")
		return nil, false
	}
	return body, true
}

// checkVersionHeader enforces MCP-Protocol-Version. newer reports a POST whose header
// names no session revision: the stateless front (stateless.go) serves 2026-07-28 and
// answers any other value with -32022 and the versions it serves.
func checkVersionHeader(w http.ResponseWriter, r *http.Request, id json.RawMessage) (newer bool, ok bool) {
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
	if v == "" || slices.Contains(streamableVersions, v) {
		return false, true
	}
	if r.Method == http.MethodPost {
		return true, true
	}
	writeHTTPError(w, http.StatusBadRequest, wire.CodeInvalidRequest,
		"Bad Request: Unsupported protocol version: "+v+" (supported versions: "+strings.Join(streamableVersions, ", ")+")")
	return false, false
}

// unsupportedNewProtocol answers server/discover sent without MCP-Protocol-Version: the
// versions served, so that the client asks again with 2026-07-28 or initializes.
func unsupportedNewProtocol(w http.ResponseWriter, id json.RawMessage, requested string) {
	writeJSON(w, http.StatusBadRequest, wire.Error(id, wire.CodeUnsupportedProtocolVersion,
		"server/discover needs MCP-Protocol-Version "+stateless.Version+"; session clients use initialize",
		map[string]any{"supported": modernVersions, "requested": requested}))
}

func (sf *streamableFront) servePost(w http.ResponseWriter, r *http.Request) {
	g := sf.g
	id, ok := g.gate.authenticate(w, r)
	if !ok {
		return
	}
	body, ok := sf.readBody(w, r)
	if !ok {
		return
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		sf.serveBatch(w, r, trimmed, id)
		return
	}
	var m wire.Msg
	if errMsg := parseClient(trimmed, &m); errMsg != nil {
		writeJSON(w, http.StatusBadRequest, errMsg)
		return
	}
	newer, ok := checkVersionHeader(w, r, m.ID)
	if !ok {
		return
	}
	if newer {
		// The stateless revision (stateless.go): no session, per-request _meta.
		g.modern.serveModern(w, r, id, &m)
		return
	}
	if m.Method == "server/discover" {
		unsupportedNewProtocol(w, m.ID, auth.HeaderValue(r.Header, "Mcp-Protocol-Version"))
		return
	}
	if m.Method == "initialize" {
		sf.initializeHTTP(w, r, &m, id)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		writeJSON(w, http.StatusBadRequest, wire.Error(m.ID, wire.CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required", nil))
		return
	}
	s := g.live.session(w, sid, m.ID)
	if s == nil {
		return
	}
	if !g.gate.continueSession(w, id, s) {
		return
	}
	if !sameVersion(w, r, s, m.ID) {
		return
	}
	s.touch()
	switch {
	case m.IsResponse():
		g.calls.clientResponse(s, &m)
		w.WriteHeader(http.StatusAccepted)
	case m.IsNotification():
		g.calls.clientNotification(s, &m)
		w.WriteHeader(http.StatusAccepted)
	default:
		out := reply.NewPost(w, r)
		if s.rec.ProtocolVersion >= "2025-11-25" {
			out.Prime(g.streamSeq.Add(1), &s.resumes, sf.resumes)
		}
		g.calls.dispatch(r.Context(), s, &m, postOut{out})
		out.Finish()
	}
}

// serveBatch handles a JSON array body: refused on 2025-06-18 and later (batching was
// removed), processed one by one for 2025-03-26 sessions.
func (sf *streamableFront) serveBatch(w http.ResponseWriter, r *http.Request, body []byte, id *auth.Identity) {
	g := sf.g
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		writeJSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeParseError, "Parse error: "+err.Error(), nil))
		return
	}
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
	var s *Session
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		if s = g.live.session(w, sid, nil); s == nil {
			return
		}
		if !g.gate.continueSession(w, id, s) {
			return
		}
		if v == "" {
			v = s.rec.ProtocolVersion
		}
	}
	if s == nil || v != "2025-03-26" || len(raws) == 0 {
		writeJSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeInvalidRequest, "Bad Request: JSON-RPC batching is not supported in 2025-06-18 and later", nil))
		return
	}
	var replies [][]byte
	for _, raw := range raws {
		var m wire.Msg
		if err := wire.ParseInto(raw, &m); err != nil || !m.Valid() {
			replies = append(replies, wire.Error(nil, wire.CodeInvalidRequest, "Invalid Request", nil))
			continue
		}
		switch {
		case m.IsResponse():
			g.calls.clientResponse(s, &m)
		case m.IsNotification():
			g.calls.clientNotification(s, &m)
		default:
			out := &collectReply{}
			g.calls.dispatch(r.Context(), s, &m, out)
			if out.msg != nil {
				replies = append(replies, out.msg)
			}
		}
	}
	if len(replies) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, append(append([]byte("["), bytes.Join(replies, []byte(","))...), ']'))
}

// collectReply keeps the response (batch mode); related messages go to the session stream.
type collectReply struct {
	s   *Session
	msg []byte
}

func (c *collectReply) related(msg []byte) error {
	if c.s != nil {
		return c.s.send(msg)
	}
	return nil
}
func (c *collectReply) reply(msg []byte) error { c.msg = msg; return nil }

// initializeHTTP creates a session for an initialize request.
func (sf *streamableFront) initializeHTTP(w http.ResponseWriter, r *http.Request, m *wire.Msg, id *auth.Identity) {
	g := sf.g
	if !m.IsRequest() {
		writeJSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeInvalidRequest, "Invalid Request: initialize must be a request", nil))
		return
	}
	rec, errMsg := g.initialize(m, "streamable", streamableVersions)
	if errMsg != nil {
		writeJSON(w, http.StatusBadRequest, errMsg)
		return
	}
	if fail := g.gate.startIdentity(r.Context(), id, &rec); fail != nil {
		g.gate.refuse(w, fail, id)
		return
	}
	s, result, err := g.openSession(rec, auth.HeaderValue(r.Header, "X-Mcp-Handshake"))
	if err != nil {
		writeHTTPError(w, http.StatusServiceUnavailable, wire.CodeInternalError, "Session store unavailable")
		return
	}
	w.Header().Set("Mcp-Session-Id", s.ID)
	writeJSON(w, http.StatusOK, wire.Result(m.ID, result))
}

// parseClient reads one client message into m; when it is not a valid JSON-RPC 2.0
// message it returns the error to answer with, the same on every front.
func parseClient(b []byte, m *wire.Msg) []byte {
	if err := wire.ParseInto(b, m); err != nil {
		return wire.ParseFailure(err, m)
	}
	if !m.Valid() {
		return wire.Error(m.ID, wire.CodeInvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message", nil)
	}
	return nil
}

// openSession completes an initialize: the handshake form asked for (X-Mcp-Handshake),
// the session made and stored. It returns the session and the initialize result.
func (g *Gateway) openSession(rec sessions.Record, handshake string) (*Session, []byte, error) {
	switch handshake {
	case "full", "thin", "search", "auto":
		rec.Handshake = handshake
	}
	result := g.initializeResult(rec.ProtocolVersion, rec.Servers, rec.ClientCaps)
	s := g.live.newSession(rec)
	if err := g.live.register(s); err != nil {
		g.log.Error("store unavailable", "err", err)
		return nil, nil, err
	}
	return s, result, nil
}

// initialize negotiates the protocol version and builds the session record.
func (g *Gateway) initialize(m *wire.Msg, transport string, versions []string) (sessions.Record, []byte) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}
	if len(m.Params) > 0 {
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return sessions.Record{}, wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil)
		}
	}
	version := latestVersion
	if slices.Contains(versions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	now := time.Now().UTC()
	rec := sessions.Record{
		ID: newSessionID(), Transport: transport, ProtocolVersion: version,
		ClientCaps: p.Capabilities, ClientInfo: p.ClientInfo,
		Created: now, LastSeen: now,
	}
	return rec, nil
}

var gatewayCaps = json.RawMessage(`{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`)

func (g *Gateway) initializeResult(version string, servers []string, clientCaps ...json.RawMessage) []byte {
	var instr strings.Builder
	for _, name := range servers {
		if srv := g.reg.Server(name); srv != nil {
			if text := strings.TrimSpace(g.reg.Integrity().Instructions(name, srv.Catalog())); text != "" {
				if instr.Len() > 0 {
					instr.WriteString("\n\n")
				}
				instr.WriteString("## " + name + "\n" + text)
			}
		}
	}
	res := map[string]any{
		"protocolVersion": version,
		"capabilities":    gatewayCaps,
		"serverInfo":      map[string]string{"name": "mcpgw", "title": "mcpgw MCP gateway", "version": g.version},
	}
	if instr.Len() > 0 {
		res["instructions"] = instr.String()
	}
	if len(clientCaps) > 0 {
		res["capabilities"] = g.calls.capsWithExtensions(clientCaps[0], servers)
	}
	b, _ := json.Marshal(res)
	return b
}

func (sf *streamableFront) sessionFor(w http.ResponseWriter, r *http.Request) *Session {
	g := sf.g
	id, ok := g.gate.authenticate(w, r)
	if !ok {
		return nil
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		writeHTTPError(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: Mcp-Session-Id header is required")
		return nil
	}
	s := g.live.session(w, sid, nil)
	if s == nil {
		return nil
	}
	if !g.gate.continueSession(w, id, s) {
		return nil
	}
	if !sameVersion(w, r, s, nil) {
		return nil
	}
	return s
}

// sameVersion refuses a request whose MCP-Protocol-Version differs from the version the
// session negotiated (400): a client may not switch revisions under a session. Like no
// header at all, 2025-03-26 is accepted: it is the version the specification has servers
// assume when they cannot tell, and the protocol's conformance suite sends it on sessions
// of every revision. Either way the session's negotiated rules apply, never the header's.
func sameVersion(w http.ResponseWriter, r *http.Request, s *Session, id json.RawMessage) bool {
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
	if v == "" || v == "2025-03-26" || s.rec.ProtocolVersion == "" || v == s.rec.ProtocolVersion {
		return true
	}
	writeJSON(w, http.StatusBadRequest, wire.Error(id, wire.CodeInvalidRequest,
		"Bad Request: MCP-Protocol-Version "+v+" differs from the session's negotiated version "+s.rec.ProtocolVersion, nil))
	return false
}

// serveGet opens the session's stream for server-initiated messages.
func (sf *streamableFront) serveGet(w http.ResponseWriter, r *http.Request) {
	g := sf.g
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		writeHTTPError(w, http.StatusNotAcceptable, wire.CodeConnection, "Not Acceptable: the client must accept text/event-stream")
		return
	}
	if _, ok := checkVersionHeader(w, r, nil); !ok {
		return
	}
	s := sf.sessionFor(w, r)
	if s == nil {
		return
	}
	// A Last-Event-ID of a POST event stream resumes that stream; one of an earlier GET
	// stream ("g-…") reopens the session's GET stream, whose messages sent while none was
	// open waited for it (pending). Anything else is no id of ours.
	if last := r.Header.Get("Last-Event-ID"); last != "" && !strings.HasPrefix(last, "g-") {
		sf.serveResume(w, r, s, last)
		return
	}
	st := clientstream.New("g", g.cfg.HTTP.StreamQueue)
	if !s.attach(st) {
		writeHTTPError(w, http.StatusConflict, wire.CodeConnection, "Conflict: only one GET stream is allowed per session")
		return
	}
	defer s.detach(st)
	defer st.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	st.Pump(w, r)
}

func (sf *streamableFront) serveDelete(w http.ResponseWriter, r *http.Request) {
	g := sf.g
	s := sf.sessionFor(w, r)
	if s == nil {
		return
	}
	g.live.end(s, "client DELETE")
	w.WriteHeader(http.StatusOK)
}
