package plugin

import (
	"slices"
	"sort"

	"github.com/google/jsonschema-go/jsonschema"
)

// object starts an input schema with the tool's control arguments in a fixed order.
type object struct {
	s *jsonschema.Schema
	t *Tool
}

func newObject(t *Tool) *object {
	t.control = map[string]bool{}
	return &object{s: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}, t: t}
}

func (b *object) control(name string, s *jsonschema.Schema, required bool) {
	b.s.Properties[name] = s
	b.s.PropertyOrder = append(b.s.PropertyOrder, name)
	if required {
		b.s.Required = append(b.s.Required, name)
	}
	b.t.control[name] = true
}

func (g *generator) begin(t *Tool, conns []string) *object {
	b := newObject(t)
	enum := make([]any, len(conns))
	for i, c := range conns {
		enum[i] = c
	}
	b.control(argConnection, &jsonschema.Schema{Type: "string", Enum: enum, Description: connectionDescription}, true)
	return b
}

func (g *generator) finish(b *object) *jsonschema.Schema {
	if b.t.confirm == confirmArg {
		b.control(argConfirm, &jsonschema.Schema{Type: "boolean", Const: jsonschema.Ptr[any](true), Description: confirmDescription}, true)
	}
	return b.s
}

func namespaceSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: "The resource's namespace; the connection's default when left out."}
}

func (g *generator) idSchema(t *Tool, conns []string, idDesc string) *jsonschema.Schema {
	b := g.begin(t, conns)
	b.control(argID, &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1), Description: idDesc}, true)
	b.control(argNamespace, namespaceSchema(), false)
	b.s.AdditionalProperties = falseSchema()
	return g.finish(b)
}

func (g *generator) listSchema(t *Tool, conns []string, filters []FilterField) *jsonschema.Schema {
	b := g.begin(t, conns)
	if filters != nil {
		fields := make([]any, len(filters))
		has := map[Operator]bool{}
		for i, f := range filters {
			fields[i] = f.Field
			for _, o := range f.Operators {
				has[o] = true
			}
		}
		var ops []any
		for _, o := range Operators {
			if has[o] {
				ops = append(ops, string(o))
			}
		}
		pred := func() *jsonschema.Schema { // one per argument: a schema is a tree
			return &jsonschema.Schema{
				Type: "object",
				Properties: map[string]*jsonschema.Schema{
					"field":    {Type: "string", Enum: fields},
					"operator": {Type: "string", Enum: ops},
					"value":    {Description: "A value of the field's type; an array for in; true or false for is_null."},
				},
				PropertyOrder:        []string{"field", "operator", "value"},
				Required:             []string{"field", "operator"},
				AdditionalProperties: falseSchema(),
			}
		}
		b.control(argFilter, &jsonschema.Schema{Type: "array", Items: pred(), Description: "Predicates that must all hold."}, false)
		b.control(argFilters, &jsonschema.Schema{Type: "array", Items: pred(), Description: "Another name for filter; give one or the other."}, false)
		b.control(argTextQuery, &jsonschema.Schema{Type: "string", Description: "Free text the resource must contain."}, false)
	}
	b.control(argNamespaces, &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: "Only these namespaces; all when left out."}, false)
	b.control(argPageSize, &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(float64(maxPageSize)), Description: "Resources per page."}, false)
	b.control(argCursor, &jsonschema.Schema{Type: "string", Description: "The nextCursor of the previous page."}, false)
	b.s.AdditionalProperties = falseSchema()
	return g.finish(b)
}

// dataSchema is create's input (the resource schema plus connectionId and namespace?) or
// update's (the same with nothing required but id). Properties the resource marks readOnly
// are left out; a resource property named like a control argument is shadowed by it.
func (g *generator) dataSchema(t *Tool, conns []string, res *jsonschema.Schema, update bool) *jsonschema.Schema {
	b := g.begin(t, conns)
	if update {
		b.control(argID, &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1), Description: "The id of the resource to update."}, true)
	}
	b.control(argNamespace, namespaceSchema(), false)
	g.mergeProps(t, b, res, !update)
	return g.finish(b)
}

func (g *generator) actionSchema(t *Tool, conns []string, a *Action) *jsonschema.Schema {
	b := g.begin(t, conns)
	if !a.Collection {
		b.control(argID, &jsonschema.Schema{Type: "string", MinLength: jsonschema.Ptr(1), Description: "The id of the resource to act on."}, true)
	}
	b.control(argNamespace, namespaceSchema(), false)
	if a.ParamsSchema == nil {
		b.s.AdditionalProperties = falseSchema()
	}
	g.mergeProps(t, b, a.ParamsSchema, true)
	return g.finish(b)
}

// mergeProps copies the properties of src (a resource or params schema) after the control
// arguments, keeping its order, its required list (when keepRequired) and its
// additionalProperties.
func (g *generator) mergeProps(t *Tool, b *object, src *jsonschema.Schema, keepRequired bool) {
	if src == nil {
		return
	}
	src = src.CloneSchemas()
	names := make([]string, 0, len(src.Properties))
	names = append(names, src.PropertyOrder...)
	var rest []string
	for n := range src.Properties {
		if !slices.Contains(src.PropertyOrder, n) {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)
	skipped := map[string]bool{}
	for _, n := range names {
		p, ok := src.Properties[n]
		if !ok {
			continue
		}
		if n == argConfirm || b.t.control[n] {
			// A resource's own namespace, and its id on update, are what those arguments
			// name already; anything else is a real clash.
			if n != argNamespace && !(t.Op == OperationUpdate && n == argID) {
				g.problem("tool %q: property %q is shadowed by the tool's own argument of that name and cannot be set through it", t.Full, n)
			}
			skipped[n] = true
			continue
		}
		if p != nil && p.ReadOnly {
			skipped[n] = true
			continue
		}
		b.s.Properties[n] = p
		b.s.PropertyOrder = append(b.s.PropertyOrder, n)
	}
	if keepRequired {
		for _, r := range src.Required {
			if !skipped[r] && !slices.Contains(b.s.Required, r) {
				b.s.Required = append(b.s.Required, r)
			}
		}
	}
	if src.AdditionalProperties != nil {
		b.s.AdditionalProperties = src.AdditionalProperties
	}
	if len(src.Defs) > 0 {
		b.s.Defs = src.Defs
	}
}

func falseSchema() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

// pageSchema is the output schema of list and find: {items: [resource], nextCursor?}.
func pageSchema(res *jsonschema.Schema) *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"items":      {Type: "array", Items: res.CloneSchemas()},
			"nextCursor": {Type: "string", Description: "Pass as cursor for the next page; absent on the last page."},
		},
		PropertyOrder: []string{"items", "nextCursor"},
		Required:      []string{"items"},
	}
}
