package sqlplugin

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/mcpgw/mcpgw/plugin"
)

// dialect is what differs between database engines: SQLite (below) and PostgreSQL
// (postgres.go: $n placeholders, information_schema for the catalogue, ILIKE for contains,
// TRUNCATE).
type dialect interface {
	// name is the driver name in the config.
	name() string
	// quote quotes an identifier. Identifiers are always checked against the catalogue
	// first; quoting is the second line.
	quote(ident string) string
	// placeholder is the n-th bound parameter, from 1.
	placeholder(n int) string
	// tables reads the catalogue: every table of every namespace, keyed by kind.
	tables(ctx context.Context, db *sql.DB) (map[string]*table, error)
	// namespaces lists the schemas tables may live in.
	namespaces(ctx context.Context, db *sql.DB) ([]string, error)
	// selectColumn is how a column is read (an expression that keeps its value as stored).
	selectColumn(c *column) string
	// filterColumn is how a column is compared with a bound value of its JSON type.
	filterColumn(c *column) string
	// contains is a case-insensitive substring test of a text column against a bound
	// LIKE pattern (escaped with backslash).
	contains(col, pattern string) string
	// truncate is the statement that empties a table.
	truncate(qualified string) string
	// boolValue is how a boolean is bound.
	boolValue(b bool) any
}

type sqlite struct{}

func (sqlite) name() string { return "sqlite" }

func (sqlite) quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (sqlite) placeholder(int) string { return "?" }

func (d sqlite) selectColumn(c *column) string {
	q := d.quote(c.name)
	switch strings.ToUpper(strings.TrimSpace(c.declType)) {
	case "DATE", "DATETIME", "TIMESTAMP":
		// The driver turns text in columns declared like this into time values, which
		// would not give back what is stored; an expression has no declared type.
		return "coalesce(" + q + ", NULL) AS " + q
	}
	return q
}

func (d sqlite) filterColumn(c *column) string {
	q := d.quote(c.name)
	u := strings.ToUpper(c.declType)
	if c.typ == colString && !strings.Contains(u, "CHAR") && !strings.Contains(u, "CLOB") && !strings.Contains(u, "TEXT") {
		// A DATE or TIME column has NUMERIC affinity: SQLite would turn a bound "1900" into
		// the number 1900 and compare it with the stored text by type, not by value.
		return "CAST(" + q + " AS TEXT)"
	}
	return q
}

func (sqlite) contains(col, pattern string) string { return col + ` LIKE ` + pattern + ` ESCAPE '\'` }

func (sqlite) truncate(qualified string) string { return "DELETE FROM " + qualified }

func (sqlite) boolValue(b bool) any {
	if b {
		return int64(1)
	}
	return int64(0)
}

func (sqlite) namespaces(context.Context, *sql.DB) ([]string, error) { return []string{"main"}, nil }

func (d sqlite) tables(ctx context.Context, db *sql.DB) (map[string]*table, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[string]*table{}
	for _, n := range names {
		t := &table{namespace: "main", name: n, kind: n, byName: map[string]*column{}}
		rows, err := db.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value IS NOT NULL, pk FROM pragma_table_info(?, 'main') ORDER BY cid`, n)
		if err != nil {
			return nil, fmt.Errorf("table %q: %w", n, err)
		}
		pks := 0
		for rows.Next() {
			c := &column{}
			if err := rows.Scan(&c.name, &c.declType, &c.notNull, &c.hasDefault, &c.pk); err != nil {
				rows.Close()
				return nil, fmt.Errorf("table %q: %w", n, err)
			}
			c.typ = sqliteType(c.declType)
			if c.pk > 0 {
				pks++
			}
			t.cols = append(t.cols, c)
			t.byName[c.name] = c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("table %q: %w", n, err)
		}
		if pks == 1 {
			for _, c := range t.cols {
				if c.pk > 0 {
					t.pk = c
					// INTEGER PRIMARY KEY is the rowid: SQLite assigns it when left out.
					if strings.EqualFold(strings.TrimSpace(c.declType), "INTEGER") {
						c.hasDefault = true
					}
				}
			}
		}
		out[n] = t
	}
	return out, nil
}

// sqliteType maps a declared column type to a JSON type by SQLite's affinity rules
// (datatype3.html, 3.1), with BOOL and date names singled out.
func sqliteType(decl string) colType {
	u := strings.ToUpper(decl)
	switch {
	case strings.Contains(u, "INT"):
		return colInteger
	case strings.Contains(u, "CHAR"), strings.Contains(u, "CLOB"), strings.Contains(u, "TEXT"):
		return colString
	case strings.Contains(u, "BLOB"), u == "":
		if u == "" {
			return colAny
		}
		return colBlob
	case strings.Contains(u, "REAL"), strings.Contains(u, "FLOA"), strings.Contains(u, "DOUB"):
		return colNumber
	case strings.Contains(u, "BOOL"):
		return colBoolean
	case strings.Contains(u, "DATE"), strings.Contains(u, "TIME"):
		return colString
	}
	return colNumber // NUMERIC affinity: DECIMAL, NUMERIC...
}

// colType is a column's JSON type.
type colType string

const (
	colInteger colType = "integer"
	colNumber  colType = "number"
	colString  colType = "string"
	colBoolean colType = "boolean"
	colBlob    colType = "blob" // base64 text in JSON; not filterable
	colAny     colType = "any"  // no declared type: any scalar
)

func (t colType) field() plugin.FieldType {
	switch t {
	case colInteger:
		return plugin.FieldInteger
	case colNumber:
		return plugin.FieldNumber
	case colBoolean:
		return plugin.FieldBoolean
	}
	return plugin.FieldString
}

// table is one table as the catalogue says.
type table struct {
	namespace string
	name      string
	kind      string // the kind of its resource key: the name, or schema.name when the name is in several schemas
	cols      []*column
	byName    map[string]*column
	pk        *column // the single-column primary key; nil when there is none or it has several columns
}

type column struct {
	name       string
	declType   string
	typ        colType
	notNull    bool
	hasDefault bool
	pk         int // position in the primary key, 0 when not part of it
}

func (c *column) nullable() bool { return !c.notNull && c.pk == 0 }
