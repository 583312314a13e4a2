package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/internal/schemabound"
)

// Catalog is what a provider offered when Load read it: its connections, and for each
// resource type its capabilities and, per connection that has the type, its schema, filter
// fields and actions. Generating tools from a catalogue (Catalog.Tools) does no I/O, so
// each session's view is cheap to build and cache; Load runs again when the provider
// reports a change (a connection added, a type discovered).
type Catalog struct {
	ID          string       // the plugin's id: the first part of every tool name
	Plugin      Plugin       // the provider the catalogue was read from
	Connections []Connection // sorted by ID
	Types       []*TypeEntry // sorted by key
	// Problems met while loading (a type whose schema could not be read on a connection,
	// a malformed key). Each names what was left out.
	Problems []string
}

// TypeEntry is one resource type in a catalogue.
type TypeEntry struct {
	Type    ResourceType // the key and description the provider gave
	Group   string       // the key's parts (SplitKey)
	Version string
	Kind    string
	Caps    Capabilities // what the type offers
	// On maps a connection id to what the type looks like there. A connection without the
	// type is absent.
	On map[string]*TypeOnConn
}

// TypeOnConn is a resource type as one connection serves it.
type TypeOnConn struct {
	Schema  *jsonschema.Schema // nil unless Caps.HasSchema
	Filters []FilterField      // nil unless Caps.CanFind && Caps.Filterable
	Actions []Action           // nil unless Caps.HasActions and the provider is an ActionProvider
}

// Load reads a provider into a catalogue. id must be non-empty. An error from
// Connections or ResourceTypes fails the load; an error about one type on one connection
// is a problem, and the type is left out on that connection. A provider that panics fails
// the load with an error, not the caller.
func Load(ctx context.Context, id string, p Plugin) (c *Catalog, err error) {
	if id == "" {
		return nil, errors.New("a plugin needs a non-empty id")
	}
	if p == nil {
		return nil, fmt.Errorf("plugin %q: no provider", id)
	}
	defer func() {
		if r := recover(); r != nil {
			c, err = nil, fmt.Errorf("plugin %q: loading its catalogue failed: internal error: %v", id, r)
		}
	}()
	c = &Catalog{ID: id, Plugin: p}
	conns, err := p.Connections(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: connections: %w", id, err)
	}
	seenConn := map[string]bool{}
	for _, cn := range conns {
		if cn.ID == "" || seenConn[cn.ID] {
			c.Problems = append(c.Problems, fmt.Sprintf("a connection with an empty or repeated id %q was skipped", cn.ID))
			continue
		}
		seenConn[cn.ID] = true
		c.Connections = append(c.Connections, cn)
	}
	sort.Slice(c.Connections, func(i, j int) bool { return c.Connections[i].ID < c.Connections[j].ID })

	types, err := p.ResourceTypes(ctx)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: resource types: %w", id, err)
	}
	ap, isAP := p.(ActionProvider)
	seenType := map[string]bool{}
	for _, rt := range types {
		g, v, k, err := SplitKey(rt.Key)
		if err != nil {
			c.Problems = append(c.Problems, err.Error()+"; the type was skipped")
			continue
		}
		if seenType[rt.Key] {
			c.Problems = append(c.Problems, fmt.Sprintf("resource type %q is listed twice; the second was skipped", rt.Key))
			continue
		}
		seenType[rt.Key] = true
		caps, err := p.Capabilities(ctx, rt.Key)
		if err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: capabilities: %v; the type was skipped", rt.Key, err))
			continue
		}
		e := &TypeEntry{Type: rt, Group: g, Version: v, Kind: k, Caps: caps, On: map[string]*TypeOnConn{}}
		for _, cn := range c.Connections {
			on, err := loadOn(ctx, p, ap, isAP, cn.ID, rt.Key, caps)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				c.Problems = append(c.Problems, fmt.Sprintf("%s on connection %q: %v; the type is left out there", rt.Key, cn.ID, err))
				continue
			}
			e.On[cn.ID] = on
			c.Problems = append(c.Problems, unboundedSchemas(rt.Key, cn.ID, on)...)
		}
		c.Types = append(c.Types, e)
	}
	sort.Slice(c.Types, func(i, j int) bool { return c.Types[i].Type.Key < c.Types[j].Type.Key })
	return c, nil
}

