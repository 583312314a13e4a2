package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/resume"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/streamable"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// streamableFront is the streamable HTTP front (/mcp: internal/gateway/internal/streamable, its
// Host here): POST, GET and DELETE, batches, the session's GET stream and its resumption
// (resume.go).
type streamableFront struct {
	g *Gateway
	// resumes bound the replay buffers of every session's POST event streams (resume.go).
	resumes *resume.Store
	// server is the transport, made with the gateway's settings (linkParts).
	server *streamable.Server[*session.Session]
}

// newStreamableServer is the transport of g's /mcp endpoint.
func newStreamableServer(g *Gateway) *streamable.Server[*session.Session] {
	return &streamable.Server[*session.Session]{Host: streamHost{admission{g}}, Body: bodyLimit(g), Queue: g.cfg.HTTP.StreamQueue,
		Versions: streamableVersions, AllVersions: statelessVersions, StatelessVersion: stateless.Version}
}

// serveMCP is the streamable HTTP endpoint: POST carries client messages, GET opens the
// session's stream for server-initiated messages, DELETE ends the session.
func (sf *streamableFront) serveMCP(w http.ResponseWriter, r *http.Request) {
	sf.server.ServeHTTP(w, r)
}

// bodyLimit bounds the HTTP transports' request bodies: http.max_body_bytes, the socket's
// own bound for a trusted socket peer (their time is bounded by http.body_timeout).
func bodyLimit(g *Gateway) intake.BodyLimit {
	return intake.BodyLimit{Max: g.cfg.HTTP.MaxBodyBytes, Trusted: SocketMaxBody}
}

// handshake is the session revisions' initialize, on every transport: the record it
// makes, the session opened, and the result answered.
type handshake struct{ g *Gateway }

// openSession completes an initialize: the handshake form asked for (X-Mcp-Handshake),
// the session made and stored. It returns the session and the initialize result.
func (hs handshake) openSession(rec store.Record, form string) (*session.Session, []byte, error) {
	g := hs.g
	switch form {
	case "full", "thin", "search", "auto":
		rec.Handshake = form
	}
	result := hs.initializeResult(rec.ProtocolVersion, rec.Servers, rec.ClientCaps)
	s := g.live.newSession(rec)
	if err := g.live.register(s); err != nil {
		g.log.Error("store unavailable", "err", err)
		return nil, nil, err
	}
	return s, result, nil
}

// initialize negotiates the protocol version and builds the session record.
func (hs handshake) initialize(m *wire.Msg, transport string, versions []string) (store.Record, []byte) {
	var p struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}
	if len(m.Params) > 0 {
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return store.Record{}, wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+err.Error(), nil)
		}
	}
	version := latestVersion
	if slices.Contains(versions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	now := time.Now().UTC()
	rec := store.Record{
		ID: newSessionID(), Transport: transport, ProtocolVersion: version,
		ClientCaps: p.Capabilities, ClientInfo: p.ClientInfo,
		Created: now, LastSeen: now,
	}
	return rec, nil
}

func (hs handshake) initializeResult(version string, servers []string, clientCaps ...json.RawMessage) []byte {
	g := hs.g
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
		res["capabilities"] = capsWithExtensions(g.reg, clientCaps[0], servers)
	}
	if version >= "2025-11-25" {
		res["capabilities"] = capsWithTasks(g.reg, res["capabilities"].(json.RawMessage), servers)
	}
	b, _ := json.Marshal(res)
	return b
}

// collectReply keeps the response to one request of a 2025-03-26 batch, which is answered
// in one JSON body; the request's related messages are dropped.
type collectReply struct{ msg []byte }

func (c *collectReply) Related([]byte) error   { return nil }
func (c *collectReply) Reply(msg []byte) error { c.msg = msg; return nil }

// streamHost is what the streamable HTTP transport needs of the gateway (streamable.Host):
// the admission (admission.go), then the serving calls.
type streamHost struct{ admission }

func (h streamHost) Stateless(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg) {
	h.g.stateless.serveStateless(w, r, id, m)
}

// Initialize creates a session for an initialize request.
func (h streamHost) Initialize(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg) {
	g := h.g
	rec, errMsg := handshake{g}.initialize(m, "streamable", streamableVersions)
	if errMsg != nil {
		reply.JSON(w, http.StatusBadRequest, errMsg)
		return
	}
	if fail := g.gate.startIdentity(r.Context(), id, &rec); fail != nil {
		g.gate.refuse(w, fail, id)
		return
	}
	s, result, err := handshake{g}.openSession(rec, auth.HeaderValue(r.Header, "X-Mcp-Handshake"))
	if err != nil {
		reply.Error(w, http.StatusServiceUnavailable, wire.CodeInternalError, "Session store unavailable")
		return
	}
	w.Header().Set("Mcp-Session-Id", s.ID)
	reply.JSON(w, http.StatusOK, wire.Result(m.ID, result))
}

func (h streamHost) End(s *session.Session, why string) { h.g.live.end(s, why) }

func (h streamHost) Deliver(s *session.Session, m *wire.Msg) {
	if m.IsResponse() {
		h.g.calls.ClientResponse(s, m)
	} else {
		h.g.calls.ClientNotification(s, m)
	}
}

// Call serves a POSTed request: its answer is one JSON body, or an event stream, primed
// (and so resumable) on 2025-11-25 and later.
func (h streamHost) Call(w http.ResponseWriter, r *http.Request, s *session.Session, m *wire.Msg) {
	g := h.g
	out := reply.NewPost(w, r)
	if s.Rec.ProtocolVersion >= "2025-11-25" {
		out.Prime(g.streamSeq.Add(1), &s.Resumes, g.streamable.resumes)
	}
	g.calls.Dispatch(r.Context(), s, m, out)
	out.Finish()
}

// Collect serves one request of a 2025-03-26 batch; its related messages are dropped.
func (h streamHost) Collect(ctx context.Context, s *session.Session, m *wire.Msg) []byte {
	out := &collectReply{}
	h.g.calls.Dispatch(ctx, s, m, out)
	return out.msg
}

func (h streamHost) Attach(s *session.Session, st *clientstream.Stream) bool { return s.Attach(st) }
func (h streamHost) Detach(s *session.Session, st *clientstream.Stream)      { s.Detach(st) }

func (h streamHost) Resume(w http.ResponseWriter, r *http.Request, s *session.Session, last string) {
	h.g.streamable.serveResume(w, r, s, last)
}
