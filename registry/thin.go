package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// thinTool is a tool definition in the thin form (docs/sessions.md): the same name, the
// description cut to its first sentence, the input schema reduced to what a call needs,
// nothing else. Members keep a stable order.
func thinTool(def json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(def, &m); err != nil {
		return def
	}
	out := map[string]any{"name": m["name"]}
	var desc string
	if json.Unmarshal(m["description"], &desc) == nil && desc != "" {
		out["description"] = FirstSentence(desc)
	}
	var schema any
	if json.Unmarshal(m["inputSchema"], &schema) == nil && schema != nil {
		out["inputSchema"] = reduceSchema(schema)
	} else {
		out["inputSchema"] = map[string]any{"type": "object"}
	}
	// Annotations, titles, icons, output schemas and _meta are left to describe_tools: a
	// client that needs them asks for the full definition.
	b, err := json.Marshal(out)
	if err != nil {
		return def
	}
	return b
}

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

// schemaKeep are the JSON Schema keywords a caller needs to build valid arguments.
var schemaKeep = map[string]bool{
	"type": true, "properties": true, "required": true, "enum": true, "const": true,
	"items": true, "prefixItems": true, "anyOf": true, "oneOf": true, "allOf": true,
	"$ref": true, "$defs": true, "definitions": true,
}

func reduceSchema(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if !schemaKeep[k] {
				continue
			}
			switch k {
			case "properties", "$defs", "definitions":
				if props, ok := val.(map[string]any); ok {
					red := map[string]any{}
					for name, p := range props {
						red[name] = reduceSchema(p)
					}
					out[k] = red
					continue
				}
			case "items":
				out[k] = reduceSchema(val)
				continue
			case "anyOf", "oneOf", "allOf", "prefixItems":
				if list, ok := val.([]any); ok {
					red := make([]any, len(list))
					for i, p := range list {
						red[i] = reduceSchema(p)
					}
					out[k] = red
					continue
				}
			}
			out[k] = val
		}
		return out
	default:
		return v
	}
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
func (t *Tool) ValidateArgs(args json.RawMessage) error {
	t.schemaOnce.Do(func() {
		var def struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(t.Def, &def) == nil && len(def.InputSchema) > 0 {
			var s jsonschema.Schema
			if json.Unmarshal(def.InputSchema, &s) == nil {
				t.schema, _ = s.Resolve(nil)
			}
		}
	})
	rs := t.schema
	if rs == nil {
		return nil
	}
	var inst any = map[string]any{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &inst); err != nil {
			return err
		}
	}
	return rs.Validate(inst)
}

// InputSchema returns the tool's full input schema bytes.
func (t *Tool) InputSchema() json.RawMessage {
	var def struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	_ = json.Unmarshal(t.Def, &def)
	return def.InputSchema
}
