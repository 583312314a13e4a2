package sqlplugin_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/plugin"
)

// TestGetRefusesARowOverTheResultLimit: a row larger than the call's result may be
// (plugin.MaxResultBytes) is refused with plugin.ErrTooLarge from the database's own
// size of it, without reading it; rows within the bound, and every row without one, are
// read as before.
func TestGetRefusesARowOverTheResultLimit(t *testing.T) {
	p, path := oneConn(t)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO users (id, name, email) VALUES (1000, 'big', ?)`, strings.Repeat("x", 1<<20)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	keys, err := p.ResourceTypes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var key string
	for _, k := range keys {
		if strings.HasSuffix(k.Key, "::users") {
			key = k.Key
		}
	}
	limited := plugin.WithMaxResultBytes(context.Background(), 64<<10)
	_, err = p.Get(limited, "main-db", key, plugin.GetInput{ID: "1000"})
	if !errors.Is(err, plugin.ErrTooLarge) || !strings.Contains(err.Error(), "65536") {
		t.Errorf("a 1 MiB row under a 64 KiB bound: %v; want plugin.ErrTooLarge naming the bound", err)
	}
	if r, err := p.Get(context.Background(), "main-db", key, plugin.GetInput{ID: "1000"}); err != nil || len(r["email"].(string)) != 1<<20 {
		t.Errorf("the same row without a bound: %v", err)
	}
	if _, err := p.Get(limited, "main-db", key, plugin.GetInput{ID: "1"}); err != nil {
		t.Errorf("a small row under the bound: %v", err)
	}
	if _, err := p.Get(limited, "main-db", key, plugin.GetInput{ID: "999999"}); !errors.Is(err, plugin.ErrNotFound) {
		t.Errorf("a missing row under the bound: %v, want ErrNotFound", err)
	}
}
