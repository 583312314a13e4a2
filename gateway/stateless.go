package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/params"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/sessions"
)

// The stateless protocol revision (2026-07-28, "modern"): no initialize, no session id;
// every request carries its protocol version, client capabilities and (optionally) client
// info in params._meta, mirrored in the MCP-Protocol-Version, Mcp-Method and Mcp-Name
// headers. The gateway serves it on the same /mcp endpoint as the session revisions: a
// POST whose MCP-Protocol-Version is 2026-07-28 or later comes here (docs/protocol.md).
//
// Upstreams stay on the session revisions: the gateway keeps a gateway-side session per
// caller (identity and declared capabilities), which owns its per-session instances and
// routes what upstreams send, exactly as for a client that initialized. Identity,
// permissions and audit are those of that session, resolved from the credential and
// headers of each request.

const modernVersion = "2026-07-28"

// Error codes the stateless revision adds.
const (
	codeHeaderMismatch            = -32020
	codeMissingClientCapabilities = -32021
)

// _meta keys of the stateless revision.
const (
	metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo      = "io.modelcontextprotocol/clientInfo"
	metaClientCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo      = "io.modelcontextprotocol/serverInfo"
	metaLogLevel        = "io.modelcontextprotocol/logLevel"
)

// modernVersions are the versions server/discover and -32022 name: the stateless revision
// first, then the session revisions (served after initialize).
var modernVersions = append([]string{modernVersion}, streamableVersions...)

// listTTL is the ttlMs of list results: how long a client may reuse a list. Changes reach
// clients that hold a subscriptions/listen stream at once; the others see them within it.
const listTTL = 60_000

// statelessFront is the front of the stateless revision (2026-07-28): one POST per request,
// discovery, subscriptions/listen (listen.go), input rounds with sealed request state
// (mrtr.go), and input rounds an upstream of that revision asks for (modernup.go). It holds
// the gateway-side sessions by caller and the calls parked while a client answers an input
// request; the rest it reaches through the gateway that owns it.
type statelessFront struct {
	g        *Gateway
	mu       sync.Mutex
	sessions map[string]*Session
	byCaller map[string][]string // a caller's session keys (one per capability set), oldest first
	parked   map[string]*mrtrCall
}

// modernVariants bounds the gateway-side sessions one caller (principal and agent) holds
// at once: sessions are keyed by the capabilities, conversation, task and executor a
// request names, so a caller that varied them on every request would otherwise open a
// session (and per-session upstream instances) per request. A real client uses a few;
// beyond this many, the oldest session ends.
const modernVariants = 8

// modernRequest is a validated stateless request.
type modernRequest struct {
	m      *wire.Msg
	level  string          // _meta logLevel: log notifications wanted at this level and above
	caps   json.RawMessage // _meta clientCapabilities
	info   json.RawMessage // _meta clientInfo
	state  string          // requestState of a retried request (MRTR)
	inputs map[string]json.RawMessage
	hasCap func(string) bool
}

