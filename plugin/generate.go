package plugin

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Operation is what a generated tool does.
type Operation string

// The operations. A resource type gets one tool per CRUD operation its capabilities
// allow and one per action; a plugin gets the three utility tools.
const (
	OperationGet               Operation = "get"
	OperationList              Operation = "list"
	OperationFind              Operation = "find"
	OperationCreate            Operation = "create"
	OperationUpdate            Operation = "update"
	OperationDelete            Operation = "delete"
	OperationAction            Operation = "action"
	OperationListConnections   Operation = "list_connections"
	OperationListNamespaces    Operation = "list_namespaces"
	OperationListResourceTypes Operation = "list_resource_types"
)

const (
	maxPageSize           = 1000
	argConnection         = "connectionId"
	argID                 = "id"
	argNamespace          = "namespace"
	argNamespaces         = "namespaces"
	argPageSize           = "pageSize"
	argCursor             = "cursor"
	argFilter             = "filter"
	argTextQuery          = "textQuery"
	argConfirm            = "confirm"
	nameSeparator         = "_"
	defaultMaxNameLen     = 64
	confirmDescription    = "Must be true: the user has agreed to this change, which cannot be undone."
	connectionDescription = "The connection to use."
)

// Options are the generation inputs that differ between sessions.
type Options struct {
	// Connections the session may use. nil: every connection in the catalogue; an empty,
	// non-nil slice: none (the plugin then has no tools in the view).
	Connections []string
	// ReadOnly leaves out create, update, delete and Dangerous actions.
	ReadOnly bool
	// Elicitation: the client can be asked to confirm (elicitation/create). Deletes and
	// Dangerous actions then ask through CallOptions.Confirm; without it, their input
	// schema requires "confirm": true.
	Elicitation bool
	// Name turns a tool's full name ({pluginID}_{group}_{version}_{kind}_{operation}) into
	// the name clients see. The gateway passes its own rule (registry.ExposedName), which
	// replaces characters outside ^[A-Za-z0-9_-] and shortens long names with a stable hash.
	// nil: full names are used as they are, and a name that is not a valid MCP tool name
	// (that set, at most 64 bytes) is a problem and its tool is left out.
	Name func(full string) string
}

// ToolSet is the tools one view of a plugin offers, sorted by name.
type ToolSet struct {
	Tools []*Tool
	// Problems met while generating: name collisions, schemas that differ between
	// connections, arguments a resource schema shadows. Each names what was left out.
	Problems []string
	byName   map[string]*Tool
}

// Tool is one generated tool: its MCP definition and what a call to it does.
type Tool struct {
	Def      *ToolDef
	Full     string // the name before Options.Name
	Op       Operation
	Key      string // the resource key; empty for utility tools
	ActionID string // for OperationAction

	cat     *Catalog
	entry   *TypeEntry
	action  *Action
	conns   []string // the connectionId enum
	connOK  map[string]bool
	confirm confirmMode
	input   *jsonschema.Resolved
	filters map[string]FilterField
	// control lists the arguments that are the tool's own (connectionId, id, ...); the
	// rest are the resource's data (create, update) or the action's params.
	control map[string]bool
	// siblings are the tools of the same view, for list_resource_types.
	siblings []*Tool
}

type confirmMode int

const (
	confirmNone confirmMode = iota
	confirmArg              // the schema requires confirm: true
	confirmAsk              // the gateway asks the client (elicitation)
)

// Lookup returns the tool with the exposed name, or nil.
func (ts *ToolSet) Lookup(name string) *Tool { return ts.byName[name] }

// Tools generates the tools of one view of the catalogue. It does no I/O.
func (c *Catalog) Tools(o Options) *ToolSet {
	ts := &ToolSet{byName: map[string]*Tool{}}
	allowed := map[string]bool{}
	var conns []string
	for _, cn := range c.Connections {
		if o.Connections == nil || slices.Contains(o.Connections, cn.ID) {
			allowed[cn.ID] = true
			conns = append(conns, cn.ID)
		}
	}
	if len(conns) == 0 {
		return ts
	}
	g := &generator{cat: c, o: o, ts: ts, seen: map[string]string{}}
	for _, e := range c.Types {
		g.typeTools(e, allowed)
	}
	g.utilityTools(conns)
	sort.Slice(ts.Tools, func(i, j int) bool { return ts.Tools[i].Def.Name < ts.Tools[j].Def.Name })
	for _, t := range ts.Tools {
		t.siblings = ts.Tools
	}
	return ts
}

