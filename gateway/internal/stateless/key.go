package stateless

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/mcpgw/mcpgw/auth"
)

// The gateway-side sessions of stateless callers are keyed by the caller's identity and
// declared capabilities, at most a bound per caller (principal and agent).

// Key names the gateway-side session of a caller: who it is (every part of the
// identity that decides its view) and the capabilities it declares, which its upstream
// instances are told at their start (an upstream decides what to ask from them).
func Key(id *auth.Identity, caps json.RawMessage) string {
	k := struct {
		P, A, C, T, E, M string
		S, Tl            []string
		HasS, HasT, RO   bool
		Caps             string
	}{P: id.Principal, A: id.Agent, C: id.Conversation, T: id.Task, E: id.Executor, M: id.Method, Caps: canonical(caps)}
	if c := id.Claims; c != nil {
		k.S, k.Tl, k.HasS, k.HasT, k.RO = c.Servers, c.Tools, c.Servers != nil, c.Tools != nil, c.ReadOnly
	}
	b, _ := json.Marshal(k)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Caller names who a stateless caller is for the bound on its sessions
// (the gateway's bound on variants): its principal and agent only. Everything else a request may vary on
// its own (conversation, task, executor, capabilities) makes another variant of the same
// caller, so varying X-Conversation-ID cannot mint sessions beyond the bound.
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
