package stateless

import (
	"encoding/json"
	"testing"

	"github.com/mcpgw/mcpgw/auth"
)

func TestKey(t *testing.T) {
	a := &auth.Identity{Principal: "p", Agent: "a", Conversation: "c1"}
	k1 := Key(a, json.RawMessage(`{"sampling":{},"elicitation":{}}`))
	if k1 != Key(a, json.RawMessage(`{ "elicitation":{}, "sampling":{} }`)) {
		t.Error("two spellings of the same capabilities name two sessions")
	}
	if k1 == Key(a, json.RawMessage(`{"sampling":{}}`)) {
		t.Error("other capabilities name the same session")
	}
	b := *a
	b.Conversation = "c2"
	if k1 == Key(&b, json.RawMessage(`{"sampling":{},"elicitation":{}}`)) {
		t.Error("another conversation names the same session")
	}
	if Caller(a) != Caller(&b) {
		t.Error("a caller's conversations are not one caller")
	}
	c := *a
	c.Agent = "other"
	if Caller(a) == Caller(&c) {
		t.Error("two agents are one caller")
	}
	d := *a
	d.Claims = &auth.Claims{Servers: []string{}}
	if Key(a, nil) == Key(&d, nil) {
		t.Error("a token narrowed to no server names the unnarrowed session")
	}
}
