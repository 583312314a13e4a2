package sqlplugin_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	_ "modernc.org/sqlite"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/sqlplugin"
	"github.com/mcpgw/mcpgw/plugin"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

const schema = `
CREATE TABLE users (
	id     INTEGER PRIMARY KEY,
	name   TEXT NOT NULL,
	email  TEXT UNIQUE,
	age    INTEGER,
	score  REAL,
	active BOOLEAN NOT NULL DEFAULT 1,
	joined DATE,
	avatar BLOB
);
CREATE TABLE "odd ""name" (k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE log (at TEXT, msg TEXT);
INSERT INTO users (name, email, age, score, active, joined) VALUES
	('ada',     'ada@example.com',     36, 9.5, 1, '1815-12-10'),
	('grace',   'grace@example.com',   85, 8.0, 1, '1906-12-09'),
	('linus',   NULL,                  28, NULL, 0, NULL),
	('margaret','margaret@example.com',NULL, 7.25, 1, '1936-08-17'),
	('100%_real', 'pct@example.com',   40, 1, 0, NULL);
INSERT INTO "odd ""name" VALUES ('a', 'b');
INSERT INTO log VALUES ('2024-01-01', 'started'), ('2024-01-01', 'started'), ('2024-01-02', 'stopped');
`

// newDB writes a SQLite database file named name.db in a temp dir and returns its path.
func newDB(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(schema); err != nil {
		t.Fatal(err)
	}
	return path
}

func open(t *testing.T, cfg sqlplugin.Config) *sqlplugin.Plugin {
	t.Helper()
	p, err := sqlplugin.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func gatewayNames(full string) string {
	return registry.ExposedName("", full, config.Naming{Prefix: "never", MaxLength: 64})
}

func tools(t *testing.T, p *sqlplugin.Plugin, o plugin.Options) *plugin.ToolSet {
	t.Helper()
	c, err := plugin.Load(context.Background(), "sql", p)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Problems) > 0 {
		t.Errorf("load problems: %v", c.Problems)
	}
	o.Name = gatewayNames
	return c.Tools(o)
}

func oneConn(t *testing.T) (*sqlplugin.Plugin, string) {
	path := newDB(t, "shop")
	return open(t, sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"main-db": {Driver: "sqlite", DSN: path}}}), path
}

func text(r *plugin.Result) string { return r.Text() }

