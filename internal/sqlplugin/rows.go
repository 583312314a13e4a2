// size: being split (issue 41)
package sqlplugin

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/plugin"
)

const (
	defaultPageSize = 50
	maxPageSize     = 1000
	maxInValues     = 1000
)

// query builds one statement: SQL text with every value a bound parameter.
type query struct {
	d    dialect
	sql  strings.Builder
	args []any
}

func (q *query) arg(v any) string {
	q.args = append(q.args, v)
	return q.d.placeholder(len(q.args))
}

func (q *query) add(s ...string) {
	for _, x := range s {
		q.sql.WriteString(x)
	}
}

func selectList(c *conn, t *table) string {
	parts := make([]string, len(t.cols))
	for i, col := range t.cols {
		parts[i] = c.d.selectColumn(col)
	}
	return strings.Join(parts, ", ")
}

// bind turns a JSON value into the value bound for col, or says why it does not fit.
func bind(c *conn, col *column, v any) (any, error) {
	if v == nil {
		if col.notNull || col.pk > 0 {
			return nil, fmt.Errorf("column %q cannot be null", col.name)
		}
		return nil, nil
	}
	switch col.typ {
	case colInteger:
		if i, ok := v.(int64); ok {
			return i, nil
		}
	case colNumber:
		switch x := v.(type) {
		case int64, float64:
			return x, nil
		}
	case colString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case colBoolean:
		if b, ok := v.(bool); ok {
			return c.d.boolValue(b), nil
		}
	case colBlob:
		if s, ok := v.(string); ok {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("column %q takes base64: %v", col.name, err)
			}
			return b, nil
		}
	case colAny:
		switch x := v.(type) {
		case int64, float64, string:
			return x, nil
		case bool:
			return c.d.boolValue(x), nil
		}
	}
	return nil, fmt.Errorf("column %q (%s) does not take %s", col.name, strings.TrimSpace(col.declType+" "+string(col.typ)), describe(v))
}

func describe(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	b, err := json.Marshal(v)
	if err != nil || len(b) > 40 {
		return fmt.Sprintf("a value of type %T", v)
	}
	return string(b)
}

// value turns a scanned value into its JSON form for col.
func value(col *column, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int64:
		if col.typ == colBoolean {
			return x != 0
		}
		return x
	case float64, bool:
		return x
	case string:
		if col.typ == colBlob {
			return []byte(x) // JSON: base64
		}
		if col.typ == colNumber && json.Valid([]byte(x)) {
			return json.Number(x) // a numeric read as text: every digit kept
		}
		return x
	case []byte:
		if col.typ == colBlob {
			return bytes.Clone(x)
		}
		return string(x)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

func scanRows(rows *sql.Rows, t *table) ([]plugin.Resource, error) {
	defer rows.Close()
	var out []plugin.Resource
	vals := make([]any, len(t.cols))
	ptrs := make([]any, len(t.cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, sqlError(err)
		}
		r := make(plugin.Resource, len(t.cols))
		for i, col := range t.cols {
			r[col.name] = value(col, vals[i])
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, sqlError(err)
	}
	return out, nil
}

// sqlError is a database error as the caller sees it.
func sqlError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("database: %v", err)
}

// idValue parses a resource id into the primary key's type.
func idValue(c *conn, t *table, id string) (any, error) {
	if t.pk == nil {
		return nil, fmt.Errorf("table %s has no single-column primary key, so rows cannot be named by id: %w", t.name, plugin.ErrUnsupported)
	}
	var v any = id
	switch t.pk.typ {
	case colInteger:
		i, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("id %q is not an integer (the primary key %s is %s)", id, t.pk.name, t.pk.declType)
		}
		v = i
	case colNumber:
		f, err := strconv.ParseFloat(id, 64)
		if err != nil {
			return nil, fmt.Errorf("id %q is not a number (the primary key %s is %s)", id, t.pk.name, t.pk.declType)
		}
		v = f
	case colBoolean:
		b, err := strconv.ParseBool(id)
		if err != nil {
			return nil, fmt.Errorf("id %q is not a boolean", id)
		}
		v = b
	case colBlob:
		v = base64.StdEncoding.EncodeToString([]byte(id))
	}
	return bind(c, t.pk, v)
}

func idString(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

func notFound(t *table, id string) error {
	return fmt.Errorf("table %s has no row with %s %q: %w", t.name, t.pk.name, id, plugin.ErrNotFound)
}

// Get implements plugin.ResourceProvider.
func (p *Plugin) Get(ctx context.Context, connID, key string, in plugin.GetInput) (plugin.Resource, error) {
	c, t, err := p.lookup(connID, key)
	if err != nil {
		return nil, err
	}
	if err := checkNamespace(t, in.Namespace); err != nil {
		return nil, err
	}
	id, err := idValue(c, t, in.ID)
	if err != nil {
		return nil, err
	}
	if err := checkRowSize(ctx, c, t, id); err != nil {
		return nil, err
	}
	q := &query{d: c.d}
	q.add("SELECT ", selectList(c, t), " FROM ", qualified(c, t), " WHERE ", c.d.quote(t.pk.name), " = ", q.arg(id))
	rows, err := c.queryPrepared(ctx, q.sql.String(), q.args...)
	return oneOf(rows, err, t, in.ID)
}

// checkRowSize refuses a row larger than the call's result may be (plugin.MaxResultBytes)
// before reading it: reading it would cost the gateway's process its size several times
// over (the database's copy, the driver's, the JSON), only for the gateway to refuse it.
// The database tells a value's size without reading it (SQLite's octet_length reads the
// length from the record header). When the database cannot answer, the row is read and
// the dispatcher's own check refuses it.
func checkRowSize(ctx context.Context, c *conn, t *table, id any) error {
	limit := plugin.MaxResultBytes(ctx)
	if limit <= 0 {
		return nil
	}
	parts := make([]string, len(t.cols))
	for i, col := range t.cols {
		v := c.d.quote(col.name)
		if c.d.name() != "sqlite" {
			v += "::text" // PostgreSQL has octet_length for text and bytea only
		}
		parts[i] = "coalesce(octet_length(" + v + "), 0)"
	}
	q := &query{d: c.d}
	q.add("SELECT ", strings.Join(parts, " + "), " FROM ", qualified(c, t), " WHERE ", c.d.quote(t.pk.name), " = ", q.arg(id))
	var size int64
	if err := c.db.QueryRowContext(ctx, q.sql.String(), q.args...).Scan(&size); err != nil {
		return nil // no such row (Get says so), or no answer: the dispatcher checks
	}
	if size > int64(limit) {
		return fmt.Errorf("row %v of table %s holds %d bytes, more than the %d a result may have: %w", id, t.name, size, limit, plugin.ErrTooLarge)
	}
	return nil
}

func one(ctx context.Context, c *conn, q *query, t *table, id string) (plugin.Resource, error) {
	rows, err := c.db.QueryContext(ctx, q.sql.String(), q.args...)
	return oneOf(rows, err, t, id)
}

// oneOf is the one row of a query's result, or plugin.ErrNotFound.
func oneOf(rows *sql.Rows, err error, t *table, id string) (plugin.Resource, error) {
	if err != nil {
		return nil, sqlError(err)
	}
	rs, err := scanRows(rows, t)
	if err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, notFound(t, id)
	}
	return rs[0], nil
}

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
