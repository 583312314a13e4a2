package sqlplugin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
	"github.com/mcpgw/mcpgw/internal/sqlplugin"
	"github.com/mcpgw/mcpgw/plugin"
)

const pgSchema = `
CREATE TABLE users (
	id      bigserial PRIMARY KEY,
	name    text NOT NULL,
	email   varchar(200) UNIQUE,
	age     integer,
	score   double precision,
	balance numeric(12,2),
	active  boolean NOT NULL DEFAULT true,
	joined  date,
	uid     uuid,
	meta    jsonb,
	avatar  bytea
);
CREATE TABLE log (at text, msg text);
CREATE SCHEMA audit;
CREATE TABLE audit.log (id integer PRIMARY KEY, what text NOT NULL);
CREATE TABLE audit.events (id integer PRIMARY KEY, what text NOT NULL);
INSERT INTO users (name, email, age, score, balance, active, joined, uid, meta) VALUES
	('ada',      'ada@example.com',      36, 9.5,  12.50, true,  '1815-12-10', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"lang": "en"}'),
	('grace',    'grace@example.com',    85, 8.0,  0.10,  true,  '1906-12-09', NULL, NULL),
	('linus',    NULL,                   28, NULL, NULL,  false, NULL, NULL, NULL),
	('margaret', 'margaret@example.com', NULL, 7.25, 99999.99, true, '1936-08-17', NULL, NULL),
	('100%_real', 'pct@example.com',     40, 1,    1,     false, NULL, NULL, NULL);
INSERT INTO log VALUES ('2024-01-01', 'started'), ('2024-01-02', 'stopped');
INSERT INTO audit.log VALUES (1, 'created');
`

// pgShop starts a cluster of the test's own (stopped when the test ends) with a database
// "shop" made from pgSchema.
func pgShop(t *testing.T) (*peers.Postgres, string) {
	t.Helper()
	pg := peers.StartPostgres(t)
	pg.CreateDatabase(t, "shop")
	pg.Psql(t, "shop", pgSchema)
	return pg, pg.DSN("shop")
}

