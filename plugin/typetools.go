package plugin

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

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
