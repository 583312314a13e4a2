package stateless

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// The gateway-side sessions of stateless callers are keyed by the caller's identity and
// every input of the request that shapes what it is served, at most a bound per caller
// (principal and agent).

// Key names the gateway-side session of a request: who the caller is (every part of the
// identity that decides its view), the capabilities it declares, which its upstream
// instances are told at their start (an upstream decides what to ask from them), and its
// client info and asked list form, which decide the tool names, the client's tool cap
// and the list form. A session is shaped by what opened it; keyed by all of these, it is
// shaped as the request itself would shape it, so a list does not depend on which client
// of the same caller came first.
func Key(id *auth.Identity, req *Request) string {
	k := struct {
		P, A, C, T, E, M string
		S, Tl            []string
		HasS, HasT, RO   bool
		Caps, Info, Form string
	}{P: id.Principal, A: id.Agent, C: id.Conversation, T: id.Task, E: id.Executor, M: id.Method,
		Caps: canonical(req.Caps), Info: canonical(req.Info), Form: req.Form}
	if c := id.Claims; c != nil {
		k.S, k.Tl, k.HasS, k.HasT, k.RO = c.Servers, c.Tools, c.Servers != nil, c.Tools != nil, c.ReadOnly
	}
	b, _ := json.Marshal(k)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// FormAsked is the list form a request's X-Mcp-Handshake header asks for: full, thin or
// search, or "" for none, auto, or a value that names no form (as on initialize, where
// such a value is ignored). auto and none are one: the agent's or gateway's setting.
func FormAsked(r *http.Request) string {
	switch v := auth.HeaderValue(r.Header, "X-Mcp-Handshake"); v {
	case "full", "thin", "search":
		return v
	}
	return ""
}

// Caller names who a stateless caller is for the bound on its sessions (the gateway's
// bound on variants): its principal and agent only. Everything else a request may vary on
// its own (conversation, task, executor, capabilities, client info, list form) makes
// another variant of the same caller, so varying X-Conversation-ID or clientInfo cannot
// mint sessions beyond the bound.
func Caller(id *auth.Identity) string {
	b, _ := json.Marshal([]string{id.Principal, id.Agent, id.Method})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonical re-encodes JSON with sorted keys, so two spellings of the same capabilities
// name the same session.
func canonical(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