// serveModern answers one POST of the stateless revision. id is the authenticated caller.
func (f *statelessFront) serveModern(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg) {
	v := auth.HeaderValue(r.Header, "Mcp-Protocol-Version")
	if v != modernVersion {
		writeJSON(w, http.StatusBadRequest, wire.Error(m.ID, wire.CodeUnsupportedProtocolVersion, "Unsupported protocol version",
			map[string]any{"supported": modernVersions, "requested": v}))
		return
	}
	if m.IsResponse() {
		writeJSON(w, http.StatusBadRequest, wire.Error(nil, wire.CodeInvalidRequest,
			"Invalid Request: clients send no responses on protocol version "+modernVersion+" (input is returned in inputResponses)", nil))
		return
	}
	if msg := checkModernHeaders(r, m); msg != "" {
		writeJSON(w, http.StatusBadRequest, wire.Error(m.ID, codeHeaderMismatch, "Header mismatch: "+msg, nil))
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
		"tools/call", "prompts/get", "resources/read", "completion/complete":
	default:
		// Unknown, and the methods this revision removed (initialize, ping,
		// logging/setLevel, resources/subscribe and unsubscribe, tasks/*): 404, whatever
		// the params.
		writeJSON(w, http.StatusNotFound, wire.Error(m.ID, wire.CodeMethodNotFound, "Method not found: "+m.Method, nil))
		return
	}
	req, status, errMsg := readModern(m, v)
	if errMsg != nil {
		writeJSON(w, status, errMsg)
		return
	}
	switch m.Method {
	case "server/discover":
		f.discover(w, r, id, req)
		return
	case "subscriptions/listen":
		s := f.modernSession(w, r, id, req)
		if s == nil {
			return
		}
		f.listen(w, r, s, req)
		return
	}
	s := f.modernSession(w, r, id, req)
	if s == nil {
		return
	}
	s.touch()
	if m.Method == "tools/call" {
		if p, err := params.Read(m.Params); err == nil {
			if t := s.View().Tool(p.Name); t != nil {
				if msg := checkParamHeaders(r, t.InputSchema(), p.Arguments); msg != "" {
					writeJSON(w, http.StatusBadRequest, wire.Error(m.ID, codeHeaderMismatch, "Header mismatch: "+msg, nil))
					return
				}
			}
		}
	}
	f.serveModernCall(w, r, s, req)
}

// checkParamHeaders validates the Mcp-Param-{Name} headers of a tools/call against the
// arguments: every parameter the tool's input schema marks with x-mcp-header (reached
// through properties only) and the call gives a value must come as its header, with the
// same value (Base64 sentinel decoded; numbers compared as numbers). It returns what is
// wrong, or "".
func checkParamHeaders(r *http.Request, schema, args json.RawMessage) string {
	if !bytes.Contains(schema, []byte("x-mcp-header")) {
		return ""
	}
	var argv any
	_ = json.Unmarshal(args, &argv)
	var problem string
	var walk func(node json.RawMessage, val any)
	walk = func(node json.RawMessage, val any) {
		var sch struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(node, &sch) != nil {
			return
		}
		obj, _ := val.(map[string]any)
		names := make([]string, 0, len(sch.Properties))
		for k := range sch.Properties {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			prop := sch.Properties[k]
			v, present := obj[k]
			var ann struct {
				Header string `json:"x-mcp-header"`
			}
			_ = json.Unmarshal(prop, &ann)
			if ann.Header != "" && problem == "" && present && v != nil {
				problem = checkParamHeader(r, ann.Header, v)
			}
			walk(prop, v)
		}
	}
	walk(schema, argv)
	return problem
}

func checkParamHeader(r *http.Request, name string, v any) string {
	h := "Mcp-Param-" + name
	vals := r.Header.Values(h)
	if len(vals) == 0 {
		return "the " + h + " header is required for the argument it mirrors"
	}
	hv, ok := headerValue(vals[0])
	if len(vals) > 1 || !ok {
		return "the " + h + " header is malformed"
	}
	switch x := v.(type) {
	case string:
		ok = hv == x
	case float64:
		f, err := strconv.ParseFloat(hv, 64)
		ok = err == nil && f == x
	case bool:
		ok = hv == strconv.FormatBool(x)
	default:
		ok = false
	}
	if !ok {
		return h + " header value '" + hv + "' does not match the argument"
	}
	return ""
}

// headerValue decodes an Mcp-Name style header: surrounding whitespace is not part of the
// value, and =?base64?…?= carries a value that is no plain ASCII.
func headerValue(v string) (string, bool) {
	v = strings.Trim(v, " \t")
	if b, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if b, ok = strings.CutSuffix(b, "?="); ok {
			d, err := base64.StdEncoding.DecodeString(b)
			if err != nil {
				return "", false
			}
			return string(d), true
		}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", false
		}
	}
	return v, true
}