// do calls a tool, checks the structured result against the tool's outputSchema (as a
// validating client would) and returns it decoded.
func do(t *testing.T, ts *plugin.ToolSet, name, args string) map[string]any {
	t.Helper()
	r, err := ts.Call(context.Background(), name, json.RawMessage(args), plugin.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError {
		t.Fatalf("%s %s: %s", name, args, text(r))
	}
	raw := r.StructuredContent
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if out := ts.Lookup(name).Def.OutputSchema; out != nil {
		b, _ := json.Marshal(out)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := rs.Validate(v); err != nil {
			t.Errorf("%s: result %s does not match its outputSchema: %v", name, raw, err)
		}
	}
	return v
}

// refused calls a tool and wants an isError result that says want.
func refused(t *testing.T, ts *plugin.ToolSet, name, args, want string) {
	t.Helper()
	r, err := ts.Call(context.Background(), name, json.RawMessage(args), plugin.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(text(r), want) {
		t.Errorf("%s %s: want an error saying %q, got isError=%v %q", name, args, want, r.IsError, text(r))
	}
}

func names(items any) []string {
	var out []string
	for _, it := range items.([]any) {
		out = append(out, it.(map[string]any)["name"].(string))
	}
	return out
}

func TestGoldenSQLiteTools(t *testing.T) {
	p, _ := oneConn(t)
	ts := tools(t, p, plugin.Options{})
	defs := make([]any, len(ts.Tools))
	var got []string
	for i, tool := range ts.Tools {
		defs[i] = tool.Def
		got = append(got, tool.Def.Name)
	}
	for _, want := range []string{
		"sql_shop_v1_users_get", "sql_shop_v1_users_list", "sql_shop_v1_users_find", "sql_shop_v1_users_create",
		"sql_shop_v1_users_update", "sql_shop_v1_users_delete", "sql_shop_v1_users_count", "sql_shop_v1_users_truncate",
		"sql_shop_v1_log_list", "sql_shop_v1_log_find", "sql_shop_v1_log_create", "sql_shop_v1_log_count",
		"sql_list_connections", "sql_list_namespaces", "sql_list_resource_types",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no tool %s in %v", want, got)
		}
	}
	for _, absent := range []string{"sql_shop_v1_log_get", "sql_shop_v1_log_update", "sql_shop_v1_log_delete"} {
		if slices.Contains(got, absent) {
			t.Errorf("%s exists, but log has no primary key", absent)
		}
	}
	b, err := json.MarshalIndent(map[string]any{"tools": defs, "problems": append([]string{}, ts.Problems...)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	file := filepath.Join("testdata", "sqlite_tools.golden")
	if *update {
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test ./plugin/sqlplugin -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s differs (go test ./plugin/sqlplugin -run %s -update rewrites it after review); got:\n%s", file, t.Name(), b)
	}
}

func TestCRUD(t *testing.T) {
	p, _ := oneConn(t)
	ts := tools(t, p, plugin.Options{})
	u := do(t, ts, "sql_shop_v1_users_get", `{"connectionId":"main-db","id":"1"}`)
	if u["name"] != "ada" || u["joined"] != "1815-12-10" || u["active"] != true || u["score"] != 9.5 || u["avatar"] != nil {
		t.Errorf("get 1: %v", u)
	}
	u = do(t, ts, "sql_shop_v1_users_create", `{"connectionId":"main-db","name":"barbara","age":50,"active":false,"avatar":"AAEC"}`)
	if u["id"] != 6.0 || u["name"] != "barbara" || u["active"] != false || u["email"] != nil || u["avatar"] != "AAEC" {
		t.Errorf("create: %v", u)
	}
	u = do(t, ts, "sql_shop_v1_users_update", `{"connectionId":"main-db","id":"6","email":"b@example.com","age":51}`)
	if u["email"] != "b@example.com" || u["age"] != 51.0 || u["name"] != "barbara" {
		t.Errorf("update: %v", u)
	}
	u = do(t, ts, "sql_shop_v1_users_delete", `{"connectionId":"main-db","id":"6","confirm":true}`)
	if u["name"] != "barbara" {
		t.Errorf("delete returned %v", u)
	}
	refused(t, ts, "sql_shop_v1_users_get", `{"connectionId":"main-db","id":"6"}`, `table users has no row with id "6"`)
	refused(t, ts, "sql_shop_v1_users_delete", `{"connectionId":"main-db","id":"6","confirm":true}`, "no row")
	refused(t, ts, "sql_shop_v1_users_update", `{"connectionId":"main-db","id":"1"}`, "nothing to update")
	refused(t, ts, "sql_shop_v1_users_update", `{"connectionId":"main-db","id":"1","id":"2"}`, "")
	refused(t, ts, "sql_shop_v1_users_create", `{"connectionId":"main-db","age":3}`, "name")
	refused(t, ts, "sql_shop_v1_users_create", `{"connectionId":"main-db","name":"x","age":"old"}`, "invalid arguments")
	refused(t, ts, "sql_shop_v1_users_create", `{"connectionId":"main-db","name":"x","email":"ada@example.com"}`, "UNIQUE constraint failed")
	refused(t, ts, "sql_shop_v1_users_get", `{"connectionId":"main-db","id":"1","namespace":"temp"}`, `namespace "main", not "temp"`)
	if v := do(t, ts, "sql_shop_v1_users_count", `{"connectionId":"main-db"}`); v["count"] != 5.0 {
		t.Errorf("count: %v", v)
	}
	// A table whose name needs quoting works like any other.
	var odd string
	for _, tool := range ts.Tools {
		if strings.HasPrefix(tool.Def.Name, "sql_shop_v1_odd") && tool.Op == plugin.OperationGet {
			odd = tool.Def.Name
		}
	}
	if v := do(t, ts, odd, `{"connectionId":"main-db","id":"a"}`); v["v"] != "b" {
		t.Errorf("odd table: %v", v)
	}
	if v := do(t, ts, "sql_shop_v1_users_truncate", `{"connectionId":"main-db","confirm":true}`); v["deleted"] != 5.0 {
		t.Errorf("truncate: %v", v)
	}
	if v := do(t, ts, "sql_shop_v1_users_count", `{"connectionId":"main-db"}`); v["count"] != 0.0 {
		t.Errorf("count after truncate: %v", v)
	}
}

func TestFind(t *testing.T) {
	p, _ := oneConn(t)
	ts := tools(t, p, plugin.Options{})
	const find = "sql_shop_v1_users_find"
	// Two predicates and pages of two.
	// Two predicates (active, and an age, which margaret lacks and 100%_real is inactive
	// beside) and pages of one.
	args := `{"connectionId":"main-db","pageSize":1,"filter":[{"field":"active","operator":"eq","value":true},{"field":"age","operator":"gte","value":30}]}`
	v := do(t, ts, find, args)
	if got := names(v["items"]); !slices.Equal(got, []string{"ada"}) || v["nextCursor"] == nil {
		t.Fatalf("page 1: %v", v)
	}
	v = do(t, ts, find, strings.Replace(args, `"pageSize":1`, `"pageSize":1,"cursor":"`+v["nextCursor"].(string)+`"`, 1))
	if got := names(v["items"]); !slices.Equal(got, []string{"grace"}) || v["nextCursor"] != nil {
		t.Errorf("page 2: %v", v)
	}
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{`[{"field":"name","operator":"eq","value":"linus"}]`, []string{"linus"}},
		{`[{"field":"email","operator":"neq","value":"ada@example.com"}]`, []string{"grace", "linus", "margaret", "100%_real"}},
		{`[{"field":"age","operator":"lt","value":36}]`, []string{"linus"}},
		{`[{"field":"age","operator":"lte","value":36}]`, []string{"ada", "linus"}},
		{`[{"field":"score","operator":"gt","value":7.5}]`, []string{"ada", "grace"}},
		{`[{"field":"id","operator":"in","value":[2,4,99]}]`, []string{"grace", "margaret"}},
		{`[{"field":"name","operator":"contains","value":"AR"}]`, []string{"margaret"}},
		{`[{"field":"name","operator":"contains","value":"%_"}]`, []string{"100%_real"}},
		{`[{"field":"name","operator":"contains","value":"_"}]`, []string{"100%_real"}},
		{`[{"field":"email","operator":"is_null","value":true}]`, []string{"linus"}},
		{`[{"field":"age","operator":"is_null","value":false},{"field":"active","operator":"neq","value":true}]`, []string{"linus", "100%_real"}},
		{`[{"field":"joined","operator":"lt","value":"1900"}]`, []string{"ada"}},
	} {
		v := do(t, ts, find, `{"connectionId":"main-db","filter":`+tc.filter+`}`)
		if got := names(v["items"]); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.filter, got, tc.want)
		}
	}
	if v := do(t, ts, find, `{"connectionId":"main-db","textQuery":"EXAMPLE.com","filter":[{"field":"age","operator":"gt","value":50}]}`); !slices.Equal(names(v["items"]), []string{"grace"}) {
		t.Errorf("textQuery: %v", v)
	}
	refused(t, ts, find, `{"connectionId":"main-db","filter":[{"field":"active","operator":"lt","value":true}]}`, `does not take operator "lt"`)
	refused(t, ts, find, `{"connectionId":"main-db","filter":[{"field":"avatar","operator":"eq","value":"x"}]}`, "invalid arguments")
	refused(t, ts, find, `{"connectionId":"main-db","cursor":"bm90IGEgY3Vyc29y"}`, "is not one this table's pages gave")
	if v := do(t, ts, "sql_shop_v1_users_list", `{"connectionId":"main-db","namespaces":["temp"]}`); len(v["items"].([]any)) != 0 {
		t.Errorf("list in another namespace: %v", v)
	}

	// A table without a primary key pages by offset, ordered by every column.
	var seen []string
	cur := ""
	for range 5 {
		a := `{"connectionId":"main-db","pageSize":1` + cur + `}`
		v := do(t, ts, "sql_shop_v1_log_list", a)
		for _, it := range v["items"].([]any) {
			m := it.(map[string]any)
			seen = append(seen, m["at"].(string)+" "+m["msg"].(string))
		}
		next, ok := v["nextCursor"].(string)
		if !ok {
			break
		}
		cur = `,"cursor":"` + next + `"`
	}
	if !slices.Equal(seen, []string{"2024-01-01 started", "2024-01-01 started", "2024-01-02 stopped"}) {
		t.Errorf("log pages: %v", seen)
	}
}

