package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/integrity"
	"github.com/mcpgw/mcpgw/internal/registry/internal/toolsearch"
	"github.com/mcpgw/mcpgw/internal/schemabound"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// The bounds one hostile tool definition is held to, through everything the gateway does
// with an upstream's tool schema. They are far above what each step takes (milliseconds)
// so that a loaded machine and the fuzzer's instrumentation do not trip them.
const (
	fuzzSchemaTime  = 5 * time.Second * raceSlowdown
	fuzzSchemaAlloc = 1 << 30
)

// hostileSchema builds a schema of a hostile shape from a fuzzer's choice: kind picks the
// shape, n its size, part a piece of schema the fuzzer mutates, spliced in.
func hostileSchema(kind uint8, n uint16, part string) string {
	k := int(n % 200)
	if kind%9 != 0 && len(part) > 1<<10 {
		part = "{}" // spliced in up to 200 times: keep the whole near the schema bound
	}
	switch kind % 9 {
	case 1: // an exponential fan of $refs
		defs := []string{`"L0":` + orSchema(part)}
		for i := 1; i <= k%40; i++ {
			defs = append(defs, fmt.Sprintf(`"L%d":{"anyOf":[{"allOf":[{"$ref":"#/$defs/L%d"},{"minimum":5}]},{"allOf":[{"$ref":"#/$defs/L%d"},{"maximum":1}]}]}`, i, i-1, i-1))
		}
		return fmt.Sprintf(`{"type":"object","properties":{"n":{"$ref":"#/$defs/L%d"}},"$defs":{%s}}`, k%40, strings.Join(defs, ","))
	case 2: // deep properties nesting
		return strings.Repeat(`{"type":"object","properties":{"n":`, k*20) + orSchema(part) + strings.Repeat(`}}`, k*20)
	case 3: // deep same-value nesting
		return strings.Repeat(`{"allOf":[`, k*20) + orSchema(part) + strings.Repeat(`]}`, k*20)
	case 4: // a huge enum, up to twice the schema bound
		v := orSchema(part)
		return `{"type":"object","properties":{"n":{"enum":[` + strings.Repeat(v+",", min(int(n)*4, (256<<10)/(len(v)+1))) + `1]}}}`
	case 5: // a $ref cycle of length k, under a property or not
		defs := make([]string, 0, k+1)
		for i := 0; i <= k; i++ {
			defs = append(defs, fmt.Sprintf(`"c%d":{"anyOf":[{"$ref":"#/$defs/c%d"},%s]}`, i, (i+1)%(k+1), orSchema(part)))
		}
		at := `"$ref":"#/$defs/c0"`
		if n%2 == 0 {
			at = `"properties":{"n":{"$ref":"#/$defs/c0"}}`
		}
		return fmt.Sprintf(`{"type":"object",%s,"$defs":{%s}}`, at, strings.Join(defs, ","))
	case 6: // references outside the schema, absent, or to odd places
		refs := []string{"https://attacker.test/s.json", "#/$defs/none", "#nowhere", "other.json#/x", "#/properties/n/enum/0", "#/$defs/a~1b", "%"}
		return fmt.Sprintf(`{"properties":{"n":{"$ref":%q,"enum":[1]}},"$defs":{"a/b":%s}}`, refs[k%len(refs)], orSchema(part))
	case 7: // anchors and dynamic references
		return fmt.Sprintf(`{"$id":"https://e.test/r","$dynamicAnchor":"m","$defs":{"x":{"$anchor":"x","$dynamicAnchor":"m","anyOf":[{"$dynamicRef":"#m"},%s]}},"properties":{"n":{"$dynamicRef":"#m"},"o":{"$ref":"#x"}}}`, orSchema(part))
	case 8: // recursion that doubles at every level of the arguments
		return fmt.Sprintf(`{"$defs":{"t":{"type":"object","anyOf":[{"properties":{"n":{"$ref":"#/$defs/t"}}},{"properties":{"n":{"$ref":"#/$defs/t"}}},%s]}},"$ref":"#/$defs/t"}`, orSchema(part))
	}
	return part
}

// schemaPlugin is the plugintest fixture whose Deployment schema is a fuzzed one, read as
// the wire reads a plugin process's (internal/pluginproc: Decodable, then decoded).
type schemaPlugin struct {
	*plugintest.Fixture
	schema string
}

func (p schemaPlugin) ResourceSchema(ctx context.Context, conn, key string) (*jsonschema.Schema, error) {
	if key != plugintest.Deployment {
		return p.Fixture.ResourceSchema(ctx, conn, key)
	}
	if err := schemabound.Decodable([]byte(p.schema)); err != nil {
		return nil, err
	}
	s := new(jsonschema.Schema)
	return s, json.Unmarshal([]byte(p.schema), s)
}

