package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/schemabound"
)

// TestValidateArgsBounded: a tool whose schema cannot be validated within bounds says why
// (Unvalidated) and lets every call through; an honest schema still refuses bad
// arguments; a schema bounded for shallow arguments checks those and lets through
// arguments too deep to check within the work bound.
func TestValidateArgsBounded(t *testing.T) {
	tool := func(schema string) *Tool {
		t.Helper()
		def, _ := json.Marshal(map[string]any{"name": "t", "inputSchema": json.RawMessage(schema)})
		tl, err := ExposeTool("s", def, config.Naming{})
		if err != nil {
			t.Fatal(err)
		}
		tl.CheckSchema()
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
		if why, err := tl.ValidateArgs(json.RawMessage(`{"n":3}`)); err != nil || why != schemabound.ReasonSchema {
			t.Errorf("%s: %q, %v; want the call let through, unvalidated for its schema", name, why, err)
		}
	}

	honest := tool(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	_, errMissing := honest.ValidateArgs(json.RawMessage(`{}`))
	why, errOK := honest.ValidateArgs(json.RawMessage(`{"path":"/a"}`))
	if honest.Unvalidated != "" || errMissing == nil || errOK != nil || why != "" {
		t.Errorf("honest schema: Unvalidated %q, or its arguments are not checked (%v, %v, %q)", honest.Unvalidated, errMissing, errOK, why)
	}

	doubling := tool(hostileSchema(8, 0, `{"required":["m"]}`))
	if doubling.Unvalidated != "" {
		t.Fatalf("doubling: %s", doubling.Unvalidated)
	}
	if _, err := doubling.ValidateArgs(json.RawMessage(`{"n":3}`)); err == nil {
		t.Errorf("doubling: shallow arguments with a number for an object were not refused")
	}
	if why, err := doubling.ValidateArgs(json.RawMessage(deepArgs(30))); err != nil || why != schemabound.ReasonArguments {
		t.Errorf("doubling: arguments 30 levels deep: %q, %v; want them let through unchecked for their work", why, err)
	}
}
