// Package schemabound decides, before an upstream's tool input schema reaches the JSON
// Schema validator, whether validating arguments against it stays within bounds of depth,
// work and memory; a schema that does not is served and its calls forwarded unvalidated.
package schemabound

import (
	"encoding/json"
	"fmt"
)

// The bounds. An honest schema is far inside each: the largest seen in public MCP servers
// are tens of kilobytes, a dozen levels deep, with a few hundred subschemas. The numbers
// are not settings: an operator has no reason to trade them, and each is measured
// (docs/decisions.md, "Bounded schema validation").
const (
	// MaxSchemaBytes is the largest input schema validated. Decoding a schema into the
	// validator's types re-reads each subschema's bytes once per level above it, so this
	// and MaxSchemaDepth together bound that work.
	MaxSchemaBytes = 128 << 10
	// MaxSchemaDepth is the deepest JSON nesting of a validated schema.
	MaxSchemaDepth = 32
	// MaxArgsDepth is the deepest argument nesting validated where the schema still
	// applies; a call whose arguments go deeper is forwarded unvalidated.
	MaxArgsDepth = 64
	// MaxWork bounds the estimated work of one validation, in units of one subschema
	// applied to one value (ApplyCost units) plus one unit per entry checked one by one
	// (an enum value, a required name, a member of the value). The validator takes about
	// 10 µs to apply one subschema; MaxWork is about 50 ms of it.
	MaxWork = 5000 * ApplyCost
	// ApplyCost is the work of applying one subschema to one value, in MaxWork units.
	ApplyCost = 16
	// MatchSteps is how many steps of matching a regular expression (one byte of the
	// string through one instruction) make one MaxWork unit: Go's matcher takes about
	// 11 ns a step, so MaxWork is about 4.5 million steps, 50 ms.
	MatchSteps = 64
	// MaxPatternInsts bounds the regular expressions of a schema (every pattern and
	// patternProperties key together), in the instructions they compile to: a repeat
	// compiles its operand once per count, so 2.7 KB of \pL{1000} is 300,000 of them,
	// 0.4 s to compile and 15 MB kept. 20,000 compile in about 30 ms.
	MaxPatternInsts = 20_000
	// MaxDecodeCost bounds the bytes × nesting levels of a schema decoded into the
	// validator's types at all (Decodable): its decoder re-reads each level's bytes, about
	// 23 ms per MiB per level, so this is about 1.5 s. It is far above MaxSchemaBytes ×
	// MaxSchemaDepth: a schema may be served (and its calls go unvalidated) although it is
	// too big to validate.
	MaxDecodeCost = 64 << 20
)

// Decodable reports whether a schema (JSON) may be decoded into jsonschema-go's types at
// all, before it is: the decoder's time grows with bytes × nesting depth, and a schema
// over MaxDecodeCost would hold a CPU for seconds to minutes (1,000 levels over 1 MiB took
// 23 s).
func Decodable(schema []byte) error {
	d := jsonDepth(schema)
	if uint64(d)*uint64(len(schema)) > MaxDecodeCost {
		return fmt.Errorf("the schema is %d bytes nested %d levels deep, over the %d MiB × levels decoded", len(schema), d, MaxDecodeCost>>20)
	}
	return nil
}

// Why a call goes unvalidated, as the metrics label it (mcpgw_unvalidated_calls_total).
const (
	// ReasonSchema: the tool's schema was refused by Check.
	ReasonSchema = "schema"
	// ReasonArguments: the call's arguments passed the work bound (Plan.Admits false).
	ReasonArguments = "arguments"
)

// Plan is a schema Check found bounded, ready to estimate the work of one validation.
type Plan struct {
	g *graph
}

// Check analyses a tool's input schema (JSON). It returns a plan when validation can be
// bounded, or an error that says why it cannot: too big or deep, a $ref that does not
// resolve inside the schema, a $ref cycle that never descends into the arguments (it
// recurses without end), or a fan of $refs that applies more than MaxWork to one value.
func Check(schema []byte) (*Plan, error) {
	if len(schema) > MaxSchemaBytes {
		return nil, fmt.Errorf("the schema is %d bytes, over the %d validated", len(schema), MaxSchemaBytes)
	}
	if d := jsonDepth(schema); d > MaxSchemaDepth {
		return nil, fmt.Errorf("the schema nests over %d levels deep", MaxSchemaDepth)
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("the schema is not JSON: %v", err)
	}
	g := newGraph()
	if err := g.build(root); err != nil {
		return nil, err
	}
	order, err := g.sameValueOrder()
	if err != nil {
		return nil, err
	}
	if i, w := g.heaviestClosure(order); w > MaxWork {
		return nil, fmt.Errorf("a fan of $refs applies subschemas of weight over %d to one value (at %s)", MaxWork, g.where(i))
	}
	return &Plan{g: g}, nil
}

// Admits reports whether validating args (a decoded JSON value) is estimated within
// MaxWork and MaxArgsDepth. The estimate walks the arguments with the schema as the
// validator would, one step per subschema applied to a value, and stops as soon as the
// work passes MaxWork: it takes at most MaxWork/ApplyCost steps.
func (p *Plan) Admits(args any) bool {
	if len(p.g.nodes) == 0 {
		return true
	}
	e := estimate{g: p.g}
	return e.cost(0, args, 0) <= MaxWork && !e.over
}

// jsonDepth is the deepest nesting of objects and arrays in b (valid JSON or not), read
// without decoding.
func jsonDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