func TestPostgresCRUDAndFind(t *testing.T) {
	pg, dsn := pgShop(t)
	p := open(t, sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"pg": {Driver: "postgres", DSN: dsn}}})
	ts := tools(t, p, plugin.Options{})
	// The same table name in two schemas: each is qualified; a unique one is not.
	for _, name := range []string{"sql_shop_v1_users_get", "sql_shop_v1_events_get"} {
		if ts.Lookup(name) == nil {
			t.Errorf("no tool %s", name)
		}
	}
	keys := map[string]bool{}
	for _, tool := range ts.Tools {
		keys[tool.Key] = true
	}
	if !keys["shop::v1::public.log"] || !keys["shop::v1::audit.log"] || keys["shop::v1::log"] || !keys["shop::v1::users"] {
		t.Errorf("resource keys: %v", keys)
	}
	u := do(t, ts, "sql_shop_v1_users_get", `{"connectionId":"pg","id":"1"}`)
	if u["name"] != "ada" || u["joined"] != "1815-12-10" || u["active"] != true || u["score"] != 9.5 || u["balance"] != 12.5 ||
		u["uid"] != "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" || u["meta"] != `{"lang": "en"}` || u["avatar"] != nil {
		t.Errorf("get 1: %v", u)
	}
	u = do(t, ts, "sql_shop_v1_users_create", `{"connectionId":"pg","name":"barbara","age":50,"active":false,"avatar":"AAEC","joined":"1950-01-02","uid":"b0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11","meta":"{\"a\":1}","balance":3.25}`)
	if u["id"] != 6.0 || u["name"] != "barbara" || u["active"] != false || u["avatar"] != "AAEC" || u["joined"] != "1950-01-02" || u["balance"] != 3.25 {
		t.Errorf("create: %v", u)
	}
	u = do(t, ts, "sql_shop_v1_users_update", `{"connectionId":"pg","id":"6","email":"b@example.com","age":51}`)
	if u["email"] != "b@example.com" || u["age"] != 51.0 || u["name"] != "barbara" {
		t.Errorf("update: %v", u)
	}
	refused(t, ts, "sql_shop_v1_users_create", `{"connectionId":"pg","name":"x","email":"ada@example.com"}`, "duplicate key")
	refused(t, ts, "sql_shop_v1_users_create", `{"connectionId":"pg","name":"x","joined":"not a date"}`, "invalid input syntax")
	refused(t, ts, "sql_shop_v1_users_get", `{"connectionId":"pg","id":"1","namespace":"audit"}`, `namespace "public", not "audit"`)
	if v := do(t, ts, "sql_shop_v1_users_delete", `{"connectionId":"pg","id":"6","confirm":true}`); v["name"] != "barbara" {
		t.Errorf("delete: %v", v)
	}
	refused(t, ts, "sql_shop_v1_users_get", `{"connectionId":"pg","id":"6"}`, "no row")

	// Two predicates and pages of two: active users aged 30 or more.
	const find = "sql_shop_v1_users_find"
	args := `{"connectionId":"pg","filter":[{"field":"active","operator":"eq","value":true},{"field":"age","operator":"gte","value":30}],"pageSize":1}`
	v := do(t, ts, find, args)
	if got := names(v["items"]); len(got) != 1 || got[0] != "ada" || v["nextCursor"] == nil {
		t.Fatalf("page 1: %v", v)
	}
	v = do(t, ts, find, strings.TrimSuffix(args, "}")+`,"cursor":`+quote(v["nextCursor"].(string))+`}`)
	if got := names(v["items"]); len(got) != 1 || got[0] != "grace" || v["nextCursor"] != nil {
		t.Fatalf("page 2: %v", v)
	}
	for _, c := range []struct {
		filter string
		want   string
	}{
		{`[{"field":"name","operator":"contains","value":"%_"}]`, "100%_real"},
		{`[{"field":"name","operator":"contains","value":"GRAC"}]`, "grace"},
		{`[{"field":"email","operator":"is_null","value":true}]`, "linus"},
		{`[{"field":"joined","operator":"lt","value":"1900-01-01"}]`, "ada"},
		{`[{"field":"uid","operator":"eq","value":"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}]`, "ada"},
		{`[{"field":"balance","operator":"gt","value":1000}]`, "margaret"},
		{`[{"field":"age","operator":"in","value":[28,99]}]`, "linus"},
	} {
		v := do(t, ts, find, `{"connectionId":"pg","filter":`+c.filter+`}`)
		if got := names(v["items"]); len(got) != 1 || got[0] != c.want {
			t.Errorf("find %s: %v, want %s", c.filter, got, c.want)
		}
	}
	if v := do(t, ts, "sql_shop_v1_users_count", `{"connectionId":"pg"}`); v["count"] != 5.0 {
		t.Errorf("count: %v", v)
	}
	if v := do(t, ts, "sql_shop_v1_users_truncate", `{"connectionId":"pg","confirm":true}`); v["deleted"] != 0.0 {
		t.Errorf("truncate: %v", v) // TRUNCATE reports no row count
	}
	if n := pg.Psql(t, "shop", "SELECT count(*) FROM users"); n != "0" {
		t.Errorf("rows after truncate: %s", n)
	}
	ns, err := p.Namespaces(context.Background(), "pg")
	if err != nil || strings.Join(ns, ",") != "audit,public" {
		t.Errorf("namespaces: %v %v", ns, err)
	}
}

