package sqlplugin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/plugin"
)

const (
	defaultPageSize = 50
	maxPageSize     = 1000
	maxInValues     = 1000
)

// List implements plugin.ResourceProvider.
func (p *Plugin) List(ctx context.Context, connID, key string, in plugin.ListInput) (plugin.Page, error) {
	return p.Find(ctx, connID, key, plugin.FindInput{ListInput: in})
}

// cursor is where the next page starts: after a primary key value, or at an offset (for
// tables without a single-column primary key, ordered by every column).
type cursor struct {
	After  any   `json:"k,omitempty"`
	Offset int64 `json:"o,omitempty"`
}

func (cu cursor) encode() string {
	b, _ := json.Marshal(cu)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(c *conn, t *table, s string) (cursor, error) {
	var cu cursor
	bad := fmt.Errorf("cursor %q is not one this table's pages gave", s)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cu, bad
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&cu); err != nil || cu.Offset < 0 || (cu.After == nil) == (t.pk != nil) {
		return cu, bad
	}
	if n, ok := cu.After.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			cu.After = i
		} else if f, err := n.Float64(); err == nil {
			cu.After = f
		}
	}
	if t.pk != nil {
		if cu.After, err = bind(c, t.pk, cu.After); err != nil {
			return cu, bad
		}
	}
	return cu, nil
}

// Find implements plugin.ResourceProvider: the predicates ANDed, textQuery matched against
// every text column, ordered by primary key.
func (p *Plugin) Find(ctx context.Context, connID, key string, in plugin.FindInput) (plugin.Page, error) {
	c, t, err := p.lookup(connID, key)
	if err != nil {
		return plugin.Page{}, err
	}
	if len(in.Namespaces) > 0 && !slices.Contains(in.Namespaces, t.namespace) {
		return plugin.Page{Items: []plugin.Resource{}}, nil
	}
	size := in.PageSize
	if size <= 0 {
		size = defaultPageSize
	}
	if size > maxPageSize {
		return plugin.Page{}, fmt.Errorf("pageSize %d is over %d", size, maxPageSize)
	}
	q := &query{d: c.d}
	q.add("SELECT ", selectList(c, t), " FROM ", qualified(c, t))
	var conds []string
	fields := map[string]plugin.FilterField{}
	for _, f := range filterFields(t) {
		fields[f.Field] = f
	}
	for i, pr := range in.Filter.Predicates {
		cond, err := predicate(c, t, q, fields, pr)
		if err != nil {
			return plugin.Page{}, fmt.Errorf("filter[%d]: %w", i, err)
		}
		conds = append(conds, cond)
	}
	if tq := in.Filter.TextQuery; tq != "" {
		var ors []string
		pattern := "%" + likeEscape(tq) + "%"
		for _, col := range t.cols {
			if col.typ == colString {
				ors = append(ors, c.d.contains(c.d.filterColumn(col), q.arg(pattern)))
			}
		}
		if len(ors) == 0 {
			return plugin.Page{}, fmt.Errorf("table %s has no text columns for textQuery", t.name)
		}
		conds = append(conds, "("+strings.Join(ors, " OR ")+")")
	}
	var cu cursor
	if in.Cursor != "" {
		if cu, err = decodeCursor(c, t, in.Cursor); err != nil {
			return plugin.Page{}, err
		}
	}
	if t.pk != nil && cu.After != nil {
		conds = append(conds, c.d.quote(t.pk.name)+" > "+q.arg(cu.After))
	}
	if len(conds) > 0 {
		q.add(" WHERE ", strings.Join(conds, " AND "))
	}
	q.add(" ORDER BY ", orderBy(c, t), " LIMIT ", q.arg(int64(size+1)))
	if t.pk == nil && cu.Offset > 0 {
		q.add(" OFFSET ", q.arg(cu.Offset))
	}
	rows, err := c.db.QueryContext(ctx, q.sql.String(), q.args...)
	if err != nil {
		return plugin.Page{}, sqlError(err)
	}
	items, err := scanRows(rows, t)
	if err != nil {
		return plugin.Page{}, err
	}
	page := plugin.Page{Items: items}
	if page.Items == nil {
		page.Items = []plugin.Resource{}
	}
	if len(items) > size {
		page.Items = items[:size]
		if t.pk != nil {
			page.NextCursor = cursor{After: page.Items[size-1][t.pk.name]}.encode()
		} else {
			page.NextCursor = cursor{Offset: cu.Offset + int64(size)}.encode()
		}
	}
	return page, nil
}

// orderBy is the primary key, or every orderable column when there is none (rows equal in
// all of them are indistinguishable, so any order among them is the same page).
func orderBy(c *conn, t *table) string {
	if t.pk != nil {
		return c.d.quote(t.pk.name)
	}
	var cols []string
	for _, col := range t.cols {
		if col.typ != colBlob {
			cols = append(cols, c.d.quote(col.name))
		}
	}
	if len(cols) == 0 {
		return "1"
	}
	return strings.Join(cols, ", ")
}

var comparisons = map[plugin.Operator]string{plugin.OpEq: "=", plugin.OpLt: "<", plugin.OpLte: "<=", plugin.OpGt: ">", plugin.OpGte: ">="}

// predicate is one {field, operator, value} as SQL: the field checked against the
// catalogue, the operator against the field's, the value bound.
func predicate(c *conn, t *table, q *query, fields map[string]plugin.FilterField, pr plugin.Predicate) (string, error) {
	f, ok := fields[pr.Field]
	if !ok {
		return "", fmt.Errorf("table %s has no filterable column %q", t.name, pr.Field)
	}
	if !slices.Contains(f.Operators, pr.Operator) {
		return "", fmt.Errorf("column %q does not take operator %q", pr.Field, pr.Operator)
	}
	col := t.byName[pr.Field]
	qc := c.d.filterColumn(col)
	one := func(v any) (string, error) {
		if v == nil {
			return "", fmt.Errorf("operator %q needs a value; use is_null for null", pr.Operator)
		}
		b, err := bind(c, col, v)
		if err != nil {
			return "", err
		}
		return q.arg(b), nil
	}
	switch pr.Operator {
	case plugin.OpIsNull:
		isNull, ok := pr.Value.(bool)
		if !ok {
			return "", errors.New("is_null takes true or false")
		}
		if isNull {
			return qc + " IS NULL", nil
		}
		return qc + " IS NOT NULL", nil
	case plugin.OpIn:
		list, ok := pr.Value.([]any)
		if !ok || len(list) == 0 || len(list) > maxInValues {
			return "", fmt.Errorf("in takes an array of 1 to %d values", maxInValues)
		}
		phs := make([]string, len(list))
		for i, v := range list {
			ph, err := one(v)
			if err != nil {
				return "", err
			}
			phs[i] = ph
		}
		return qc + " IN (" + strings.Join(phs, ", ") + ")", nil
	case plugin.OpContains:
		s, ok := pr.Value.(string)
		if !ok {
			return "", errors.New("contains takes a string")
		}
		return c.d.contains(qc, q.arg("%"+likeEscape(s)+"%")), nil
	case plugin.OpNeq:
		ph, err := one(pr.Value)
		if err != nil {
			return "", err
		}
		// Null is not equal to any value, so those rows match too.
		return "(" + qc + " <> " + ph + " OR " + qc + " IS NULL)", nil
	}
	ph, err := one(pr.Value)
	if err != nil {
		return "", err
	}
	return qc + " " + comparisons[pr.Operator] + " " + ph, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
