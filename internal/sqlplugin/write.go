package sqlplugin

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/mcpgw/mcpgw/plugin"
)

// Create implements plugin.ResourceProvider: an INSERT of the given columns.
func (p *Plugin) Create(ctx context.Context, connID, key string, in plugin.CreateInput) (plugin.Resource, error) {
	c, t, err := p.writable(connID, key, in.Namespace)
	if err != nil {
		return nil, err
	}
	cols, vals, err := columns(c, t, in.Data)
	if err != nil {
		return nil, err
	}
	q := &query{d: c.d}
	q.add("INSERT INTO ", qualified(c, t))
	if len(cols) == 0 {
		q.add(" DEFAULT VALUES")
	} else {
		phs := make([]string, len(vals))
		for i, v := range vals {
			phs[i] = q.arg(v)
		}
		q.add(" (", strings.Join(cols, ", "), ") VALUES (", strings.Join(phs, ", "), ")")
	}
	q.add(" RETURNING ", selectList(c, t))
	r, err := one(ctx, c, q, t, "")
	if err != nil {
		return nil, err
	}
	p.published(plugin.EventAdd, connID, key, t, r)
	return r, nil
}

// Update implements plugin.ResourceProvider: an UPDATE of the given columns of one row.
func (p *Plugin) Update(ctx context.Context, connID, key string, in plugin.UpdateInput) (plugin.Resource, error) {
	c, t, err := p.writable(connID, key, in.Namespace)
	if err != nil {
		return nil, err
	}
	id, err := idValue(c, t, in.ID)
	if err != nil {
		return nil, err
	}
	data := in.Data
	if v, ok := data[t.pk.name]; ok {
		b, err := bind(c, t.pk, v)
		if err != nil || !reflect.DeepEqual(b, id) {
			return nil, fmt.Errorf("the primary key %s cannot be changed", t.pk.name)
		}
		data = maps(data, t.pk.name)
	}
	cols, vals, err := columns(c, t, data)
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, errors.New("nothing to update: give at least one column")
	}
	q := &query{d: c.d}
	sets := make([]string, len(cols))
	for i := range cols {
		sets[i] = cols[i] + " = " + q.arg(vals[i])
	}
	q.add("UPDATE ", qualified(c, t), " SET ", strings.Join(sets, ", "), " WHERE ", c.d.quote(t.pk.name), " = ", q.arg(id), " RETURNING ", selectList(c, t))
	r, err := one(ctx, c, q, t, in.ID)
	if err != nil {
		return nil, err
	}
	p.published(plugin.EventUpdate, connID, key, t, r)
	return r, nil
}

// Delete implements plugin.ResourceProvider.
func (p *Plugin) Delete(ctx context.Context, connID, key string, in plugin.DeleteInput) (plugin.Resource, error) {
	c, t, err := p.writable(connID, key, in.Namespace)
	if err != nil {
		return nil, err
	}
	id, err := idValue(c, t, in.ID)
	if err != nil {
		return nil, err
	}
	q := &query{d: c.d}
	q.add("DELETE FROM ", qualified(c, t), " WHERE ", c.d.quote(t.pk.name), " = ", q.arg(id), " RETURNING ", selectList(c, t))
	r, err := one(ctx, c, q, t, in.ID)
	if err != nil {
		return nil, err
	}
	p.published(plugin.EventDelete, connID, key, t, r)
	return r, nil
}

func (p *Plugin) writable(connID, key, ns string) (*conn, *table, error) {
	if p.readOnly {
		return nil, nil, fmt.Errorf("the plugin is read-only: %w", plugin.ErrUnsupported)
	}
	c, t, err := p.lookup(connID, key)
	if err != nil {
		return nil, nil, err
	}
	return c, t, checkNamespace(t, ns)
}

func (p *Plugin) published(typ plugin.EventType, connID, key string, t *table, r plugin.Resource) {
	var id string
	if t.pk != nil {
		id = idString(r[t.pk.name])
	}
	p.watch.publish(plugin.Event{Type: typ, Connection: connID, Key: key, ID: id, Namespace: t.namespace})
}

// columns checks data's names against the table and binds its values, in name order.
func columns(c *conn, t *table, data map[string]any) (cols []string, vals []any, err error) {
	names := make([]string, 0, len(data))
	for n := range data {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		col, ok := t.byName[n]
		if !ok {
			return nil, nil, fmt.Errorf("table %s has no column %q", t.name, n)
		}
		v, err := bind(c, col, data[n])
		if err != nil {
			return nil, nil, err
		}
		cols = append(cols, c.d.quote(col.name))
		vals = append(vals, v)
	}
	return cols, vals, nil
}

// maps is m without key k.
func maps(m map[string]any, k string) map[string]any {
	out := make(map[string]any, len(m))
	for kk, v := range m {
		if kk != k {
			out[kk] = v
		}
	}
	return out
}
