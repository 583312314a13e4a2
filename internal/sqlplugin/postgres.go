package sqlplugin

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// postgres is the PostgreSQL dialect, served through pgx (pure Go) behind database/sql
// (pgx's stdlib adapter), so the row code is the same as SQLite's. Types that have no
// JSON counterpart (dates, uuids, json, enums, arrays...) are read and compared as text
// and written as text, which PostgreSQL parses into the column's type.
type postgres struct {
	// schemas limits the catalogue to these schemas (nil: every schema but the system's).
	schemas []string
}

func (postgres) name() string { return "postgres" }

func (postgres) quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (postgres) placeholder(n int) string { return fmt.Sprintf("$%d", n) }

// textual reports whether a column is read as text (::text) rather than as a Go value of
// its own: every string column whose type is not a character type.
func (c *column) textual() bool {
	if c.typ != colString {
		return false
	}
	switch c.declType {
	case "text", "character varying", "character", "citext", "name":
		return false
	}
	return true
}

func (d postgres) selectColumn(c *column) string {
	q := d.quote(c.name)
	if c.textual() || c.typ == colNumber && c.declType == "numeric" {
		// numeric as text keeps its digits (read back as a JSON number, not a float64).
		return q + "::text AS " + q
	}
	return q
}

func (d postgres) filterColumn(c *column) string {
	q := d.quote(c.name)
	if c.textual() {
		return q + "::text"
	}
	return q
}

func (postgres) contains(col, pattern string) string {
	return col + ` ILIKE ` + pattern + ` ESCAPE '\'`
}

func (postgres) truncate(qualified string) string { return "TRUNCATE " + qualified }

func (postgres) boolValue(b bool) any { return b }

// namespaces are the schemas the catalogue covers that hold at least one table, plus the
// configured ones.
func (d postgres) namespaces(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT nspname FROM pg_catalog.pg_namespace
		WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND nspname NOT LIKE 'pg\_%' ESCAPE '\'
		ORDER BY nspname`)
	if err != nil {
		return nil, sqlError(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, sqlError(err)
		}
		if d.schemas == nil || slices.Contains(d.schemas, n) {
			out = append(out, n)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, sqlError(err)
	}
	return out, nil
}

// pgCatalog reads every column of every base table the connecting role can see, with its
// position in the table's primary key (0 when not part of it).
const pgCatalog = `SELECT c.table_schema, c.table_name, c.column_name, c.data_type,
	c.is_nullable = 'NO',
	c.column_default IS NOT NULL OR c.is_identity = 'YES' OR c.is_generated = 'ALWAYS',
	coalesce((SELECT k.ordinal_position FROM information_schema.table_constraints tc
		JOIN information_schema.key_column_usage k
		  ON k.constraint_schema = tc.constraint_schema AND k.constraint_name = tc.constraint_name
		 AND k.table_schema = tc.table_schema AND k.table_name = tc.table_name
		WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = c.table_schema
		  AND tc.table_name = c.table_name AND k.column_name = c.column_name), 0)
FROM information_schema.columns c
JOIN information_schema.tables t
  ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema') AND c.table_schema NOT LIKE 'pg\_%' ESCAPE '\'
ORDER BY c.table_schema, c.table_name, c.ordinal_position`

func (d postgres) tables(ctx context.Context, db *sql.DB) (map[string]*table, error) {
	rows, err := db.QueryContext(ctx, pgCatalog)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	type tkey struct{ schema, name string }
	byKey := map[tkey]*table{}
	var order []tkey
	for rows.Next() {
		var schema, tname string
		c := &column{}
		if err := rows.Scan(&schema, &tname, &c.name, &c.declType, &c.notNull, &c.hasDefault, &c.pk); err != nil {
			return nil, err
		}
		if d.schemas != nil && !slices.Contains(d.schemas, schema) {
			continue
		}
		c.typ = pgType(c.declType)
		k := tkey{schema, tname}
		t := byKey[k]
		if t == nil {
			t = &table{namespace: schema, name: tname, byName: map[string]*column{}}
			byKey[k] = t
			order = append(order, k)
		}
		t.cols = append(t.cols, c)
		t.byName[c.name] = c
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// A table's kind is its name; a name found in several schemas is qualified with the
	// schema in each of them, so no two tables share a resource key.
	names := map[string]int{}
	for _, k := range order {
		names[k.name]++
	}
	out := map[string]*table{}
	for _, k := range order {
		t := byKey[k]
		t.kind = t.name
		if names[t.name] > 1 {
			t.kind = t.namespace + "." + t.name
		}
		var pks []*column
		for _, c := range t.cols {
			if c.pk > 0 {
				pks = append(pks, c)
			}
		}
		if len(pks) == 1 {
			t.pk = pks[0]
		}
		if _, dup := out[t.kind]; dup {
			// A table literally named "audit.log" next to audit's log: the first, in
			// schema order, keeps the kind; the other is not served.
			continue
		}
		out[t.kind] = t
	}
	return out, nil
}

// pgType maps information_schema.columns.data_type to a JSON type.
func pgType(dataType string) colType {
	switch dataType {
	case "smallint", "integer", "bigint":
		return colInteger
	case "real", "double precision", "numeric":
		return colNumber
	case "boolean":
		return colBoolean
	case "bytea":
		return colBlob
	}
	// text, varchar, char, dates and times, uuid, json, enums (USER-DEFINED), arrays...:
	// their text form.
	return colString
}

// openPostgres opens a PostgreSQL connection pool from a DSN (a postgres:// URL or a
// key=value string, as libpq takes). Read-only connections make every transaction read
// only, so the server refuses writes too. The pool connects lazily: a server that is down
// shows as the connection's status, not as an error here.
func openPostgres(cc ConnectionConfig, readOnly bool, origin string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(cc.DSN)
	if err != nil {
		return nil, fmt.Errorf("dsn: %v", redact(err))
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = "mcpgw"
	}
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	// The trigger function reports it with each change, so the listener can tell the
	// plugin's own writes (published as they are made) from others'.
	cfg.RuntimeParams["mcpgw.origin"] = origin
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(8)
	return db, nil
}

// pgDatabase is the database a PostgreSQL DSN names (the group of its keys by default).
func pgDatabase(dsn string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", fmt.Errorf("dsn: %v", redact(err))
	}
	if cfg.Database == "" {
		return "", fmt.Errorf("the dsn names no database; set database")
	}
	return cfg.Database, nil
}

// newOrigin is a plugin instance's mcpgw.origin: random, so that two gateways (replicas)
// on one database each hear of the other's writes.
func newOrigin() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// redact keeps a DSN parse error from repeating the DSN, which may hold a password.
func redact(err error) string {
	s := err.Error()
	if i := strings.Index(s, "cannot parse `"); i >= 0 {
		if j := strings.Index(s[i+len("cannot parse `"):], "`"); j >= 0 {
			return s[:i] + "cannot parse the dsn" + s[i+len("cannot parse `")+j+1:]
		}
	}
	return s
}
