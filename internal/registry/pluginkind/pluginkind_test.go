package pluginkind_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/registry/pluginkind"
)

// TestSQLKind: the sql kind opens a seeded in-memory database as a plugin whose tables are
// tools, and its static check dry-runs a seed without creating the database file.
func TestSQLKind(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.sql")
	if err := os.WriteFile(seed, []byte("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.sql")
	if err := os.WriteFile(bad, []byte("CREATE TABLE;"), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "never.db")
	cfg := &config.Config{Naming: config.Naming{Prefix: "always", Separator: "__", MaxLength: 64},
		Upstream: config.UpstreamDefaults{ConnectTimeout: 10 * time.Second},
		Plugins: map[string]*config.PluginDef{
			"shop":   {Type: "sql", Refresh: -1, Connections: map[string]*config.PluginConnection{"main": {Driver: "sqlite", DSN: ":memory:", Database: "shop", Seed: seed}}},
			"broken": {Type: "sql", Refresh: -1, Connections: map[string]*config.PluginConnection{"main": {Driver: "sqlite", DSN: db, Seed: bad}}},
		}}
	kinds := pluginkind.All()
	if kinds["sql"] == nil || kinds[registry.KindCommand] == nil || len(kinds) != 2 {
		t.Fatalf("All: %v", kinds)
	}
	ps := registry.CheckPlugins(context.Background(), cfg, kinds)
	if len(ps) != 1 || ps[0].Where != "plugins.broken.connections.main.seed" || ps[0].Warning {
		t.Errorf("check: %v", ps)
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("the check created the database file")
	}
	r := registry.New(cfg, slog.New(slog.DiscardHandler))
	r.PluginKinds = kinds
	t.Cleanup(r.Close)
	r.Start(10 * time.Second)
	waitState(t, r.Plugin("shop"), registry.StateUp)
	if names := toolNames(r.ViewWith([]string{"shop"}, nil, nil, nil, false)); !slices.Contains(names, "shop_shop_v1_users_get") {
		t.Errorf("tools: %v", names)
	}
	waitState(t, r.Plugin("broken"), registry.StateDown)
	if _, why := r.Plugin("broken").State(); strings.Contains(why, "not built into") {
		t.Errorf("the sql kind was supplied, yet: %s", why)
	}
}

// waitState waits (bounded) for a plugin to reach a state.
func waitState(t *testing.T, p *registry.Plugin, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, why := p.State()
		if st == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin %s: state %s (%s), want %s", p.Name, st, why, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func toolNames(v *registry.View) []string {
	var out []string
	for _, t := range v.Tools {
		out = append(out, t.Exposed)
	}
	return out
}