func TestPostgresSQLInjection(t *testing.T) {
	pg, dsn := pgShop(t)
	p := open(t, sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"pg": {Driver: "postgres", DSN: dsn}}})
	ts := tools(t, p, plugin.Options{})
	ctx := context.Background()
	evil := `x'); DROP TABLE users; --`
	if u := do(t, ts, "sql_shop_v1_users_create", `{"connectionId":"pg","name":`+quote(evil)+`}`); u["name"] != evil {
		t.Errorf("the value was not stored as given: %v", u)
	}
	if v := do(t, ts, "sql_shop_v1_users_find", `{"connectionId":"pg","filter":[{"field":"name","operator":"eq","value":"' OR '1'='1"}]}`); len(v["items"].([]any)) != 0 {
		t.Errorf("an injected OR matched: %v", v)
	}
	if v := do(t, ts, "sql_shop_v1_users_find", `{"connectionId":"pg","textQuery":"%' OR 1=1 --"}`); len(v["items"].([]any)) != 0 {
		t.Errorf("an injected textQuery matched: %v", v)
	}
	refused(t, ts, "sql_shop_v1_users_get", `{"connectionId":"pg","id":"1 OR 1=1"}`, "is not an integer")
	refused(t, ts, "sql_shop_v1_users_update", `{"connectionId":"pg","id":"1","name\" = 'x'; DROP TABLE users; --":"y"}`, "unexpected additional properties")
	for _, key := range []string{`shop::v1::users"; DROP TABLE users; --`, `shop::v1::pg_class`, `shop::v1::information_schema.tables`, `shop::v1::public.users`, `postgres::v1::users`} {
		if _, err := p.Get(ctx, "pg", key, plugin.GetInput{ID: "1"}); !errors.Is(err, plugin.ErrNotFound) {
			t.Errorf("key %q: %v", key, err)
		}
	}
	if _, err := p.Find(ctx, "pg", "shop::v1::users", plugin.FindInput{Filter: plugin.Filter{Predicates: []plugin.Predicate{
		{Field: "name = name OR 1", Operator: plugin.OpEq, Value: "x"}}}}); err == nil || !strings.Contains(err.Error(), "no filterable column") {
		t.Errorf("an injected field: %v", err)
	}
	if _, err := p.Update(ctx, "pg", "shop::v1::users", plugin.UpdateInput{ID: "1", Data: map[string]any{`name" = 'x'; DROP TABLE users; --`: "y"}}); err == nil || !strings.Contains(err.Error(), "has no column") {
		t.Errorf("an injected column: %v", err)
	}
	if n := pg.Psql(t, "shop", "SELECT count(*) FROM users"); n != "6" {
		t.Errorf("users after the attempts: %s rows", n)
	}
}

func TestPostgresReadOnlyServerRefusesWrites(t *testing.T) {
	_, dsn := pgShop(t)
	p := open(t, sqlplugin.Config{ReadOnly: true, Connections: map[string]sqlplugin.ConnectionConfig{"pg": {Driver: "postgres", DSN: dsn}}})
	ts := tools(t, p, plugin.Options{})
	if ts.Lookup("sql_shop_v1_users_create") != nil || ts.Lookup("sql_shop_v1_users_truncate") != nil || ts.Lookup("sql_shop_v1_users_find") == nil {
		t.Error("read-only tools")
	}
	if _, err := p.Create(context.Background(), "pg", "shop::v1::users", plugin.CreateInput{Data: map[string]any{"name": "x"}}); !errors.Is(err, plugin.ErrUnsupported) {
		t.Errorf("create: %v", err)
	}
}

func TestPostgresDown(t *testing.T) {
	// A port nothing listens on: the connection reports an error, the plugin opens.
	p := open(t, sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"pg": {Driver: "postgres", DSN: "postgres://postgres@127.0.0.1:1/shop?sslmode=disable&connect_timeout=2"}}})
	cs, _ := p.Connections(context.Background())
	if len(cs) != 1 || cs[0].Status != plugin.StatusError || cs[0].Name != "shop" {
		t.Errorf("connections: %+v", cs)
	}
}

// next waits for one event, or fails after a while.
func next(t *testing.T, ch <-chan plugin.Event) plugin.Event {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("the subscription closed")
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return plugin.Event{}
}

