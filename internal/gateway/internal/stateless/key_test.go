package stateless

import (
	"encoding/json"
	"testing"

	"github.com/mcpgw/mcpgw/internal/auth"
)

func TestKey(t *testing.T) {
	a := &auth.Identity{Principal: "p", Agent: "a", Conversation: "c1"}
	k1 := Key(a, &Request{Caps: json.RawMessage(`{"sampling":{},"elicitation":{}}`)})
	if k1 != Key(a, &Request{Caps: json.RawMessage(`{ "elicitation":{}, "sampling":{} }`)}) {
		t.Error("two spellings of the same capabilities name two sessions")
	}
	if k1 == Key(a, &Request{Caps: json.RawMessage(`{"sampling":{}}`)}) {
		t.Error("other capabilities name the same session")
	}
	b := *a
	b.Conversation = "c2"
	if k1 == Key(&b, &Request{Caps: json.RawMessage(`{"sampling":{},"elicitation":{}}`)}) {
		t.Error("another conversation names the same session")
	}
	if Caller(a) != Caller(&b) {
		t.Error("a caller's conversations are not one caller")
	}
	caps := json.RawMessage(`{"sampling":{}}`)
	info := func(name string) json.RawMessage { return json.RawMessage(`{"name":"` + name + `","version":"1"}`) }
	if Key(a, &Request{Caps: caps, Info: info("cursor-vscode")}) == Key(a, &Request{Caps: caps, Info: info("claude-code")}) {
		t.Error("two clients of one caller name the same session: the first would shape the other's lists")
	}
	if Key(a, &Request{Caps: caps, Form: "thin"}) == Key(a, &Request{Caps: caps}) {
		t.Error("a request asking for the thin form names the session of one asking for none")
	}
	c := *a
	c.Agent = "other"
	if Caller(a) == Caller(&c) {
		t.Error("two agents are one caller")
	}
	d := *a
	d.Claims = &auth.Claims{Servers: []string{}}
	if Key(a, &Request{}) == Key(&d, &Request{}) {
		t.Error("a token narrowed to no server names the unnarrowed session")
	}
}
