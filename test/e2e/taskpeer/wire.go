package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
)

const (
	protocolVersion = "2026-07-28"
	tasksExtension  = "io.modelcontextprotocol/tasks"
	// maxBody bounds one request body; the fixtures' requests are a few hundred bytes.
	maxBody = 1 << 20

	codeParse              = -32700
	codeInvalidRequest     = -32600
	codeMethodNotFound     = -32601
	codeInvalidParams      = -32602
	codeInternal           = -32603
	codeHeaderMismatch     = -32020
	codeMissingCapability  = -32021
	codeUnsupportedVersion = -32022
)

// rpcError is a JSON-RPC error: what a request is answered with, and what a task that
// failed at the protocol level carries.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// missingCapability is -32021 naming what the caller must declare, in the shape of
// clientCapabilities.
func missingCapability(what string, required map[string]any) *rpcError {
	return &rpcError{Code: codeMissingCapability, Message: "Missing required client capability: " + what,
		Data: map[string]any{"requiredCapabilities": required}}
}

func missingTasks() *rpcError {
	return missingCapability(tasksExtension, map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}})
}

// request is one admitted JSON-RPC request: its members as sent (exact names) and what
// its _meta declared.
type request struct {
	id     json.RawMessage
	method string
	params map[string]json.RawMessage
	caps   clientCaps
}

// clientCaps is the part of a request's clientCapabilities the peer acts on.
type clientCaps struct {
	tasks, elicitation bool
}

// peer serves the stateless revision's POST /mcp.
type peer struct {
	log   *log.Logger
	tasks *taskStore
	tools map[string]*tool
}

func newPeer(logger *log.Logger) *peer {
	return &peer{log: logger, tasks: newTaskStore(), tools: fixtures()}
}

func (p *peer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "this server takes POST only (2026-07-28 has no GET stream or session)", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			p.reply(w, nil, http.StatusRequestEntityTooLarge, nil, errorf(codeInvalidRequest, "request body over %d bytes", maxBody))
			return
		}
		p.reply(w, nil, http.StatusBadRequest, nil, errorf(codeParse, "reading the body: %v", err))
		return
	}
	req, status, rerr := admit(r.Header, body)
	if rerr != nil {
		p.log.Printf("refused %q: %s", req.method, rerr.Message)
		p.reply(w, req.id, status, nil, rerr)
		return
	}
	if req.id == nil { // a notification: nothing the peer acts on
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result, rerr := p.dispatch(r, req)
	status = http.StatusOK
	if rerr != nil {
		p.log.Printf("%s: %s", req.method, rerr.Message)
		status = errorStatus(rerr.Code)
	}
	p.reply(w, req.id, status, result, rerr)
}

func (p *peer) dispatch(r *http.Request, req *request) (any, *rpcError) {
	switch req.method {
	case "server/discover":
		return discoverResult(), nil
	case "tools/list":
		return p.listTools(), nil
	case "tools/call":
		return p.callTool(r.Context(), req)
	case "tasks/get", "tasks/update", "tasks/cancel":
		return p.taskMethod(req)
	}
	return nil, errorf(codeMethodNotFound, "method %q not found", req.method)
}

// known are the methods the peer serves; anything else is -32601 before _meta is read.
func known(method string) bool {
	switch method {
	case "server/discover", "tools/list", "tools/call", "tasks/get", "tasks/update", "tasks/cancel":
		return true
	}
	return false
}

// errorStatus is the HTTP status of an error answer: 404 for an unknown method, 400 for
// what the caller sent or did not declare, 500 for the peer's own failure.
func errorStatus(code int) int {
	switch code {
	case codeMethodNotFound:
		return http.StatusNotFound
	case codeInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// admit parses the body and applies the revision's checks in order: the envelope, the
// version header, the routing headers against the body, the method, then _meta. A
// refusal comes with the HTTP status to answer it with.
func admit(h http.Header, body []byte) (*request, int, *rpcError) {
	req := &request{}
	top, rerr := object(body)
	if rerr != nil {
		return req, http.StatusBadRequest, rerr
	}
	if rerr := envelope(top, req); rerr != nil {
		return req, http.StatusBadRequest, rerr
	}
	if rerr := checkHeaders(h, req); rerr != nil {
		return req, http.StatusBadRequest, rerr
	}
	if req.id == nil {
		return req, 0, nil
	}
	if !known(req.method) {
		return req, http.StatusNotFound, errorf(codeMethodNotFound, "method %q not found", req.method)
	}
	if rerr := readMeta(h, req); rerr != nil {
		return req, http.StatusBadRequest, rerr
	}
	return req, 0, nil
}

// object decodes a JSON object keeping its member names exactly as sent; a member named
// twice is refused rather than silently taking one of the values.
func object(b []byte) (map[string]json.RawMessage, *rpcError) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return nil, errorf(codeInvalidRequest, "batches are not part of %s", protocolVersion)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, errorf(codeParse, "not a JSON object: %v", err)
	}
	if name, dup := duplicateMember(b); dup {
		return nil, errorf(codeInvalidRequest, "member %q appears twice", name)
	}
	return m, nil
}

