package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/internal/schemabound"
)

// thinTool is a tool definition in the thin form (docs/sessions.md): the same name, the
// description cut to its first sentence and at most thinDescMax bytes, and an input schema
// that names what a call must send (thinSchema), or, where that reduction cannot state it
// faithfully, the whole schema without its free text (wholeSchema); nothing else. Members
// keep a stable order.
func thinTool(def json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(def, &m); err != nil {
		return def
	}
	out := map[string]any{"name": m["name"]}
	var desc string
	if json.Unmarshal(m["description"], &desc) == nil && desc != "" {
		out["description"] = shortDescription(desc, thinDescMax)
	}
	var schema map[string]any
	_ = json.Unmarshal(m["inputSchema"], &schema)
	if whole, ok := wholeSchema(schema, m["inputSchema"]); ok {
		out["inputSchema"] = whole
	} else {
		out["inputSchema"] = thinSchema(schema)
	}
	// Annotations, titles, icons, output schemas and _meta are left to describe_tools: a
	// client that needs them asks for the full definition. A UI resource link stays: the
	// host, not the model, reads it, to render the tool's app when the tool is called.
	if ui := uiMeta(m["_meta"]); ui != nil {
		out["_meta"] = ui
	}
	b, err := json.Marshal(out)
	if err != nil {
		return def
	}
	return b
}

// thinDescMax bounds a thin description, in bytes.
const thinDescMax = 60