// waitListening waits until the plugin's listening session is in pg_stat_activity and
// returns its backend pid.
func waitListening(t *testing.T, pg *peers.Postgres, except string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		pid := pg.Psql(t, "shop", "SELECT coalesce(max(pid), 0) FROM pg_stat_activity WHERE application_name = '"+sqlplugin.ListenApplicationName+"' AND pid::text <> '"+except+"'")
		if pid != "0" {
			// LISTEN runs right after the connection: wait until it is registered.
			if pg.Psql(t, "shop", "SELECT count(*) FROM pg_stat_activity WHERE pid = "+pid+" AND query ILIKE 'LISTEN%'") == "1" {
				return pid
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the plugin is not listening after 15s")
	return ""
}

func TestPostgresListenNotify(t *testing.T) {
	pg, dsn := pgShop(t)
	pg.Psql(t, "shop", sqlplugin.NotifySQL()+"\nSELECT mcpgw_watch('public.users'); SELECT mcpgw_watch('public.log');")
	p := open(t, sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"pg": {Driver: "postgres", DSN: dsn, Listen: true}}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := p.Subscribe(ctx, "pg", "shop::v1::users")
	if err != nil {
		t.Fatal(err)
	}
	pid := waitListening(t, pg, "")

	// The plugin's own write is reported once: when it is made, not again by the trigger
	// (the next event is someone else's).
	if _, err := p.Update(ctx, "pg", "shop::v1::users", plugin.UpdateInput{ID: "3", Data: map[string]any{"age": int64(29)}}); err != nil {
		t.Fatal(err)
	}
	if e := next(t, ch); e.Type != plugin.EventUpdate || e.ID != "3" {
		t.Errorf("own update: %+v", e)
	}

	// Someone else's writes, through psql.
	pg.Psql(t, "shop", "UPDATE users SET age = 37 WHERE id = 1")
	if e := next(t, ch); e.Type != plugin.EventUpdate || e.ID != "1" || e.Namespace != "public" || e.Key != "shop::v1::users" || e.Connection != "pg" {
		t.Errorf("update event: %+v", e)
	}
	pg.Psql(t, "shop", "INSERT INTO users (name) VALUES ('edsger')")
	if e := next(t, ch); e.Type != plugin.EventAdd || e.ID != "6" {
		t.Errorf("insert event: %+v", e)
	}
	pg.Psql(t, "shop", "DELETE FROM users WHERE id = 6")
	if e := next(t, ch); e.Type != plugin.EventDelete || e.ID != "6" {
		t.Errorf("delete event: %+v", e)
	}
	// A rolled-back change sends nothing; the next committed one arrives first.
	pg.Psql(t, "shop", "BEGIN; UPDATE users SET age = 1 WHERE id = 2; ROLLBACK; TRUNCATE log; UPDATE users SET age = 86 WHERE id = 2")
	if e := next(t, ch); e.Type != plugin.EventUpdate || e.ID != "2" {
		t.Errorf("after a rollback and another table's truncate: %+v", e)
	}

	// The listening session is killed: the plugin reconnects, says every table changed,
	// and sees later changes again.
	pg.Psql(t, "shop", "SELECT pg_terminate_backend("+pid+")")
	waitListening(t, pg, pid)
	if e := next(t, ch); e.ID != "" || e.Key != "shop::v1::users" {
		t.Errorf("after a reconnection: %+v, want a whole-type event", e)
	}
	pg.Psql(t, "shop", "TRUNCATE users CASCADE")
	if e := next(t, ch); e.Type != plugin.EventDelete || e.ID != "" {
		t.Errorf("truncate event: %+v", e)
	}
	cs, _ := p.Connections(ctx)
	if len(cs) != 1 || !strings.Contains(cs[0].Description, "listening for changes") {
		t.Errorf("connection: %+v", cs)
	}
}