type generator struct {
	cat  *Catalog
	o    Options
	ts   *ToolSet
	seen map[string]string // exposed name → full name
}

func (g *generator) problem(format string, args ...any) {
	g.ts.Problems = append(g.ts.Problems, fmt.Sprintf(format, args...))
}

// add names t, checks the name, compiles its input schema and keeps it.
func (g *generator) add(t *Tool, in *jsonschema.Schema) {
	name := t.Full
	if g.o.Name != nil {
		name = g.o.Name(t.Full)
	}
	if !validToolName(name) {
		g.problem("tool %q: %q is not a valid MCP tool name (^[A-Za-z0-9_-]{1,64}$); the tool is left out", t.Full, name)
		return
	}
	if prev, dup := g.seen[name]; dup {
		g.problem("tools %q and %q both expose as %q; the second is hidden", prev, t.Full, name)
		return
	}
	rs, err := in.Resolve(nil)
	if err != nil {
		g.problem("tool %q: input schema: %v; the tool is left out", t.Full, err)
		return
	}
	g.seen[name] = t.Full
	t.Def.Name = name
	t.Def.InputSchema = in
	t.input = rs
	t.cat = g.cat
	t.connOK = map[string]bool{}
	for _, c := range t.conns {
		t.connOK[c] = true
	}
	g.ts.Tools = append(g.ts.Tools, t)
	g.ts.byName[name] = t
}

