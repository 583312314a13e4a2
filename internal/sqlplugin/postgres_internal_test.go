package sqlplugin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/plugin"
)

// The PostgreSQL dialect's pieces that need no server.

func TestPostgresDialect(t *testing.T) {
	d := postgres{}
	if got := d.quote(`odd "name`); got != `"odd ""name"` {
		t.Errorf("quote: %s", got)
	}
	if d.placeholder(1) != "$1" || d.placeholder(12) != "$12" {
		t.Error("placeholders")
	}
	if d.truncate(`"public"."t"`) != `TRUNCATE "public"."t"` || d.boolValue(true) != true {
		t.Error("truncate or bool")
	}
	if got := d.contains(`"c"`, "$3"); got != `"c" ILIKE $3 ESCAPE '\'` {
		t.Errorf("contains: %s", got)
	}
	for dt, want := range map[string]colType{
		"smallint": colInteger, "integer": colInteger, "bigint": colInteger,
		"real": colNumber, "double precision": colNumber, "numeric": colNumber,
		"boolean": colBoolean, "bytea": colBlob,
		"text": colString, "character varying": colString, "uuid": colString, "jsonb": colString,
		"date": colString, "timestamp with time zone": colString, "ARRAY": colString, "USER-DEFINED": colString,
	} {
		if got := pgType(dt); got != want {
			t.Errorf("pgType(%q) = %s, want %s", dt, got, want)
		}
	}
	// Text columns are read and compared as they are; other string types through ::text;
	// numeric read as text (its digits kept), compared as a number.
	for _, c := range []struct {
		decl      string
		sel, filt string
	}{
		{"text", `"c"`, `"c"`},
		{"character varying", `"c"`, `"c"`},
		{"uuid", `"c"::text AS "c"`, `"c"::text`},
		{"date", `"c"::text AS "c"`, `"c"::text`},
		{"numeric", `"c"::text AS "c"`, `"c"`},
		{"integer", `"c"`, `"c"`},
	} {
		col := &column{name: "c", declType: c.decl, typ: pgType(c.decl)}
		if got := d.selectColumn(col); got != c.sel {
			t.Errorf("select %s: %s, want %s", c.decl, got, c.sel)
		}
		if got := d.filterColumn(col); got != c.filt {
			t.Errorf("filter %s: %s, want %s", c.decl, got, c.filt)
		}
	}
	if v := value(&column{typ: colNumber}, "12.50"); v != any(json.Number("12.50")) {
		t.Errorf("a numeric's text: %#v", v)
	}
}

func TestPostgresDSN(t *testing.T) {
	if db, err := pgDatabase("postgres://u:pw@h:5432/crm?sslmode=disable"); err != nil || db != "crm" {
		t.Errorf("URL: %q %v", db, err)
	}
	if db, err := pgDatabase("host=h dbname=shop user=u"); err != nil || db != "shop" {
		t.Errorf("key=value: %q %v", db, err)
	}
	if _, err := pgDatabase("postgres://u:pw@h:notaport/crm"); err == nil || strings.Contains(err.Error(), "pw") {
		t.Errorf("a bad DSN: %v (must not repeat the DSN)", err)
	}
	if name, err := databaseName(ConnectionConfig{Driver: "postgres", DSN: "postgres://h/crm", Database: "sales"}); err != nil || name != "sales" {
		t.Errorf("database given: %q %v", name, err)
	}
}

func TestNotificationEvents(t *testing.T) {
	users := &table{namespace: "public", name: "users", kind: "users", pk: &column{name: "id"}}
	log := &table{namespace: "audit", name: "log", kind: "audit.log"}
	c := &conn{id: "pg", database: "shop", origin: "me", tables: map[string]*table{"users": users, "audit.log": log}}
	for _, tc := range []struct {
		payload string
		want    plugin.Event
		ok      bool
	}{
		{`{"op":"INSERT","schema":"public","table":"users","id":"7","origin":null}`, plugin.Event{Type: plugin.EventAdd, Connection: "pg", Key: "shop::v1::users", ID: "7", Namespace: "public"}, true},
		{`{"op":"UPDATE","schema":"public","table":"users","id":"7","origin":"other"}`, plugin.Event{Type: plugin.EventUpdate, Connection: "pg", Key: "shop::v1::users", ID: "7", Namespace: "public"}, true},
		{`{"op":"DELETE","schema":"public","table":"users","id":"7"}`, plugin.Event{Type: plugin.EventDelete, Connection: "pg", Key: "shop::v1::users", ID: "7", Namespace: "public"}, true},
		{`{"op":"TRUNCATE","schema":"public","table":"users","id":null}`, plugin.Event{Type: plugin.EventDelete, Connection: "pg", Key: "shop::v1::users", Namespace: "public"}, true},
		// A table without a single-column key: changes concern the whole type.
		{`{"op":"INSERT","schema":"audit","table":"log","id":"3"}`, plugin.Event{Type: plugin.EventAdd, Connection: "pg", Key: "shop::v1::audit.log", Namespace: "audit"}, true},
		{`{"op":"UPDATE","schema":"public","table":"users","id":"7","origin":"me"}`, plugin.Event{}, false}, // its own write
		{`{"op":"INSERT","schema":"public","table":"nope","id":"1"}`, plugin.Event{}, false},
		{`{"op":"INSERT","schema":"audit","table":"users","id":"1"}`, plugin.Event{}, false},
		{`{"op":"DROP","schema":"public","table":"users"}`, plugin.Event{}, false},
		{`not json`, plugin.Event{}, false},
	} {
		e, ok := c.event(tc.payload)
		if ok != tc.ok || e != tc.want {
			t.Errorf("%s: %+v %v, want %+v %v", tc.payload, e, ok, tc.want, tc.ok)
		}
	}
}
