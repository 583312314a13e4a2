package gateway

import (
	"encoding/json"
	"testing"
)

// TestParamHeaders: the Mcp-Param headers of a tool that mirrors arguments (nested ones
// too, a Base64 sentinel for what is no plain ASCII), none for one that does not, and no
// allocation on the forwarding path for the latter (docs/architecture.md, hot-path rules).
func TestParamHeaders(t *testing.T) {
	def := json.RawMessage(`{"name":"w","inputSchema":{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":"number","x-mcp-header":"N"},
		"opt":{"type":"object","properties":{"flag":{"type":"boolean","x-mcp-header":"Flag"}}}}}}`)
	got := paramHeaders(def, json.RawMessage(`{"region":" eu ","n":2.5,"opt":{"flag":true}}`))
	want := map[string]string{"Mcp-Param-Region": "=?base64?IGV1IA==?=", "Mcp-Param-N": "2.5", "Mcp-Param-Flag": "true"}
	if len(got) != len(want) {
		t.Fatalf("headers %v, want %v", got, want)
	}
	for _, h := range got {
		if want[h.Name] != h.Value {
			t.Errorf("%s: %q, want %q", h.Name, h.Value, want[h.Name])
		}
	}
	plain := json.RawMessage(`{"name":"p","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`)
	args := json.RawMessage(`{"a":"x"}`)
	if n := testing.AllocsPerRun(100, func() { _ = paramHeaders(plain, args) }); n != 0 {
		t.Errorf("a tool without x-mcp-header: %v allocations per call, want 0", n)
	}
}