// checkModernHeaders compares Mcp-Method and Mcp-Name with the body; it returns what is
// wrong, or "".
func checkModernHeaders(r *http.Request, m *wire.Msg) string {
	vals := r.Header.Values("Mcp-Method")
	if len(vals) == 0 {
		if m.IsNotification() {
			return "" // header rules for notification POSTs are not defined
		}
		return "the Mcp-Method header is required"
	}
	method, ok := headerValue(vals[0])
	if len(vals) > 1 || !ok {
		return "the Mcp-Method header is malformed"
	}
	if method != m.Method {
		return "Mcp-Method header value '" + method + "' does not match body value '" + m.Method + "'"
	}
	var member string
	switch m.Method {
	case "tools/call", "prompts/get":
		member = "name"
	case "resources/read":
		member = "uri"
	default:
		return ""
	}
	p, err := params.Read(m.Params)
	if err != nil {
		return "" // the params error is reported by the method
	}
	body := p.Name
	if member == "uri" {
		body = p.URI
	}
	names := r.Header.Values("Mcp-Name")
	if len(names) == 0 {
		if body == "" {
			return ""
		}
		return "the Mcp-Name header is required for " + m.Method
	}
	name, ok := headerValue(names[0])
	if len(names) > 1 || !ok {
		return "the Mcp-Name header is malformed"
	}
	if name != body {
		return "Mcp-Name header value '" + name + "' does not match body value '" + body + "'"
	}
	return ""
}

// readModern validates params._meta and takes out the stateless _meta keys: the params
// forwarded upstream are rebuilt without them (an upstream on a session revision must not
// see a revision it did not negotiate). inputResponses and requestState stay (mrtr.go
// decides whose they are). On failure it returns the HTTP status and the error message.
func readModern(m *wire.Msg, header string) (*modernRequest, int, []byte) {
	req := &modernRequest{m: m}
	bad := func(msg string) (*modernRequest, int, []byte) {
		return nil, http.StatusBadRequest, wire.Error(m.ID, wire.CodeInvalidParams, "Invalid params: "+msg, nil)
	}
	if len(m.Params) == 0 || string(m.Params) == "null" {
		return bad("params._meta with " + metaProtocolVersion + " and " + metaClientCaps + " is required")
	}
	var out, meta wire.Object
	var rawMeta json.RawMessage
	err := wire.StrictMembers(m.Params, func(k, v []byte) error {
		switch string(k) {
		case "_meta":
			rawMeta = v
		case "requestState":
			s, err := wire.StrictString(v)
			if err != nil {
				return err
			}
			req.state = s
			out.Raw(string(k), v)
		case "inputResponses":
			if err := json.Unmarshal(v, &req.inputs); err != nil {
				return params.ErrNotObject
			}
			out.Raw(string(k), v)
		default:
			out.Raw(string(k), v)
		}
		return nil
	})
	if err != nil {
		return bad(err.Error())
	}
	version := ""
	if len(rawMeta) > 0 {
		err = wire.StrictMembers(rawMeta, func(k, v []byte) error {
			switch string(k) {
			case metaProtocolVersion:
				s, err := wire.StrictString(v)
				if err != nil {
					return err
				}
				version = s
			case metaClientCaps:
				if len(v) == 0 || v[0] != '{' {
					return errCapsNotObject
				}
				req.caps = v
			case metaClientInfo:
				req.info = v
			case metaLogLevel:
				s, err := wire.StrictString(v)
				if err != nil || !params.ValidLevel(s) {
					return errBadLogLevel
				}
				req.level = s
			default:
				meta.Raw(string(k), v)
			}
			return nil
		})
		if err != nil {
			return bad("_meta " + err.Error())
		}
	}
	switch {
	case len(rawMeta) == 0:
		return bad("params._meta is required on protocol version " + modernVersion)
	case version == "":
		return bad("params._meta needs " + metaProtocolVersion)
	case req.caps == nil:
		return bad("params._meta needs " + metaClientCaps)
	}
	if version != header {
		return nil, http.StatusBadRequest, wire.Error(m.ID, codeHeaderMismatch,
			"Header mismatch: MCP-Protocol-Version header value '"+header+"' does not match _meta "+metaProtocolVersion+" '"+version+"'", nil)
	}
	if !meta.Empty() {
		out.Raw("_meta", meta.Bytes())
	}
	p := out.Bytes()
	m.Params = p
	req.hasCap = capsHas(req.caps)
	return req, 0, nil
}

