package sqlplugin

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/mcpgw/mcpgw/plugin"
)

// A read-only plugin's database refuses writes itself (query_only), whatever SQL reached it.
func TestReadOnlyDatabaseRefusesWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	p, err := Open(context.Background(), Config{ReadOnly: true, Connections: map[string]ConnectionConfig{"c": {Driver: "sqlite", DSN: path}}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.conns["c"].db.Exec(`DELETE FROM t`)
	if err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("a write on a read-only connection: %v", err)
	}
	var n int
	if err := p.conns["c"].db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 1 {
		t.Errorf("reads: %d, %v", n, err)
	}
}

// A subscriber that falls more than subscriberBuffer events behind is dropped: it gets
// what was buffered, then its channel closes; writes never wait for it.
func TestSlowSubscriberDropped(t *testing.T) {
	p := &Plugin{conns: map[string]*conn{"c": {id: "c", database: "db", tables: map[string]*table{"t": {name: "t", namespace: "main"}}}}, ids: []string{"c"}}
	ch, err := p.Subscribe(context.Background(), "c", "db::v1::t")
	if err != nil {
		t.Fatal(err)
	}
	for range subscriberBuffer + 1 {
		p.watch.publish(plugin.Event{Type: plugin.EventAdd, Connection: "c", Key: "db::v1::t"})
	}
	got := 0
	for range ch {
		got++
	}
	if got != subscriberBuffer {
		t.Errorf("received %d events before the close, want %d", got, subscriberBuffer)
	}
	p.watch.mu.Lock()
	left := len(p.watch.subs["c\x00db::v1::t"])
	p.watch.mu.Unlock()
	if left != 0 {
		t.Errorf("%d subscribers left after the drop", left)
	}
}