func validToolName(s string) bool {
	if len(s) == 0 || len(s) > defaultMaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// typeGen is what the tools of one resource type are generated from: the type, the
// connections of the view that have it, and how it looks on the first of them.
type typeGen struct {
	*generator
	e     *TypeEntry
	conns []string
	on    *TypeOnConn
	base  string // {group}_{version}_{kind}_
	label string // kind (group/version)
}

// typeTools generates the tools of one resource type.
func (g *generator) typeTools(e *TypeEntry, allowed map[string]bool) {
	var conns []string
	for id := range e.On {
		if allowed[id] {
			conns = append(conns, id)
		}
	}
	if len(conns) == 0 {
		return
	}
	sort.Strings(conns)
	on := e.On[conns[0]]
	for _, other := range conns[1:] {
		if !sameShape(on, e.On[other]) {
			g.problem("%s: its schema, filter fields or actions differ between connections %q and %q; the tools follow %q", e.Type.Key, conns[0], other, conns[0])
			break
		}
	}
	tg := &typeGen{generator: g, e: e, conns: conns, on: on,
		base:  strings.Join([]string{e.Group, e.Version, e.Kind}, nameSeparator) + nameSeparator,
		label: fmt.Sprintf("%s (%s/%s)", e.Kind, e.Group, e.Version)}
	tg.readTools()
	if !g.o.ReadOnly {
		tg.writeTools()
	}
	if _, isAP := g.cat.Plugin.(ActionProvider); e.Caps.HasActions && isAP {
		for i := range on.Actions {
			tg.actionTool(&on.Actions[i])
		}
	}
}

// desc is a tool's description: s, then the type's own description.
func (tg *typeGen) desc(s string) string {
	if d := strings.TrimSpace(tg.e.Type.Description); d != "" {
		return s + " " + d
	}
	return s
}

func (tg *typeGen) newTool(op Operation, suffix, description string, ann *Annotations) *Tool {
	return &Tool{
		Def:   &ToolDef{Description: description, Annotations: ann},
		Full:  tg.cat.ID + nameSeparator + tg.base + suffix,
		Op:    op,
		Key:   tg.e.Type.Key,
		entry: tg.e,
		conns: tg.conns,
	}
}

// output sets the tool's output schema: the resource's, or a page of them.
func (tg *typeGen) output(t *Tool, page bool) {
	if tg.on.Schema == nil {
		return
	}
	if page {
		t.Def.OutputSchema = pageSchema(tg.on.Schema)
	} else {
		t.Def.OutputSchema = tg.on.Schema
	}
}

func readOnlyAnnotations() *Annotations {
	return &Annotations{ReadOnlyHint: true, IdempotentHint: true}
}

// readTools are get, list and find, as the type's capabilities allow.
func (tg *typeGen) readTools() {
	caps, conns, on := tg.e.Caps, tg.conns, tg.on
	if caps.CanGet {
		t := tg.newTool(OperationGet, "get", tg.desc(fmt.Sprintf("Get one %s by id.", tg.label)), readOnlyAnnotations())
		tg.output(t, false)
		tg.add(t, tg.idSchema(t, conns, "The id of the resource to get."))
	}
	if caps.CanList {
		t := tg.newTool(OperationList, "list", tg.desc(fmt.Sprintf("List %s resources a page at a time; pass nextCursor back as cursor for the next page.", tg.label)), readOnlyAnnotations())
		tg.output(t, true)
		tg.add(t, tg.listSchema(t, conns, nil))
	}
	if caps.CanFind && caps.Filterable && len(on.Filters) > 0 {
		t := tg.newTool(OperationFind, "find", tg.desc(fmt.Sprintf("Find %s resources matching every predicate in filter (AND) and textQuery, a page at a time. Filter fields: %s.", tg.label, describeFilters(on.Filters))), readOnlyAnnotations())
		t.filters = map[string]FilterField{}
		for _, f := range on.Filters {
			t.filters[f.Field] = f
		}
		tg.output(t, true)
		tg.add(t, tg.listSchema(t, conns, on.Filters))
	}
}

// writeTools are create, update and delete, as the type's capabilities allow.
func (tg *typeGen) writeTools() {
	caps, conns, label := tg.e.Caps, tg.conns, tg.label
	if caps.CanCreate {
		t := tg.newTool(OperationCreate, "create", tg.desc(fmt.Sprintf("Create a %s.", label)), &Annotations{DestructiveHint: jsonschema.Ptr(false)})
		tg.output(t, false)
		tg.add(t, tg.dataSchema(t, conns, tg.on.Schema, false))
	}
	if caps.CanUpdate {
		t := tg.newTool(OperationUpdate, "update", tg.desc(fmt.Sprintf("Update one %s by id: the fields given are changed, the others kept.", label)), &Annotations{DestructiveHint: jsonschema.Ptr(false), IdempotentHint: true})
		tg.output(t, false)
		tg.add(t, tg.dataSchema(t, conns, tg.on.Schema, true))
	}
	if caps.CanDelete {
		t := tg.newTool(OperationDelete, "delete", tg.desc(fmt.Sprintf("Delete one %s by id. This cannot be undone.", label)), &Annotations{DestructiveHint: jsonschema.Ptr(true), IdempotentHint: true})
		tg.needsConfirm(t)
		tg.output(t, false)
		tg.add(t, tg.idSchema(t, conns, "The id of the resource to delete."))
	}
}

// actionTool is the tool of one action (none for a Dangerous action in a read-only view).
func (tg *typeGen) actionTool(a *Action) {
	if a.Dangerous && tg.o.ReadOnly {
		return
	}
	if a.ID == "" {
		tg.problem("%s: an action without an id was skipped", tg.e.Type.Key)
		return
	}
	d := strings.TrimSpace(a.Description)
	if d == "" {
		d = fmt.Sprintf("Run %s on %s.", a.ID, tg.label)
	}
	if a.Dangerous {
		d += " Dangerous: it changes or removes data and cannot be undone."
	}
	ann := &Annotations{DestructiveHint: jsonschema.Ptr(a.Dangerous), IdempotentHint: a.Idempotent}
	if a.ReadOnly && !a.Dangerous {
		ann = readOnlyAnnotations()
	}
	t := tg.newTool(OperationAction, a.ID, d, ann)
	t.ActionID, t.action = a.ID, a
	if a.Dangerous {
		tg.needsConfirm(t)
	}
	if a.OutputSchema != nil {
		t.Def.OutputSchema = a.OutputSchema
	}
	tg.add(t, tg.actionSchema(t, tg.conns, a))
}

func (g *generator) needsConfirm(t *Tool) {
	if g.o.Elicitation {
		t.confirm = confirmAsk
	} else {
		t.confirm = confirmArg
	}
}

// sameShape reports whether a type looks the same on two connections.
func sameShape(a, b *TypeOnConn) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

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
		pred := &jsonschema.Schema{
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
		b.control(argFilter, &jsonschema.Schema{Type: "array", Items: pred, Description: "Predicates that must all hold."}, false)
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

// utilityTools are {pluginID}_list_connections, _list_namespaces and
// _list_resource_types.
func (g *generator) utilityTools(conns []string) {
	ro := readOnlyAnnotations()
	str := &jsonschema.Schema{Type: "string"}
	strs := &jsonschema.Schema{Type: "array", Items: str}

	t := &Tool{Def: &ToolDef{Description: fmt.Sprintf("List the connections of plugin %s this session may use, with their status.", g.cat.ID), Annotations: ro},
		Full: g.cat.ID + nameSeparator + string(OperationListConnections), Op: OperationListConnections, conns: conns}
	t.Def.OutputSchema = &jsonschema.Schema{Type: "object", Required: []string{"connections"}, Properties: map[string]*jsonschema.Schema{
		"connections": {Type: "array", Items: &jsonschema.Schema{Type: "object", Required: []string{"id", "status"},
			PropertyOrder: []string{"id", "name", "status", "description"},
			Properties:    map[string]*jsonschema.Schema{"id": str, "name": str, "status": str, "description": str}}},
	}}
	in := newObject(t)
	in.s.AdditionalProperties = falseSchema()
	g.add(t, in.s)

	t = &Tool{Def: &ToolDef{Description: fmt.Sprintf("List the namespaces of one connection of plugin %s.", g.cat.ID), Annotations: ro},
		Full: g.cat.ID + nameSeparator + string(OperationListNamespaces), Op: OperationListNamespaces, conns: conns}
	t.Def.OutputSchema = &jsonschema.Schema{Type: "object", Required: []string{"namespaces"}, Properties: map[string]*jsonschema.Schema{"namespaces": strs}}
	b := g.begin(t, conns)
	b.s.AdditionalProperties = falseSchema()
	g.add(t, b.s)

	t = &Tool{Def: &ToolDef{Description: fmt.Sprintf("List the resource types of plugin %s with the connections that have them, the tools that act on them, and what each type offers (capabilities).", g.cat.ID), Annotations: ro},
		Full: g.cat.ID + nameSeparator + string(OperationListResourceTypes), Op: OperationListResourceTypes, conns: conns}
	flag := &jsonschema.Schema{Type: "boolean"}
	flagNames := []string{"canGet", "canList", "canFind", "canCreate", "canUpdate", "canDelete", "filterable", "hasSchema", "hasActions"}
	flags := &jsonschema.Schema{Type: "object", Required: flagNames, PropertyOrder: flagNames, Properties: map[string]*jsonschema.Schema{}}
	for _, n := range flagNames {
		flags.Properties[n] = flag
	}
	t.Def.OutputSchema = &jsonschema.Schema{Type: "object", Required: []string{"resourceTypes"}, Properties: map[string]*jsonschema.Schema{
		"resourceTypes": {Type: "array", Items: &jsonschema.Schema{Type: "object", Required: []string{"key", "connections", "tools", "capabilities"},
			PropertyOrder: []string{"key", "description", "connections", "tools", "capabilities"},
			Properties:    map[string]*jsonschema.Schema{"key": str, "description": str, "connections": strs, "tools": strs, "capabilities": flags}}},
	}}
	b = g.begin(t, conns)
	b.s.Required = nil // optional here: all connections when left out
	b.s.Properties[argConnection].Description = "Only the types this connection has; all when left out."
	b.s.AdditionalProperties = falseSchema()
	g.add(t, b.s)
}
