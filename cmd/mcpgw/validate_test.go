package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/auth"
)

// TestValidatePlugins: validate checks plugins without starting them. A seed that fails
// is an error found by a dry run in memory; a missing database without a seed, an
// in-memory one without a seed, a go plugin and an mcpgw plugin no agent lists are
// warnings; and no database file is created, not even for a good seed.
func TestValidatePlugins(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.sql")
	bad := filepath.Join(dir, "bad.sql")
	if err := os.WriteFile(good, []byte("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1);"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO nope VALUES (1);"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(yaml string) string {
		p := filepath.Join(dir, "mcpgw.yaml")
		if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	seeded := filepath.Join(dir, "data", "seeded.db")
	p := write(`
state_dir: ` + dir + `/state
plugins:
  shop:
    type: sql
    connections:
      seeded: {driver: sqlite, dsn: ` + seeded + `, seed: ` + good + `}
      empty: {driver: sqlite, dsn: ` + filepath.Join(dir, "empty.db") + `}
      mem: {driver: sqlite, dsn: ":memory:", database: mem}
  host:
    type: go
  ops:
    type: mcpgw
`)
	var out bytes.Buffer
	if err := validate([]string{"--config", p, "--offline"}, &out); err != nil {
		t.Fatalf("validate: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"warning: plugins.shop.connections.empty.dsn: " + filepath.Join(dir, "empty.db") + " does not exist and has no seed",
		"warning: plugins.shop.connections.mem: an in-memory database without a seed has no tables",
		"warning: plugins.host: type go",
		`warning: plugins.ops: no agent lists "ops" in its servers`,
		"ok (0 servers, 3 plugins)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, f := range []string{seeded, filepath.Join(dir, "empty.db")} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("validate created %s (or cannot tell: %v)", f, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(seeded)); !os.IsNotExist(err) {
		t.Errorf("validate created the directory %s", filepath.Dir(seeded))
	}

	// A seed that fails, and an mcpgw plugin enabled by default, are errors.
	p = write(`
state_dir: ` + dir + `/state
agents:
  ops: {servers: [gw]}
plugins:
  shop:
    type: sql
    connections:
      db: {driver: sqlite, dsn: ` + filepath.Join(dir, "db.db") + `, seed: ` + bad + `}
  gw:
    type: mcpgw
    default_enabled: true
`)
	out.Reset()
	err := validate([]string{"--config", p, "--offline"}, &out)
	if err == nil || !strings.Contains(err.Error(), "invalid config") {
		t.Fatalf("validate = %v, want invalid config\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "error: plugins.gw.default_enabled: the mcpgw plugin is only for agents that list it") {
		t.Errorf("output lacks the default_enabled error:\n%s", out.String())
	}
	// The config is refused before the plugins' dry run; fix it and the seed is caught.
	p = write(`
state_dir: ` + dir + `/state
plugins:
  shop:
    type: sql
    connections:
      db: {driver: sqlite, dsn: ` + filepath.Join(dir, "db.db") + `, seed: ` + bad + `}
`)
	out.Reset()
	err = validate([]string{"--config", p, "--offline"}, &out)
	if err == nil || !strings.Contains(out.String(), "error: plugins.shop.connections.db.seed: the script fails on an empty database") ||
		!strings.Contains(out.String(), "no such table: nope") {
		t.Errorf("validate = %v, want the seed's error:\n%s", err, out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "db.db")); !os.IsNotExist(err) {
		t.Errorf("validate created db.db (or cannot tell: %v)", err)
	}
}

// TestTokenScopeFlags: create-key and issue carry --read-only and --connection-scope into
// the credential; a malformed id and an admin credential with them are refused.
func TestTokenScopeFlags(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mcpgw.yaml")
	if err := os.WriteFile(p, []byte(`
state_dir: `+dir+`
auth:
  mode: jwt
  jwt:
    keys: [{alg: HS256, secret: "0123456789abcdef0123456789abcdef"}]
agents:
  a1: {}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := token([]string{"create-key", "--config", p, "--agent", "a1", "--read-only", "--connection-scope", "prod, staging"}, &out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "api_keys.jsonl"))
	if err != nil || !strings.Contains(string(b), `"read_only":true,"connection_scope":["prod","staging"]`) {
		t.Errorf("key file = %s (%v), want the key's read_only and connection_scope", b, err)
	}
	out.Reset()
	if err := token([]string{"issue", "--config", p, "--agent", "a1", "--connection-scope", "-"}, &out); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := loadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	v, err := auth.NewJWTVerifier(cfg.Auth.JWT)
	if err != nil {
		t.Fatal(err)
	}
	c, err := v.Verify(strings.TrimSpace(out.String()))
	if err != nil || c.ConnectionScope == nil || len(c.ConnectionScope) != 0 || c.ReadOnly {
		t.Errorf("issued token claims %+v (%v), want an empty connection scope", c, err)
	}
	for _, args := range [][]string{
		{"create-key", "--config", p, "--agent", "a1", "--connection-scope", "bad id"},
		{"create-key", "--config", p, "--admin", "--read-only"},
	} {
		if err := token(args, &out); err == nil {
			t.Errorf("token %v: no error", args)
		}
	}
}
