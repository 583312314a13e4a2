package gateway

import (
	"encoding/json"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/inputround"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reqparams"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The stateless protocol revision (2026-07-28): no initialize, no session id;
// every request carries its protocol version, client capabilities and (optionally) client
// info in params._meta, mirrored in the MCP-Protocol-Version, Mcp-Method and Mcp-Name
// headers. The gateway serves it on the same /mcp endpoint as the session revisions: a
// POST whose MCP-Protocol-Version is 2026-07-28 or later comes here (docs/protocol.md).
//
// Upstreams stay on the session revisions: the gateway keeps a gateway-side session per
// caller and shaping inputs (identity, declared capabilities, client info and asked list
// form: stateless.Key), which owns its per-session instances and routes what upstreams
// send, exactly as for a client that initialized. Identity, permissions and audit are
// those of that session, resolved from the credential and headers of each request.

// statelessResult rewrites a result for the stateless revision (stateless.Result) with the
// gateway's identity and the cache scope of its current config.
func (f *statelessFront) statelessResult(method string, result json.RawMessage) json.RawMessage {
	return stateless.Result(method, result, f.serverInfo(), f.cacheScope())
}

// statelessReply turns a response made for the session path into the stateless revision's
// (stateless.Reply).
func (f *statelessFront) statelessReply(method string, id json.RawMessage, msg []byte) ([]byte, int) {
	return stateless.Reply(method, id, msg, f.serverInfo(), f.cacheScope())
}

// statelessVersions are the versions server/discover and -32022 name: the stateless revision
// first, then the session revisions (served after initialize).
var statelessVersions = append([]string{stateless.Version}, streamableVersions...)

// statelessFront is the front of the stateless revision (2026-07-28): one POST per request,
// discovery, subscriptions/listen (listen.go), input rounds with sealed request state
// (mrtr.go), and input rounds an upstream of that revision asks for
// (internal/gateway/internal/dispatch/statelessup.go). It holds the gateway-side sessions by caller and
// the calls parked while a client answers an input request; the rest it reaches through the
// gateway that owns it.
type statelessFront struct {
	g      *Gateway
	table  *stateless.Table[*session.Session]   // gateway-side sessions by caller (statelesssession.go)
	rounds *inputround.Engine[*session.Session] // input rounds: parked calls, sealed states (mrtr.go)
}

// serveStateless answers one POST of the stateless revision. id is the authenticated caller.
func (f *statelessFront) serveStateless(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg) {
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
	if v != stateless.Version {
		reply.JSON(w, http.StatusBadRequest, wire.Error(m.ID, wire.CodeUnsupportedProtocolVersion, "Unsupported protocol version",
			map[string]any{"supported": statelessVersions, "requested": v}))
		return
	}
	if m.IsResponse() {
		reply.JSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeInvalidRequest,
			"Invalid Request: clients send no responses on protocol version "+stateless.Version+" (input is returned in inputResponses)", nil))
		return
	}
	if msg := stateless.CheckHeaders(r, m); msg != "" {
		reply.JSON(w, http.StatusBadRequest, wire.Error(m.ID, stateless.CodeHeaderMismatch, "Header mismatch: "+msg, nil))
		return
	}
	if m.IsNotification() {
		// The revision defines no client notifications over HTTP (closing a response
		// stream is the cancellation); one is accepted and ignored.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch m.Method {
	case "server/discover", "subscriptions/listen", "tools/list", "prompts/list", "resources/list", "resources/templates/list",
		"tools/call", "prompts/get", "resources/read", "completion/complete",
		"skills/list", "skills/get", "resources/directory/read", // the skills extension's
		"tasks/get", "tasks/update", "tasks/cancel": // the Tasks extension (docs/tasks.md)
	default:
		// Unknown, and the methods this revision removed (initialize, ping,
		// logging/setLevel, resources/subscribe and unsubscribe, tasks/result and
		// tasks/list): 404, whatever the params.
		reply.JSON(w, http.StatusNotFound, wire.Error(m.ID, wire.CodeMethodNotFound, "Method not found: "+m.Method, nil))
		return
	}
	req, status, errMsg := stateless.Read(m, v)
	if errMsg != nil {
		reply.JSON(w, status, errMsg)
		return
	}
	req.Form = stateless.FormAsked(r)
	switch m.Method {
	case "server/discover":
		f.discover(w, r, id, req)
		return
	case "subscriptions/listen":
		s := f.statelessSession(w, r, id, req)
		if s == nil {
			return
		}
		f.listen(w, r, s, req)
		return
	}
	s := f.statelessSession(w, r, id, req)
	if s == nil {
		return
	}
	s.Touch()
	if m.Method == "tools/call" {
		if p, err := reqparams.Read(m.Params); err == nil {
			if t := s.View().Tool(p.Name); t != nil {
				if msg := stateless.CheckParamHeaders(r, t.InputSchema(), p.Arguments); msg != "" {
					reply.JSON(w, http.StatusBadRequest, wire.Error(m.ID, stateless.CodeHeaderMismatch, "Header mismatch: "+msg, nil))
					return
				}
			}
		}
	}
	f.serveStatelessCall(w, r, s, req)
}

// cacheScope is "public" when every caller sees the same lists (no authentication and no
// per-agent configuration), else "private": a shared cache must not hand one agent's view
// to another.
func (f *statelessFront) cacheScope() string {
	g := f.g
	cfg := g.policy().cfg
	if (cfg.Auth.Mode == "" || cfg.Auth.Mode == "none") && len(cfg.Agents) == 0 && len(cfg.Executors) == 0 && len(cfg.Tasks) == 0 {
		return "public"
	}
	return "private"
}

// serverInfo is the gateway's Implementation object.
func (f *statelessFront) serverInfo() json.RawMessage {
	g := f.g
	b, _ := json.Marshal(map[string]string{"name": "mcpgw", "title": "mcpgw MCP gateway", "version": g.version})
	return b
}

// discover answers server/discover for the caller's view: the versions the gateway serves,
// its capabilities (with the extensions of the caller's upstreams), its identity and the
// instructions of the caller's servers. It needs no session: the caller is resolved as
// for initialize, and a caller refused there is refused here.
func (f *statelessFront) discover(w http.ResponseWriter, r *http.Request, id *auth.Identity, req *stateless.Request) {
	g := f.g
	rec := store.Record{}
	if fail := g.gate.startIdentity(r.Context(), id, &rec); fail != nil {
		g.gate.refuse(w, fail, id)
		return
	}
	res := map[string]any{
		"supportedVersions": statelessVersions,
		"capabilities":      f.statelessCaps(rec.Servers),
	}
	var init struct {
		Instructions string `json:"instructions"`
	}
	_ = json.Unmarshal(handshake{g}.initializeResult(stateless.Version, rec.Servers), &init)
	if init.Instructions != "" {
		res["instructions"] = init.Instructions
	}
	b, _ := json.Marshal(res)
	reply.JSON(w, http.StatusOK, wire.Result(req.M.ID, f.statelessResult("server/discover", b)))
}

// statelessCaps are the capabilities a stateless client is told about: the session ones,
// plus the server extensions the given servers' upstreams declare (extensions.go).
func (f *statelessFront) statelessCaps(servers []string) json.RawMessage {
	g := f.g
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(gatewayCaps, &caps)
	if ext := upstreamExtensions(g.reg, servers); len(ext) > 0 {
		caps["extensions"], _ = json.Marshal(ext)
	}
	b, _ := json.Marshal(caps)
	return b
}
