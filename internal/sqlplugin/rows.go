package sqlplugin

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/plugin"
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