func loadOn(ctx context.Context, p Plugin, ap ActionProvider, isAP bool, conn, key string, caps Capabilities) (*TypeOnConn, error) {
	on := &TypeOnConn{}
	if caps.HasSchema {
		s, err := p.ResourceSchema(ctx, conn, key)
		if err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		if s == nil {
			return nil, errors.New("schema: the provider returned none although HasSchema is set")
		}
		s, err = ownSchema(s)
		if err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		if s.Type != "" && s.Type != "object" {
			return nil, fmt.Errorf("schema: type %q, not an object", s.Type)
		}
		on.Schema = s
	}
	if caps.CanFind && caps.Filterable {
		ff, err := p.FilterFields(ctx, conn, key)
		if err != nil {
			return nil, fmt.Errorf("filter fields: %w", err)
		}
		on.Filters = normalizeFilters(ff)
	}
	if caps.HasActions && isAP {
		acts, err := ap.Actions(ctx, conn, key)
		if err != nil {
			return nil, fmt.Errorf("actions: %w", err)
		}
		acts = slices.Clone(acts)
		for i := range acts {
			a := &acts[i]
			for _, s := range []**jsonschema.Schema{&a.ParamsSchema, &a.OutputSchema} {
				if *s == nil {
					continue
				}
				if *s, err = ownSchema(*s); err != nil {
					return nil, fmt.Errorf("action %q: schema: %w", a.ID, err)
				}
			}
		}
		sort.SliceStable(acts, func(i, j int) bool { return acts[i].ID < acts[j].ID })
		on.Actions = acts
	}
	return on, nil
}

// unboundedSchemas says which of a type's schemas on one connection cannot be validated
// within bounds (internal/schemabound): the tools generated from them check only the
// gateway's own arguments, and pass the rest to the plugin as it is. Said once, at load.
func unboundedSchemas(key, conn string, on *TypeOnConn) []string {
	var out []string
	refused := func(s *jsonschema.Schema) error {
		if s == nil {
			return nil
		}
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = schemabound.Check(b)
		return err
	}
	if err := refused(on.Schema); err != nil {
		out = append(out, fmt.Sprintf("%s on connection %q: its schema cannot be validated within bounds: %v; its create and update tools check only the gateway's own arguments and pass the rest to the plugin unchecked", key, conn, err))
	}
	for _, a := range on.Actions {
		if err := refused(a.ParamsSchema); err != nil {
			out = append(out, fmt.Sprintf("%s on connection %q: action %q: its params schema cannot be validated within bounds: %v; its tool checks only the gateway's own arguments and passes the params to the plugin unchecked", key, conn, a.ID, err))
		}
	}
	return out
}

// ownSchema is a deep copy of a provider's schema, made through its JSON so that sub-schemas
// the provider shares between properties become a tree (which resolving needs) and later
// changes on the provider's side cannot reach the catalogue. The copy must resolve.
func ownSchema(s *jsonschema.Schema) (*jsonschema.Schema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if err := schemabound.Decodable(b); err != nil {
		return nil, err
	}
	var out jsonschema.Schema
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	out.PropertyOrder = slices.Clone(s.PropertyOrder) // JSON does not carry it
	if _, err := out.Resolve(nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// normalizeFilters drops fields without a name or operators, keeps known operators in
// canonical order and sorts the fields, so equal filter sets give equal schemas.
func normalizeFilters(ff []FilterField) []FilterField {
	out := make([]FilterField, 0, len(ff))
	seen := map[string]bool{}
	for _, f := range ff {
		if f.Field == "" || seen[f.Field] {
			continue
		}
		has := map[Operator]bool{}
		for _, o := range f.Operators {
			has[o] = true
		}
		var ops []Operator
		for _, o := range Operators {
			if has[o] {
				ops = append(ops, o)
			}
		}
		if len(ops) == 0 {
			continue
		}
		seen[f.Field] = true
		f.Operators = ops
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// describeFilters is the find tool's description of its fields: "name (string: eq, in)".
func describeFilters(ff []FilterField) string {
	parts := make([]string, len(ff))
	for i, f := range ff {
		ops := make([]string, len(f.Operators))
		for j, o := range f.Operators {
			ops[j] = string(o)
		}
		parts[i] = fmt.Sprintf("%s (%s: %s)", f.Field, f.Type, strings.Join(ops, ", "))
	}
	return strings.Join(parts, "; ")
}
