package schemabound

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// fan is $defs L0..Ln, each L(i) two allOf branches over L(i-1), one property at Ln:
// validating a number against it applies about 5·2^n subschemas.
func fan(n int) string {
	defs := []string{`"L0":{"type":"number"}`}
	for i := 1; i <= n; i++ {
		defs = append(defs, fmt.Sprintf(`"L%d":{"anyOf":[{"allOf":[{"$ref":"#/$defs/L%d"},{"minimum":5}]},{"allOf":[{"$ref":"#/$defs/L%d"},{"maximum":1}]}]}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"type":"object","properties":{"n":{"$ref":"#/$defs/L%d"}},"$defs":{%s}}`, n, strings.Join(defs, ","))
}

// nested is n levels of {"properties":{"a":...}} around {"type":"string"}.
func nested(n int) string {
	return strings.Repeat(`{"type":"object","properties":{"a":`, n) + `{"type":"string"}` + strings.Repeat(`}}`, n)
}

func TestCheck(t *testing.T) {
	tree := `{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`
	for _, c := range []struct {
		name, schema, wantErr string
	}{
		{"empty", `{}`, ""},
		{"boolean", `true`, ""},
		{"plain", `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, ""},
		{"recursive through items", tree, ""},
		{"anchor", `{"$defs":{"x":{"$anchor":"x","type":"string"}},"properties":{"a":{"$ref":"#x"}}}`, ""},
		{"embedded resource", `{"$id":"https://e.test/root.json","$defs":{"x":{"$id":"x.json","$defs":{"y":{"type":"string"}},"$ref":"#/$defs/y"}},"properties":{"a":{"$ref":"x.json"}}}`, ""},
		{"escaped pointer", `{"$defs":{"a/b~c":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/a~1b~0c"}}}`, ""},
		{"fan of 6", fan(6), ""},
		{"self anyOf", `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"object"}]}},"$ref":"#/$defs/a","type":"object"}`, "cycle"},
		{"loop a b", `{"type":"object","properties":{"n":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`, "cycle"},
		{"root self", `{"$ref":"#"}`, "cycle"},
		{"through not", `{"not":{"$ref":"#"}}`, "cycle"},
		{"through if", `{"if":{"$ref":"#"},"then":true}`, "cycle"},
		{"through dependentSchemas", `{"dependentSchemas":{"a":{"$ref":"#"}}}`, "cycle"},
		{"dynamic", `{"$dynamicAnchor":"m","properties":{"a":{"$dynamicRef":"#m"}},"allOf":[{"$dynamicRef":"#m"}]}`, "cycle"},
		{"fan of 30", fan(30), "fan of $refs"},
		{"remote", `{"properties":{"a":{"$ref":"https://e.test/other.json"}}}`, "outside"},
		{"absent", `{"properties":{"a":{"$ref":"#/$defs/none"}}}`, "nothing at"},
		{"absent anchor", `{"properties":{"a":{"$ref":"#none"}}}`, "no anchor"},
		{"not a schema", `{"enum":[{"x":1}],"properties":{"a":{"$ref":"#/enum/0"}}}`, "not a subschema"},
		{"deep", nested(40), "nests"},
		{"big", `{"enum":[` + strings.Repeat(`"aaaaaaaa",`, 30000) + `"a"]}`, "bytes"},
		{"id with fragment", `{"$defs":{"a":{"$id":"#a"}}}`, "fragment"},
		{"anchor twice", `{"$defs":{"x":{"$anchor":"a","anyOf":[{"$ref":"#a"}]},"y":{"$anchor":"a"}},"properties":{"n":{"$ref":"#a"}}}`, "named twice"},
		{"id twice", `{"$defs":{"x":{"$id":"u.json"},"y":{"$id":"u.json"}}}`, "names two"},
		{"honest patterns", `{"properties":{"e":{"type":"string","pattern":"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$"}},"patternProperties":{"^x-[a-z]{1,64}$":{}}}`, ""},
		{"repeated class", `{"properties":{"s":{"type":"string","pattern":"` + strings.Repeat(`\\pL{1000}`, 21) + `"}}}`, "instructions"},
		{"nested repeats", `{"patternProperties":{"((a{1000}){1000})":{}}}`, "does not compile"},
		{"many patterns", manyPatterns(30), "instructions"},
		{"bad pattern", `{"properties":{"s":{"pattern":"(a"}}}`, "does not compile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Check([]byte(c.schema))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("Check: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("Check: %v, want an error with %q", err, c.wantErr)
			case c.wantErr == "" && !p.Admits(map[string]any{"a": "x", "n": 3.0}):
				t.Fatalf("a small call is not admitted")
			}
		})
	}
}

// TestAdmitsBoundsArguments: a schema that is fine for small arguments does not admit
// arguments wide or deep enough to exceed the work bound where it still applies.
func TestAdmitsBoundsArguments(t *testing.T) {
	tree := `{"$defs":{"node":{"type":"object","anyOf":[{"properties":{"c":{"$ref":"#/$defs/node"}}},{"properties":{"c":{"$ref":"#/$defs/node"}}}]}},"$ref":"#/$defs/node"}`
	p, err := Check([]byte(tree))
	if err != nil {
		t.Fatal(err)
	}
	// 2^k subschemas apply at depth k: a call 20 levels deep is over the bound, a shallow
	// one is not.
	doubling := any(map[string]any{})
	for range 20 {
		doubling = map[string]any{"c": doubling}
	}
	if p.Admits(doubling) || !p.Admits(map[string]any{"c": map[string]any{}}) {
		t.Errorf("doubling recursion: 20 levels admitted %v, 1 level %v", p.Admits(doubling), p.Admits(map[string]any{"c": map[string]any{}}))
	}
	list := `{"type":"object","properties":{"xs":{"type":"array","items":{"$ref":"#/$defs/v"}}},"$defs":{"v":{"type":"object","properties":{"xs":{"$ref":"#/properties/xs"}}}}}`
	p, err = Check([]byte(list))
	if err != nil {
		t.Fatal(err)
	}
	deep := any("leaf")
	for range MaxArgsDepth + 2 {
		deep = map[string]any{"xs": []any{deep}}
	}
	if p.Admits(deep) {
		t.Errorf("arguments %d levels deep admitted where the schema still applies", MaxArgsDepth+2)
	}
	wide := make([]any, MaxWork)
	for i := range wide {
		wide[i] = map[string]any{}
	}
	if p.Admits(map[string]any{"xs": wide}) {
		t.Errorf("%d elements admitted", len(wide))
	}
	if !p.Admits(map[string]any{"xs": []any{map[string]any{"xs": []any{}}}}) {
		t.Errorf("a small call not admitted")
	}
	// Past where the schema applies, depth costs nothing.
	plain, _ := Check([]byte(`{"type":"object"}`))
	if !plain.Admits(deep) {
		t.Errorf("deep arguments to a flat schema not admitted")
	}
}

// TestWorstAdmittedValidation measures the worst shape Check admits (the largest fan under
// MaxWork, and a huge enum) through the validator, and fails when one validation takes
// over a second: the bound must keep each validation short on a loaded machine.
func TestWorstAdmittedValidation(t *testing.T) {
	worst := ""
	for n := 1; n < 30; n++ {
		if _, err := Check([]byte(fan(n))); err != nil {
			break
		}
		worst = fan(n)
	}
	enum := `{"type":"object","properties":{"n":{"enum":[` + strings.Repeat(`{"a":1},`, 15000) + `3]}}}`
	for name, schema := range map[string]string{"fan": worst, "enum": enum} {
		p, err := Check([]byte(schema))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(schema), &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		args := map[string]any{"n": 3.0}
		if !p.Admits(args) {
			t.Fatalf("%s: the call is not admitted", name)
		}
		start := time.Now()
		_ = rs.Validate(args)
		took := time.Since(start)
		t.Logf("%s: one validation %v", name, took)
		if took > 5*time.Second {
			t.Errorf("%s: one validation took %v", name, took)
		}
	}
}

// TestResolveBounded: the validator's Resolve follows each $ref once, whatever Check says
// of the schema: it finishes on every hostile shape, and on the deepest, largest schema
// Check admits (decoding re-reads each level's bytes) within a second.
func TestResolveBounded(t *testing.T) {
	deepest := strings.Repeat(`{"not":`, MaxSchemaDepth-1) + `{"description":"` + strings.Repeat("x", MaxSchemaBytes-20*MaxSchemaDepth) + `"}` + strings.Repeat(`}`, MaxSchemaDepth-1)
	if _, err := Check([]byte(deepest)); err != nil {
		t.Fatalf("the deepest, largest schema: %v", err)
	}
	for name, schema := range map[string]string{
		"self anyOf": `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"object"}]}},"$ref":"#/$defs/a","type":"object"}`,
		"loop":       `{"type":"object","properties":{"n":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
		"fan of 30":  fan(30),
		"dynamic":    `{"$dynamicAnchor":"m","allOf":[{"$dynamicRef":"#m"}]}`,
		"remote":     `{"$ref":"https://attacker.test/s.json"}`,
		"deepest":    deepest,
	} {
		start := time.Now()
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(schema), &s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err := s.Resolve(nil)
		took := time.Since(start)
		t.Logf("%s: decoded and resolved in %v (%v)", name, took, err)
		if took > 5*time.Second {
			t.Errorf("%s: decoding and resolving took %v", name, took)
		}
	}
}

// TestDecodable: a schema is refused for decoding by bytes × depth, not by either alone.
func TestDecodable(t *testing.T) {
	deep := func(levels, leaf int) []byte {
		return []byte(strings.Repeat(`{"not":`, levels) + `{"description":"` + strings.Repeat("x", leaf) + `"}` + strings.Repeat("}", levels))
	}
	for _, c := range []struct {
		levels, leaf int
		ok           bool
	}{{10, 1 << 20, true}, {1000, 1 << 10, true}, {300, 1 << 20, false}, {0, 32 << 20, true}, {100, 1 << 20, false}} {
		if err := Decodable(deep(c.levels, c.leaf)); (err == nil) != c.ok {
			t.Errorf("%d levels over %d bytes: %v, want decodable %v", c.levels, c.leaf, err, c.ok)
		}
	}
}

// manyPatterns is a schema of n properties, each with the pattern [a-z]{1000}: each
// alone is within MaxPatternInsts, not all together.
func manyPatterns(n int) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"s%d":{"type":"string","pattern":"[a-z]{1000}"}`, i)
	}
	return `{"properties":{` + strings.Join(props, ",") + `}}`
}

// TestAdmitsCountsMatching: matching a string against a pattern costs its length times
// the pattern's instructions; a long string against a large pattern is past MaxWork, a
// short one, or a long one against a small pattern, is not.
func TestAdmitsCountsMatching(t *testing.T) {
	big := `^` + strings.Repeat(`(a|aa)*`, 2800) + `$`
	for _, c := range []struct {
		name, schema string
		args         any
		want         bool
	}{
		{"short string, large pattern", fmt.Sprintf(`{"properties":{"s":{"pattern":%q}}}`, big), map[string]any{"s": "aaaa"}, true},
		{"long string, large pattern", fmt.Sprintf(`{"properties":{"s":{"pattern":%q}}}`, big), map[string]any{"s": strings.Repeat("a", 64<<10)}, false},
		{"long string, small pattern", `{"properties":{"s":{"pattern":"^[a-z]+$"}}}`, map[string]any{"s": strings.Repeat("a", 64<<10)}, true},
		{"long names, large key pattern", fmt.Sprintf(`{"patternProperties":{%q:{}}}`, big), map[string]any{strings.Repeat("a", 64<<10): 1}, false},
	} {
		p, err := Check([]byte(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := p.Admits(c.args); got != c.want {
			t.Errorf("%s: Admits = %v, want %v", c.name, got, c.want)
		}
	}
}
