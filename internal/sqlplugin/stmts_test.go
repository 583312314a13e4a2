package sqlplugin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mcpgw/mcpgw/plugin"
)

// A get runs on a prepared statement that survives the table changing under it (SQLite
// prepares it again) and fails like a fresh query once the table is gone.
func TestPreparedGetFollowsSchemaChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a')`)
	p, err := Open(context.Background(), Config{Connections: map[string]ConnectionConfig{"c": {Driver: "sqlite", DSN: path, Database: "shop"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	key := "shop::v1::t"
	get := func() (plugin.Resource, error) {
		return p.Get(context.Background(), "c", key, plugin.GetInput{ID: "1"})
	}
	if r, err := get(); err != nil || r["v"] != "a" {
		t.Fatalf("first get: %v, %v", r, err)
	}
	if n := len(p.conns["c"].stmts.stmts); n != 1 {
		t.Fatalf("%d statements cached after a get, want 1", n)
	}
	// The same table again, with another row and a column more, behind the plugin's back.
	exec(`DROP TABLE t; CREATE TABLE t (id INTEGER PRIMARY KEY, w INTEGER, v TEXT); INSERT INTO t (w, v) VALUES (7, 'b')`)
	if r, err := get(); err != nil || r["v"] != "b" {
		t.Fatalf("get after the table was made again: %v, %v", r, err)
	}
	exec(`DROP TABLE t`)
	if r, err := get(); err == nil || errors.Is(err, plugin.ErrNotFound) {
		t.Fatalf("get after the table was dropped: %v, %v", r, err)
	}
}

// The cache keeps at most maxStmts statements; past that, queries run unprepared.
func TestStatementCacheBounded(t *testing.T) {
	p, err := Open(context.Background(), Config{Connections: map[string]ConnectionConfig{"c": {Driver: "sqlite", DSN: ":memory:", Database: "mem"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := p.conns["c"]
	for i := 0; i < maxStmts+5; i++ {
		rows, err := c.queryPrepared(context.Background(), fmt.Sprintf("SELECT %d AS n", i))
		if err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
		var n int
		if !rows.Next() || rows.Scan(&n) != nil || n != i {
			t.Fatalf("query %d answered %d", i, n)
		}
		rows.Close()
	}
	if got := len(c.stmts.stmts); got != maxStmts {
		t.Errorf("%d statements cached, want %d", got, maxStmts)
	}
}