var (
	errCapsNotObject = jsonError("clientCapabilities must be an object")
	errBadLogLevel   = jsonError("logLevel must be a log level")
)

type jsonError string

func (e jsonError) Error() string { return string(e) }

// capsHas reports which top-level client capabilities caps declares.
func capsHas(caps json.RawMessage) func(string) bool {
	var c map[string]json.RawMessage
	_ = json.Unmarshal(caps, &c)
	return func(name string) bool { v, ok := c[name]; return ok && string(v) != "null" }
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

// cacheable methods carry ttlMs and cacheScope in their results.
func cacheable(method string) bool {
	switch method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read", "server/discover":
		return true
	}
	return false
}

// modernResult rewrites a result for the stateless revision: resultType (complete unless
// the result says otherwise), the gateway's serverInfo in _meta, and the caching hints of
// the list methods (kept when an upstream set them).
func (f *statelessFront) modernResult(method string, result json.RawMessage) json.RawMessage {
	var out wire.Object
	var meta json.RawMessage
	hasType, hasTTL, hasScope := false, false, false
	err := wire.MembersRaw(result, func(k, v []byte) error {
		switch string(k) {
		case "_meta":
			meta = v
			return nil
		case "resultType":
			hasType = true
		case "ttlMs":
			hasTTL = true
		case "cacheScope":
			hasScope = true
		}
		out.Raw(string(k), v)
		return nil
	})
	if err != nil {
		return result
	}
	if !hasType {
		rt := "complete"
		if bytes.Contains(result, []byte(`"inputRequests"`)) && hasMember(result, "inputRequests") {
			rt = "input_required" // an upstream's own multi round-trip result (mrtr.go)
		}
		out.Str("resultType", rt)
	}
	if cacheable(method) {
		if !hasTTL {
			ttl := listTTL
			if method == "resources/read" {
				ttl = 0 // content may change at any time; an upstream that knows better says so
			}
			out.Raw("ttlMs", []byte(itoa(int64(ttl))))
		}
		if !hasScope {
			out.Str("cacheScope", f.cacheScope())
		}
	}
	var mb wire.Object
	hasInfo := false
	_ = wire.MembersRaw(meta, func(k, v []byte) error {
		if string(k) == metaServerInfo {
			hasInfo = true
		}
		mb.Raw(string(k), v)
		return nil
	})
	if !hasInfo {
		mb.Raw(metaServerInfo, f.serverInfo())
	}
	out.Raw("_meta", mb.Bytes())
	return out.Bytes()
}

// modernReply turns a response made for the session path into the stateless revision's:
// the request's own id, results rewritten (modernResult), and the error codes this
// revision changed (resource not found is -32602). It returns the message and its HTTP
// status (404 for method not found).
func (f *statelessFront) modernReply(method string, id json.RawMessage, msg []byte) ([]byte, int) {
	var resp wire.Msg
	if err := wire.ParseInto(msg, &resp); err != nil {
		return wire.Error(id, wire.CodeInternalError, "Internal error: malformed response", nil), http.StatusOK
	}
	if resp.Error != nil {
		e := wire.ParseError(resp.Error)
		switch e.Code {
		case -32002:
			return wire.Error(id, wire.CodeInvalidParams, e.Message, e.Data), http.StatusOK
		case wire.CodeMethodNotFound:
			return wire.RawError(id, resp.Error), http.StatusNotFound
		case codeHeaderMismatch, codeMissingClientCapabilities, wire.CodeUnsupportedProtocolVersion:
			// The revision answers these with 400, also when an upstream raised them.
			return wire.RawError(id, resp.Error), http.StatusBadRequest
		}
		return wire.RawError(id, resp.Error), http.StatusOK
	}
	return wire.Result(id, f.modernResult(method, resp.Result)), http.StatusOK
}