// fuzzPluginSchema loads a plugin whose resource type has the schema, generates its tools
// and calls its create and update tools with each of args.
func fuzzPluginSchema(schema string, args ...string) {
	cat, err := plugin.Load(context.Background(), "fz", schemaPlugin{plugintest.New(), schema})
	if err != nil {
		return
	}
	ts := cat.Tools(plugin.Options{})
	for _, t := range ts.Tools {
		if t.Key != plugintest.Deployment || (t.Op != plugin.OperationCreate && t.Op != plugin.OperationUpdate) {
			continue
		}
		for _, a := range args {
			var m map[string]any
			if json.Unmarshal([]byte(a), &m) != nil {
				m = map[string]any{}
			}
			m["connectionId"], m["id"] = "prod", "web"
			b, _ := json.Marshal(m)
			_, _ = ts.Call(context.Background(), t.Def.Name, b, plugin.CallOptions{})
		}
	}
}

// orSchema is part when it is a JSON value, else an empty schema.
func orSchema(part string) string {
	if json.Valid([]byte(part)) {
		return part
	}
	return "{}"
}

// deepArgs is n levels of {"n":...} around 3.
func deepArgs(n int) string {
	return strings.Repeat(`{"n":`, n) + `3` + strings.Repeat(`}`, n)
}

// FuzzToolSchema feeds generated and hostile input schemas to every place the gateway
// processes an upstream's tool schema: the catalogue (ExposeTool and the schema check),
// the thin form, search indexing, integrity fingerprints, diff and heuristics, and
// argument validation; and, as a plugin's resource-type schema, to the plugin's catalogue
// load, tool generation and calls (fuzzPluginSchema). Each definition must be through all of them within time and
// memory bounds, without a crash.
func FuzzToolSchema(f *testing.F) {
	f.Add(uint8(0), uint16(0), `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"object"}]}},"$ref":"#/$defs/a","type":"object"}`, `{"n":3}`)
	f.Add(uint8(0), uint16(0), `{"type":"object","properties":{"n":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, `{"n":3}`)
	f.Add(uint8(1), uint16(30), `{"type":"number"}`, `{"n":3}`)
	f.Add(uint8(1), uint16(12), `{"type":"number"}`, `{"n":3}`)
	f.Add(uint8(2), uint16(3), `{"type":"string"}`, deepArgs(70))
	f.Add(uint8(3), uint16(100), `{"$ref":"#"}`, `{}`)
	f.Add(uint8(4), uint16(5000), `{"a":[1,2]}`, `{"n":{"a":[1,2]}}`)
	f.Add(uint8(5), uint16(3), `{"type":"object"}`, `{"n":{"n":{}}}`)
	f.Add(uint8(5), uint16(4), `{"type":"object"}`, `{"n":3}`)
	f.Add(uint8(6), uint16(0), `{}`, `{"n":1}`)
	f.Add(uint8(6), uint16(4), `{}`, `{"n":1}`)
	f.Add(uint8(7), uint16(0), `{"type":"string"}`, `{"n":"x","o":"y"}`)
	f.Add(uint8(8), uint16(0), `{"required":["n"]}`, deepArgs(40))
	f.Add(uint8(0), uint16(0), `{"type":"object","properties":{"path":{"type":"string","x-mcp-header":"Path"}},"required":["path"]}`, `{"path":1}`)
	f.Fuzz(checkFuzzedSchema)
}

// checkFuzzedSchema is one FuzzToolSchema input: the schema of shape kind goes through
// every step, then args and n levels of nested arguments are validated against it.
func checkFuzzedSchema(t *testing.T, kind uint8, n uint16, part, args string) {
	schema := hostileSchema(kind, n, part)
	def, err := json.Marshal(map[string]any{"name": "t", "description": "Fuzzed. It has two sentences.", "inputSchema": json.RawMessage(schema)})
	if err != nil {
		return // not JSON: no upstream list carries it
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()

	tool, err := ExposeTool("s", def, config.Naming{})
	if err != nil {
		return
	}
	tool.CheckSchema()
	_ = tool.Thin()
	ix := toolsearch.New([]toolsearch.Doc{searchDoc(tool)})
	_ = ix.Search("fuzzed path", 3)
	d := integrity.NewDef(integrity.KindTool, "t", def)
	_ = integrity.Diff(d.Raw, []byte(`{"name":"t","inputSchema":{"type":"object"}}`))
	_ = integrity.Suspicious(def, 0)
	_, _ = tool.ValidateArgs(json.RawMessage(args))
	_, _ = tool.ValidateArgs(json.RawMessage(deepArgs(int(n % 100))))
	fuzzPluginSchema(schema, args, deepArgs(int(n%100)))

	took := time.Since(start)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if took > fuzzSchemaTime {
		t.Errorf("%d-byte schema took %v (unvalidated: %q)", len(schema), took, tool.Unvalidated)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > fuzzSchemaAlloc {
		t.Errorf("%d-byte schema allocated %d bytes (unvalidated: %q)", len(schema), alloc, tool.Unvalidated)
	}
}