// SQL in values is data; SQL in identifiers never reaches the database, because names are
// looked up in the catalogue first.
func TestSQLInjection(t *testing.T) {
	p, path := oneConn(t)
	ts := tools(t, p, plugin.Options{})
	ctx := context.Background()
	evil := `x'); DROP TABLE users; --`
	u := do(t, ts, "sql_shop_v1_users_create", `{"connectionId":"main-db","name":`+quote(evil)+`}`)
	if u["name"] != evil {
		t.Errorf("the value was not stored as given: %v", u)
	}
	v := do(t, ts, "sql_shop_v1_users_find", `{"connectionId":"main-db","filter":[{"field":"name","operator":"eq","value":"' OR '1'='1"}]}`)
	if n := len(v["items"].([]any)); n != 0 {
		t.Errorf("an injected OR matched %d rows", n)
	}
	v = do(t, ts, "sql_shop_v1_users_find", `{"connectionId":"main-db","textQuery":"%' OR 1=1 --"}`)
	if n := len(v["items"].([]any)); n != 0 {
		t.Errorf("an injected textQuery matched %d rows", n)
	}
	refused(t, ts, "sql_shop_v1_users_get", `{"connectionId":"main-db","id":"1 OR 1=1"}`, "is not an integer")
	refused(t, ts, "sql_shop_v1_users_update", `{"connectionId":"main-db","id":"1","name\" = 'x'; DROP TABLE users; --":"y"}`, "unexpected additional properties")
	refused(t, ts, "sql_shop_v1_users_get", `{"connectionId":"main-db","id":"1","namespace":"main\".\"users\"; DROP TABLE users; --"}`, "not \"main")

	// The provider itself, called without the generated tools' schemas in front of it.
	for _, key := range []string{`shop::v1::users"; DROP TABLE users; --`, `shop::v1::sqlite_schema`, `shop::v1::main.users`, `shop::v2::users`, `other::v1::users`} {
		if _, err := p.Get(ctx, "main-db", key, plugin.GetInput{ID: "1"}); !errors.Is(err, plugin.ErrNotFound) {
			t.Errorf("key %q: %v", key, err)
		}
	}
	if _, err := p.Update(ctx, "main-db", "shop::v1::users", plugin.UpdateInput{ID: "1", Data: map[string]any{`name" = 'x'; DROP TABLE users; --`: "y"}}); err == nil || !strings.Contains(err.Error(), "has no column") {
		t.Errorf("an injected column: %v", err)
	}
	if _, err := p.Find(ctx, "main-db", "shop::v1::users", plugin.FindInput{Filter: plugin.Filter{Predicates: []plugin.Predicate{
		{Field: "name = name OR 1", Operator: plugin.OpEq, Value: "x"}}}}); err == nil || !strings.Contains(err.Error(), "no filterable column") {
		t.Errorf("an injected field: %v", err)
	}
	if _, err := p.Find(ctx, "main-db", "shop::v1::users", plugin.FindInput{Filter: plugin.Filter{Predicates: []plugin.Predicate{
		{Field: "name", Operator: "= name OR 1 = ", Value: "x"}}}}); err == nil || !strings.Contains(err.Error(), "does not take operator") {
		t.Errorf("an injected operator: %v", err)
	}
	if _, err := p.Create(ctx, "main-db", "shop::v1::users", plugin.CreateInput{Data: map[string]any{"name": "x", "age": []any{"1); DROP TABLE users; --"}}}); err == nil {
		t.Error("an array value was bound")
	}
	if _, err := p.ExecuteAction(ctx, "main-db", "shop::v1::users", "count; DROP TABLE users", plugin.ActionInput{}); !errors.Is(err, plugin.ErrUnsupported) {
		t.Errorf("an injected action: %v", err)
	}

	// Everything is still there, read with a connection of our own.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM users`).Scan(&n); err != nil || n != 6 {
		t.Errorf("users after the attempts: %d rows, %v", n, err)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestReadOnly(t *testing.T) {
	path := newDB(t, "shop")
	p := open(t, sqlplugin.Config{ReadOnly: true, Connections: map[string]sqlplugin.ConnectionConfig{"ro": {Driver: "sqlite", DSN: path}}})
	ts := tools(t, p, plugin.Options{})
	for _, tool := range ts.Tools {
		switch {
		case tool.Op == plugin.OperationCreate, tool.Op == plugin.OperationUpdate, tool.Op == plugin.OperationDelete, tool.ActionID == "truncate":
			t.Errorf("a read-only plugin offers %s", tool.Def.Name)
		}
	}
	if ts.Lookup("sql_shop_v1_users_count") == nil || ts.Lookup("sql_shop_v1_users_find") == nil {
		t.Error("read-only lost its reads")
	}
	ctx := context.Background()
	if _, err := p.Create(ctx, "ro", "shop::v1::users", plugin.CreateInput{Data: map[string]any{"name": "x"}}); !errors.Is(err, plugin.ErrUnsupported) {
		t.Errorf("create on a read-only plugin: %v", err)
	}
	if _, err := p.ExecuteAction(ctx, "ro", "shop::v1::users", "truncate", plugin.ActionInput{}); !errors.Is(err, plugin.ErrUnsupported) {
		t.Errorf("truncate on a read-only plugin: %v", err)
	}
	// The generation's own read-only view of a writable plugin hides the same tools.
	p2, _ := oneConn(t)
	ro := tools(t, p2, plugin.Options{ReadOnly: true})
	if ro.Lookup("sql_shop_v1_users_truncate") != nil || ro.Lookup("sql_shop_v1_users_delete") != nil || ro.Lookup("sql_shop_v1_users_count") == nil {
		t.Error("a read-only view of a writable plugin")
	}
}

func TestWatchOwnWrites(t *testing.T) {
	p, _ := oneConn(t)
	ts := tools(t, p, plugin.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := p.Subscribe(ctx, "main-db", "shop::v1::users")
	if err != nil {
		t.Fatal(err)
	}
	other, err := p.Subscribe(ctx, "main-db", "shop::v1::log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Subscribe(ctx, "main-db", "shop::v1::nope"); !errors.Is(err, plugin.ErrNotFound) {
		t.Errorf("subscribe to a missing table: %v", err)
	}
	next := func() plugin.Event {
		t.Helper()
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatal("the event channel closed")
			}
			return e
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5s")
		}
		return plugin.Event{}
	}
	do(t, ts, "sql_shop_v1_users_create", `{"connectionId":"main-db","name":"new"}`)
	do(t, ts, "sql_shop_v1_users_update", `{"connectionId":"main-db","id":"6","age":1}`)
	do(t, ts, "sql_shop_v1_users_delete", `{"connectionId":"main-db","id":"6","confirm":true}`)
	do(t, ts, "sql_shop_v1_users_truncate", `{"connectionId":"main-db","confirm":true}`)
	for _, want := range []plugin.Event{
		{Type: plugin.EventAdd, Connection: "main-db", Key: "shop::v1::users", ID: "6", Namespace: "main"},
		{Type: plugin.EventUpdate, Connection: "main-db", Key: "shop::v1::users", ID: "6", Namespace: "main"},
		{Type: plugin.EventDelete, Connection: "main-db", Key: "shop::v1::users", ID: "6", Namespace: "main"},
		{Type: plugin.EventDelete, Connection: "main-db", Key: "shop::v1::users", Namespace: "main"},
	} {
		if got := next(); got != want {
			t.Errorf("event %+v, want %+v", got, want)
		}
	}
	// A failed write and a read publish nothing; the other table's subscriber saw nothing.
	refused(t, ts, "sql_shop_v1_users_delete", `{"connectionId":"main-db","id":"6","confirm":true}`, "no row")
	do(t, ts, "sql_shop_v1_users_list", `{"connectionId":"main-db"}`)
	do(t, ts, "sql_shop_v1_log_create", `{"connectionId":"main-db","msg":"marker"}`)
	select {
	case e := <-other:
		if e.Type != plugin.EventAdd || e.Key != "shop::v1::log" || e.ID != "" {
			t.Errorf("log event: %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no log event")
	}
	select {
	case e := <-ch:
		t.Errorf("an event for users after the failed delete and the log insert: %+v", e)
	default:
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Error("an event after cancel")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the channel did not close after its context ended")
	}
}

func TestConfigAndConnections(t *testing.T) {
	for _, tc := range []struct {
		cfg  sqlplugin.Config
		want []string
	}{
		{sqlplugin.Config{}, []string{"at least one"}},
		{sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"a": {Driver: "mysql", DSN: "x"}}}, []string{`"mysql" is not supported (sqlite or postgres)`}},
		{sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"a": {Driver: "postgres", DSN: "postgres://u:secret@h:5432"}}}, []string{"the dsn names no database"}},
		{sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"a": {Driver: "postgres", DSN: "host=h password=secret port=x"}}}, []string{"connections.a.database: dsn:"}},
		{sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"a": {Driver: "sqlite", DSN: "x.db", Listen: true}}}, []string{"listen and schemas are for postgres"}},
		{sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"a": {Driver: "postgres", DSN: "postgres://h/db", Seed: "x.sql"}}}, []string{"seeds are for sqlite"}},
		{sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"a": {Driver: "sqlite"}}}, []string{"dsn: required"}},
		{sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"a": {Driver: "sqlite", DSN: ":memory:"}}}, []string{"in-memory database needs a database name"}},
		{sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"a": {Driver: "sqlite", DSN: "x.db", Database: "a::b"}}}, []string{"not a usable database name"}},
	} {
		_, err := sqlplugin.Open(context.Background(), tc.cfg)
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error repeats the password: %v", err)
		}
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: want an error saying %q, got %v", tc.cfg, w, err)
			}
		}
	}

	// Two copies of one database are one group with two connections; a different database
	// is a group of its own; a database that cannot be read is a connection in error, and
	// the others work.
	a, b, other := newDB(t, "shop"), newDB(t, "shop"), newDB(t, "crm")
	p := open(t, sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{
		"prod": {Driver: "sqlite", DSN: a}, "staging": {Driver: "sqlite", DSN: b}, "crm": {Driver: "sqlite", DSN: other},
		"broken": {Driver: "sqlite", DSN: filepath.Join(t.TempDir(), "missing-dir", "x.db")},
		"mem":    {Driver: "sqlite", DSN: ":memory:", Database: "scratch"},
	}})
	ts := tools(t, p, plugin.Options{})
	v := do(t, ts, "sql_list_connections", `{}`)
	st := map[string]string{}
	for _, c := range v["connections"].([]any) {
		m := c.(map[string]any)
		st[m["id"].(string)] = m["status"].(string)
	}
	if st["prod"] != "connected" || st["broken"] != "error" || st["mem"] != "connected" || len(st) != 5 {
		t.Errorf("connection states: %v", st)
	}
	b2, _ := json.Marshal(ts.Lookup("sql_shop_v1_users_get").Def.InputSchema)
	if !strings.Contains(string(b2), `"enum":["prod","staging"]`) {
		t.Errorf("shop's users should be on prod and staging: %s", b2)
	}
	if ts.Lookup("sql_crm_v1_users_get") == nil {
		t.Error("crm's users have no tools")
	}
	do(t, ts, "sql_crm_v1_users_update", `{"connectionId":"crm","id":"1","name":"ada l."}`)
	if v := do(t, ts, "sql_shop_v1_users_get", `{"connectionId":"prod","id":"1"}`); v["name"] != "ada" {
		t.Errorf("a write to crm reached shop: %v", v)
	}
	if v := do(t, ts, "sql_list_namespaces", `{"connectionId":"prod"}`); len(v["namespaces"].([]any)) != 1 {
		t.Errorf("namespaces: %v", v)
	}
}