// discover answers server/discover for the caller's view: the versions the gateway serves,
// its capabilities (with the extensions of the caller's upstreams), its identity and the
// instructions of the caller's servers. It needs no session: the caller is resolved as
// for initialize, and a caller refused there is refused here.
func (f *statelessFront) discover(w http.ResponseWriter, r *http.Request, id *auth.Identity, req *modernRequest) {
	g := f.g
	rec := sessions.Record{}
	if fail := g.gate.startIdentity(r.Context(), id, &rec); fail != nil {
		g.gate.refuse(w, fail, id)
		return
	}
	res := map[string]any{
		"supportedVersions": modernVersions,
		"capabilities":      f.modernCaps(rec.Servers),
	}
	var init struct {
		Instructions string `json:"instructions"`
	}
	_ = json.Unmarshal(g.initializeResult(modernVersion, rec.Servers), &init)
	if init.Instructions != "" {
		res["instructions"] = init.Instructions
	}
	b, _ := json.Marshal(res)
	writeJSON(w, http.StatusOK, wire.Result(req.m.ID, f.modernResult("server/discover", b)))
}

// modernCaps are the capabilities a stateless client is told about: the session ones,
// plus the server extensions the given servers' upstreams declare (extensions.go).
func (f *statelessFront) modernCaps(servers []string) json.RawMessage {
	g := f.g
	var caps map[string]json.RawMessage
	_ = json.Unmarshal(gatewayCaps, &caps)
	if ext := g.calls.upstreamExtensions(servers); len(ext) > 0 {
		caps["extensions"], _ = json.Marshal(ext)
	}
	b, _ := json.Marshal(caps)
	return b
}

// modernOut writes one stateless response: a JSON body when the response is all there
// is, an event stream once a notification must go first or when the client prefers one
// (sseWanted, from its Accept header).
type modernOut struct {
	w         http.ResponseWriter
	mu        sync.Mutex
	sse       bool
	sseWanted bool
	buf       []byte
}

// Header values of an event stream's answer (net/http does not modify them).
var (
	ctSSE      = []string{"text/event-stream"}
	hdrNoCache = []string{"no-cache"}
)

func (o *modernOut) startSSE() {
	if o.sse {
		return
	}
	h := o.w.Header()
	h["Content-Type"] = ctSSE
	h["Cache-Control"] = hdrNoCache
	h.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
	o.sse = true
}

// notify writes a notification as an event, starting the stream.
func (o *modernOut) notify(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.startSSE()
	o.buf = wire.AppendEvent(o.buf[:0], "", "message", msg)
	if _, err := o.w.Write(o.buf); err != nil {
		return err
	}
	if fl, ok := o.w.(http.Flusher); ok {
		fl.Flush()
	}
	return nil
}

// final writes the response.
func (o *modernOut) final(msg []byte, status int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sseWanted && status == http.StatusOK {
		o.startSSE()
	}
	if o.sse {
		o.buf = wire.AppendEvent(o.buf[:0], "", "message", msg)
		_, _ = o.w.Write(o.buf)
		return
	}
	writeJSON(o.w, status, msg)
}

// wantsLog reports whether a log notification goes to a request that asked for level.
func wantsLog(level string, p json.RawMessage) bool {
	return level != "" && params.LevelAllowed(level, p)
}

// hasMember reports whether a JSON object has a top-level member name.
func hasMember(obj json.RawMessage, name string) bool {
	found := false
	_ = wire.MembersRaw(obj, func(k, _ []byte) error {
		if string(k) == name {
			found = true
		}
		return nil
	})
	return found
}