// shortDescription is s's first sentence, at most limit bytes: past that it ends at the
// last clause boundary (a comma, semicolon, colon, dash or parenthesis) that keeps at least
// limit/3 bytes, else at a word boundary with an ellipsis.
func shortDescription(s string, limit int) string {
	s = FirstSentence(s)
	if len(s) <= limit {
		return s
	}
	head := s[:limit]
	clause := -1
	for _, sep := range []string{", ", "; ", ": ", " - ", " (", " — "} {
		clause = max(clause, strings.LastIndex(head, sep))
	}
	if clause >= limit/3 {
		return strings.TrimRight(s[:clause], " ,;:-")
	}
	cut := strings.LastIndexByte(head, ' ')
	if cut < limit/2 {
		cut = limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return strings.TrimRight(s[:cut], " ,;:-") + "…"
}

// thinSchema is the thin form's input schema: an object whose properties are the ones a
// call must send (and those bound to a header), each reduced to its type (and an enum of at most thinEnumMax values, or a
// const: values a call cannot guess). It is a relaxation of the full schema (every call the
// full schema takes, it takes): no "required" list, since what is listed is what is
// required, and no optional properties, nested structure, descriptions, formats or bounds.
// Those are in describe_tools, and schema-on-error answers a call the full schema refuses
// with that schema.
func thinSchema(schema map[string]any) map[string]any {
	out := map[string]any{"type": "object"}
	req, _ := schema["required"].([]any)
	props, _ := schema["properties"].(map[string]any)
	keep := map[string]any{}
	for _, r := range req {
		if name, ok := r.(string); ok {
			keep[name] = thinProperty(props[name])
		}
	}
	// An argument bound to a header (x-mcp-header) stays, optional or not, with its binding:
	// a client of the 2026-07-28 revision sends the header from it, and a call without the
	// header a server expects is refused.
	for name, p := range props {
		if m, ok := p.(map[string]any); ok && m[paramHeaderKey] != nil {
			keep[name] = thinProperty(p)
		}
	}
	if len(keep) > 0 {
		out["properties"] = keep
	}
	return out
}

// wholeSchema is the thin form of an input schema the reduction (thinSchema) cannot state
// faithfully: one whose top level says more than "an object of these named arguments, these
// required", such as $defs and $ref, allOf/anyOf/oneOf/not, if/then/else, $id or $anchor.
// What such a schema requires of a call depends on those keywords (which of two arguments
// is required may hang on a third's value), and the protocol has a schema keep them
// (SEP-1613, SEP-2106), so it is listed whole, with only its free text dropped
// (withoutText). ok is false for a schema the reduction states faithfully, or one that
// does not decode.
func wholeSchema(schema map[string]any, raw json.RawMessage) (whole any, ok bool) {
	if schema == nil {
		return nil, false
	}
	reducible := true
	for k := range schema {
		if !reducibleKeyword(k) {
			reducible = false
			break
		}
	}
	if reducible {
		return nil, false
	}
	// Numbers stay as written: a bound or a const past 2^53 must not come back rounded.
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var s any
	if d.Decode(&s) != nil {
		return nil, false
	}
	return withoutText(s), true
}

// reducibleKeyword reports whether thinSchema states a top-level keyword faithfully:
// named arguments and which are required. Dropping additionalProperties, or a $schema (the
// reduced schema's keywords mean the same in every dialect), only relaxes the schema, and a
// call the full schema refuses still gets schema-on-error.
func reducibleKeyword(k string) bool {
	switch k {
	case "type", "properties", "required", "additionalProperties", "$schema":
		return true
	}
	return valueOf(k) == textValue
}

// keywordValue is what a schema keyword's value is, to withoutText.
type keywordValue int

const (
	dataValue         keywordValue = iota // anything else: kept as written
	textValue                             // free text, left out of a whole thin schema
	subschemaValue                        // a subschema or a list of subschemas
	subschemaMapValue                     // names to subschemas (draft-07's dependencies: or to lists of names, kept)
)

// valueOf is what keyword k's value is.
func valueOf(k string) keywordValue {
	switch k {
	case "description", "title", "examples", "$comment":
		return textValue
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies":
		return subschemaMapValue
	case "items", "prefixItems", "additionalItems", "contains", "additionalProperties",
		"unevaluatedProperties", "unevaluatedItems", "propertyNames", "not", "if", "then", "else",
		"allOf", "anyOf", "oneOf", "contentSchema":
		return subschemaValue
	}
	return dataValue
}

// withoutText is schema s without its free text (textValue keywords) wherever a subschema
// stands. Everything else is kept as written: every keyword, and every value that is data
// rather than a schema (enum, const, default, a property named "description"). encoding/json
// bounds the nesting it decodes, so the walk is bounded too.
func withoutText(s any) any {
	switch v := s.(type) {
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutText(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			switch valueOf(k) {
			case textValue:
			case subschemaMapValue:
				out[k] = eachWithoutText(x)
			case subschemaValue:
				out[k] = withoutText(x)
			default:
				out[k] = x
			}
		}
		return out
	}
	return s
}

// eachWithoutText is a map of subschemas, each withoutText; anything else as it is.
func eachWithoutText(x any) any {
	m, ok := x.(map[string]any)
	if !ok {
		return x
	}
	out := make(map[string]any, len(m))
	for name, sub := range m {
		out[name] = withoutText(sub)
	}
	return out
}

// thinEnumMax is the longest enum a thin property keeps.
const thinEnumMax = 3

// thinProperty is one required property in the thin form: its type, and a short enum or a
// const.
func thinProperty(p any) map[string]any {
	out := map[string]any{}
	m, ok := p.(map[string]any)
	if !ok {
		return out
	}
	if t, ok := m["type"]; ok && true {
		out["type"] = t
	}
	if e, ok := m["enum"].([]any); ok && len(e) <= thinEnumMax {
		out["enum"] = e
	}
	if c, ok := m["const"]; ok {
		out["const"] = c
	}
	if h, ok := m[paramHeaderKey]; ok {
		out[paramHeaderKey] = h
	}
	return out
}

// paramHeaderKey is the JSON Schema keyword that binds a tool argument to an HTTP header
// (the 2026-07-28 revision's Mcp-Param headers).
const paramHeaderKey = "x-mcp-header"

// FirstSentence is text up to and including its first sentence end (or first line).
func FirstSentence(s string) string {
	s = strings.TrimSpace(s)
	end := len(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < end {
		end = i
	}
	for _, sep := range []string{". ", "! ", "? "} {
		if i := strings.Index(s[:end], sep); i >= 0 && i+1 < end {
			end = i + 1
		}
	}
	return strings.TrimSpace(s[:end])
}

// Hash identifies the view's tool definitions (full form): two views with the same hash
// list the same bytes.
func (v *View) Hash() string {
	v.hashOnce.Do(func() {
		h := sha256.New()
		for _, t := range v.Tools {
			h.Write(t.Def)
			h.Write([]byte{0})
		}
		v.hash = hex.EncodeToString(h.Sum(nil)[:16])
	})
	return v.hash
}

// OthersHash identifies the view's prompts, resources and templates.
func (v *View) OthersHash() string {
	v.othersOnce.Do(func() {
		h := sha256.New()
		for _, p := range v.Prompts {
			h.Write(p.Def)
			h.Write([]byte{0})
		}
		for _, r := range v.Resources {
			h.Write(r.Def)
			h.Write([]byte{0})
		}
		for _, r := range v.Templates {
			h.Write(r.Def)
			h.Write([]byte{0})
		}
		v.othersHash = hex.EncodeToString(h.Sum(nil)[:16])
	})
	return v.othersHash
}

// ValidateArgs checks arguments against the tool's full input schema (JSON Schema
// 2020-12). A schema that cannot be compiled validates nothing. The compiled schema lives
// on the tool, so it goes when the catalogue that holds the tool goes.
//
// An upstream's schema is untrusted: one that cannot be validated within bounds (a $ref
// cycle on one value, an exponential fan, too big or deep: Unvalidated says which) is
// never handed to the validator, and arguments whose validation would pass the work
// bound are not checked either; both are forwarded as they are, for the upstream to judge.
// unvalidated says which (schemabound.ReasonSchema or ReasonArguments), "" when the
// arguments were checked (or the tool has no schema to check them against).
func (t *Tool) ValidateArgs(args json.RawMessage) (unvalidated string, err error) {
	t.schemaOnce.Do(t.compileSchema)
	rs := t.schema
	if rs == nil {
		if t.Unvalidated != "" {
			return schemabound.ReasonSchema, nil
		}
		return "", nil
	}
	var inst any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &inst); err != nil {
			return "", err
		}
	}
	if !t.bound.Admits(inst) {
		return schemabound.ReasonArguments, nil
	}
	return "", rs.Validate(inst)
}

// CheckSchema bounds the work of validating against the tool's input schema, once: it
// sets bound, or Unvalidated to why there is none.
func (t *Tool) CheckSchema() {
	if t.bound != nil || t.Unvalidated != "" {
		return
	}
	schema := t.InputSchema()
	if len(schema) == 0 {
		return
	}
	p, err := schemabound.Check(schema)
	if err != nil {
		t.Unvalidated = "its input schema cannot be validated within bounds: " + err.Error()
		return
	}
	t.bound = p
}

// compileSchema compiles the tool's input schema for ValidateArgs, once it is known to be
// bounded.
func (t *Tool) compileSchema() {
	t.CheckSchema()
	if t.bound == nil {
		return
	}
	var s jsonschema.Schema
	if json.Unmarshal(t.InputSchema(), &s) == nil {
		t.schema, _ = s.Resolve(nil)
	}
}

// InputSchema returns the tool's full input schema bytes.
func (t *Tool) InputSchema() json.RawMessage {
	var def struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	_ = json.Unmarshal(t.Def, &def)
	return def.InputSchema
}