// duplicateMember reports the first member name repeated at the top level of the object
// in b (already known to be valid JSON).
func duplicateMember(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		name, _ := tok.(string)
		if seen[name] {
			return name, true
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

func envelope(top map[string]json.RawMessage, req *request) *rpcError {
	if id, ok := top["id"]; ok {
		if len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
			return errorf(codeInvalidRequest, "id must be a string or a number")
		}
		req.id = id
	}
	var version string
	if json.Unmarshal(top["jsonrpc"], &version) != nil || version != "2.0" {
		return errorf(codeInvalidRequest, `jsonrpc must be "2.0"`)
	}
	if json.Unmarshal(top["method"], &req.method) != nil || req.method == "" {
		return errorf(codeInvalidRequest, "method must be a non-empty string")
	}
	req.params = map[string]json.RawMessage{}
	if raw, ok := top["params"]; ok {
		params, rerr := object(raw)
		if rerr != nil {
			return errorf(codeInvalidParams, "params: %s", rerr.Message)
		}
		req.params = params
	}
	return nil
}

// checkHeaders holds the HTTP headers to the body: MCP-Protocol-Version, Mcp-Method, and
// Mcp-Name for the methods that name something.
func checkHeaders(h http.Header, req *request) *rpcError {
	version := headerValue(h, "MCP-Protocol-Version")
	if version == "" {
		return errorf(codeHeaderMismatch, "missing MCP-Protocol-Version header")
	}
	if version != protocolVersion {
		return &rpcError{Code: codeUnsupportedVersion, Message: "Unsupported protocol version",
			Data: map[string]any{"supported": []string{protocolVersion}, "requested": version}}
	}
	if got := headerValue(h, "Mcp-Method"); got != req.method {
		return errorf(codeHeaderMismatch, "Mcp-Method header %q does not match the body's method %q", got, req.method)
	}
	member := routingMember(req.method)
	if member == "" {
		return nil
	}
	var want string
	if json.Unmarshal(req.params[member], &want) != nil {
		return nil // the method's own checks refuse a missing name
	}
	got, err := decodeHeader(headerValue(h, "Mcp-Name"))
	if err != nil {
		return errorf(codeHeaderMismatch, "Mcp-Name header: %v", err)
	}
	if got != want {
		return errorf(codeHeaderMismatch, "Mcp-Name header %q does not match params.%s %q", got, member, want)
	}
	return nil
}

// routingMember is the params member Mcp-Name mirrors for method ("" for none).
func routingMember(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "taskId"
	}
	return ""
}

// headerValue is the header's one value without surrounding optional whitespace.
func headerValue(h http.Header, name string) string {
	return strings.Trim(h.Get(name), " \t")
}

// decodeHeader undoes the =?base64?…?= sentinel used for values that are not plain ASCII.
func decodeHeader(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, "?=")
	if !ok {
		return "", errors.New("unterminated =?base64? value")
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// readMeta reads params._meta: the revision's protocolVersion (equal to the header) and
// clientCapabilities are required.
func readMeta(h http.Header, req *request) *rpcError {
	raw, ok := req.params["_meta"]
	if !ok {
		return errorf(codeInvalidParams, "params._meta is required on %s", protocolVersion)
	}
	meta, rerr := object(raw)
	if rerr != nil {
		return errorf(codeInvalidParams, "params._meta: %s", rerr.Message)
	}
	var version string
	if json.Unmarshal(meta["io.modelcontextprotocol/protocolVersion"], &version) != nil || version == "" {
		return errorf(codeInvalidParams, "params._meta lacks io.modelcontextprotocol/protocolVersion")
	}
	if version != headerValue(h, "MCP-Protocol-Version") {
		return errorf(codeHeaderMismatch, "MCP-Protocol-Version header does not match _meta's %q", version)
	}
	var caps struct {
		Elicitation json.RawMessage            `json:"elicitation"`
		Extensions  map[string]json.RawMessage `json:"extensions"`
	}
	capsRaw, ok := meta["io.modelcontextprotocol/clientCapabilities"]
	if !ok || json.Unmarshal(capsRaw, &caps) != nil {
		return errorf(codeInvalidParams, "params._meta lacks an io.modelcontextprotocol/clientCapabilities object")
	}
	req.caps.elicitation = declared(caps.Elicitation)
	req.caps.tasks = declared(caps.Extensions[tasksExtension])
	return nil
}

// declared: a capability is declared by an object (an empty one included).
func declared(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func (p *peer) reply(w http.ResponseWriter, id json.RawMessage, status int, result any, rerr *rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		msg["error"] = rerr
	} else {
		msg["result"] = result
	}
	b, err := json.Marshal(msg)
	if err != nil {
		p.log.Printf("encoding the answer: %v", err)
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"encoding the answer failed"}}`)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func discoverResult() map[string]any {
	return map[string]any{
		"resultType":        "complete",
		"supportedVersions": []string{protocolVersion},
		"capabilities": map[string]any{
			"tools":      map[string]any{},
			"extensions": map[string]any{tasksExtension: map[string]any{}},
		},
		"instructions": "Fixtures of the Tasks extension's conformance scenarios.",
		"ttlMs":        0,
		"cacheScope":   "public",
		"_meta": map[string]any{
			"io.modelcontextprotocol/serverInfo": map[string]any{"name": "mcpgw-taskpeer", "version": "1.0.0"},
		},
	}
}
