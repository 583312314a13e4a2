package sqlplugin

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpgw/mcpgw/plugin"
)

// ResourceSchema implements plugin.TypeProvider: one property per column, in table order,
// typed from the column (null allowed where the column allows it). Required are the NOT
// NULL columns without a default, which an insert must name.
func (p *Plugin) ResourceSchema(_ context.Context, connID, key string) (*jsonschema.Schema, error) {
	_, t, err := p.lookup(connID, key)
	if err != nil {
		return nil, err
	}
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}
	for _, c := range t.cols {
		s.Properties[c.name] = columnSchema(c)
		s.PropertyOrder = append(s.PropertyOrder, c.name)
		if c.notNull && !c.hasDefault {
			s.Required = append(s.Required, c.name)
		}
	}
	return s, nil
}

func columnSchema(c *column) *jsonschema.Schema {
	s := &jsonschema.Schema{Description: "column " + c.declType}
	if c.declType == "" {
		s.Description = "column without a declared type"
	}
	if c.pk > 0 {
		s.Description += ", primary key"
	}
	var typ string
	switch c.typ {
	case colInteger, colNumber, colString, colBoolean:
		typ = string(c.typ)
	case colBlob:
		typ = "string"
		s.ContentEncoding = "base64"
	case colAny:
		return s
	}
	if c.nullable() {
		s.Types = []string{typ, "null"}
	} else {
		s.Type = typ
	}
	return s
}

// operators per column type; is_null is added for nullable columns.
var operators = map[colType][]plugin.Operator{
	colInteger: {plugin.OpEq, plugin.OpNeq, plugin.OpLt, plugin.OpLte, plugin.OpGt, plugin.OpGte, plugin.OpIn},
	colNumber:  {plugin.OpEq, plugin.OpNeq, plugin.OpLt, plugin.OpLte, plugin.OpGt, plugin.OpGte, plugin.OpIn},
	colString:  {plugin.OpEq, plugin.OpNeq, plugin.OpLt, plugin.OpLte, plugin.OpGt, plugin.OpGte, plugin.OpIn, plugin.OpContains},
	colBoolean: {plugin.OpEq, plugin.OpNeq},
}

func filterFields(t *table) []plugin.FilterField {
	var out []plugin.FilterField
	for _, c := range t.cols {
		ops, ok := operators[c.typ]
		if !ok {
			continue // blobs and untyped columns
		}
		ops = append([]plugin.Operator{}, ops...)
		if c.nullable() {
			ops = append(ops, plugin.OpIsNull)
		}
		out = append(out, plugin.FilterField{Field: c.name, Type: c.typ.field(), Operators: ops, Description: "column " + c.declType})
	}
	return out
}

// FilterFields implements plugin.TypeProvider: every column but blobs and untyped ones.
func (p *Plugin) FilterFields(_ context.Context, connID, key string) ([]plugin.FilterField, error) {
	_, t, err := p.lookup(connID, key)
	if err != nil {
		return nil, err
	}
	return filterFields(t), nil
}

// Actions implements plugin.ActionProvider: count, and (unless read-only) truncate.
func (p *Plugin) Actions(_ context.Context, connID, key string) ([]plugin.Action, error) {
	_, t, err := p.lookup(connID, key)
	if err != nil {
		return nil, err
	}
	out := func(prop string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Required: []string{prop}, Properties: map[string]*jsonschema.Schema{prop: {Type: "integer", Minimum: jsonschema.Ptr(0.0)}}}
	}
	acts := []plugin.Action{{
		ID: "count", Description: fmt.Sprintf("Count the rows of table %s.", t.name),
		OutputSchema: out("count"), Idempotent: true, ReadOnly: true, Collection: true,
	}}
	if !p.readOnly {
		acts = append(acts, plugin.Action{
			ID: "truncate", Description: fmt.Sprintf("Delete every row of table %s.", t.name),
			OutputSchema: out("deleted"), Dangerous: true, Idempotent: true, Collection: true,
		})
	}
	return acts, nil
}

// ExecuteAction implements plugin.ActionProvider.
func (p *Plugin) ExecuteAction(ctx context.Context, connID, key, action string, in plugin.ActionInput) (plugin.ActionResult, error) {
	c, t, err := p.lookup(connID, key)
	if err != nil {
		return plugin.ActionResult{}, err
	}
	if err := checkNamespace(t, in.Namespace); err != nil {
		return plugin.ActionResult{}, err
	}
	if len(in.Params) > 0 {
		return plugin.ActionResult{}, fmt.Errorf("action %s takes no parameters", action)
	}
	switch action {
	case "count":
		var n int64
		if err := c.db.QueryRowContext(ctx, "SELECT count(*) FROM "+qualified(c, t)).Scan(&n); err != nil {
			return plugin.ActionResult{}, sqlError(err)
		}
		return plugin.ActionResult{Data: map[string]any{"count": n}}, nil
	case "truncate":
		if p.readOnly {
			return plugin.ActionResult{}, fmt.Errorf("truncate: the plugin is read-only: %w", plugin.ErrUnsupported)
		}
		res, err := c.db.ExecContext(ctx, c.d.truncate(qualified(c, t)))
		if err != nil {
			return plugin.ActionResult{}, sqlError(err)
		}
		n, _ := res.RowsAffected()
		p.watch.publish(plugin.Event{Type: plugin.EventDelete, Connection: connID, Key: key, Namespace: t.namespace})
		return plugin.ActionResult{Data: map[string]any{"deleted": n}}, nil
	}
	return plugin.ActionResult{}, fmt.Errorf("action %q: %w", action, plugin.ErrUnsupported)
}

func qualified(c *conn, t *table) string { return c.d.quote(t.namespace) + "." + c.d.quote(t.name) }

func checkNamespace(t *table, ns string) error {
	if ns != "" && ns != t.namespace {
		return fmt.Errorf("table %s is in namespace %q, not %q: %w", t.name, t.namespace, ns, plugin.ErrNotFound)
	}
	return nil
}
