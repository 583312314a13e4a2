package registry

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// TestValidateArgsBounded: a tool whose schema cannot be validated within bounds says why
// (Unvalidated) and lets every call through; an honest schema still refuses bad
// arguments; a schema bounded for shallow arguments checks those and lets through
// arguments too deep to check within the work bound.
func TestValidateArgsBounded(t *testing.T) {
	tool := func(schema string) *Tool {
		t.Helper()
		def, _ := json.Marshal(map[string]any{"name": "t", "inputSchema": json.RawMessage(schema)})
		tl, err := exposeTool("s", def, config.Naming{})
		if err != nil {
			t.Fatal(err)
		}
		tl.checkSchema()
		return tl
	}
	for name, schema := range map[string]string{
		"self anyOf": `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"object"}]}},"$ref":"#/$defs/a","type":"object"}`,
		"loop":       `{"type":"object","properties":{"n":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		"fan":        hostileSchema(1, 30, `{"type":"number"}`),
	} {
		tl := tool(schema)
		if !strings.Contains(tl.Unvalidated, "cannot be validated within bounds") {
			t.Errorf("%s: Unvalidated = %q", name, tl.Unvalidated)
		}
		if err := tl.ValidateArgs(json.RawMessage(`{"n":3}`)); err != nil {
			t.Errorf("%s: %v, want the call let through", name, err)
		}
	}

	honest := tool(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	if honest.Unvalidated != "" || honest.ValidateArgs(json.RawMessage(`{}`)) == nil || honest.ValidateArgs(json.RawMessage(`{"path":"/a"}`)) != nil {
		t.Errorf("honest schema: Unvalidated %q, or its arguments are not checked", honest.Unvalidated)
	}

	doubling := tool(hostileSchema(8, 0, `{"required":["m"]}`))
	if doubling.Unvalidated != "" {
		t.Fatalf("doubling: %s", doubling.Unvalidated)
	}
	if err := doubling.ValidateArgs(json.RawMessage(`{"n":3}`)); err == nil {
		t.Errorf("doubling: shallow arguments with a number for an object were not refused")
	}
	if err := doubling.ValidateArgs(json.RawMessage(deepArgs(30))); err != nil {
		t.Errorf("doubling: arguments 30 levels deep: %v, want them let through unchecked", err)
	}
}
