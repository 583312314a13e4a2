package config

import (
	"strings"
	"testing"
)

// Out-of-process plugins (plugins.<name>.command): a command XOR a type, with clear
// errors, and a config that reaches the plugin as JSON.
func TestCommandPlugins(t *testing.T) {
	good := "plugins:\n  shop:\n    command: /usr/local/bin/mcpgw-plugin-sql\n    args: [--quiet]\n    env: {TZ: UTC}\n" +
		"    config:\n      read_only: true\n      connections:\n        main: {driver: sqlite, dsn: /tmp/shop.db}\n      limits: {1: one}\n" +
		"agents:\n  a: {servers: [shop], connection_scope: [main]}\n"
	cfg, ps, err := Parse([]byte(good))
	if err != nil {
		t.Fatalf("a good command plugin: %v", err)
	}
	for _, p := range ps {
		t.Errorf("unexpected problem: %s", p)
	}
	d := cfg.Plugins["shop"]
	if !d.OutOfProcess() || d.Args[0] != "--quiet" || d.Env["TZ"] != "UTC" {
		t.Errorf("parsed %+v", d)
	}
	raw, err := d.ConfigJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"connections":{"main":{"driver":"sqlite","dsn":"/tmp/shop.db"}},"limits":{"1":"one"},"read_only":true}`; string(raw) != want {
		t.Errorf("config as JSON:\n got %s\nwant %s", raw, want)
	}

	bad := "plugins:\n" +
		"  both: {type: sql, command: x, connections: {main: {driver: sqlite, dsn: a.db}}}\n" +
		"  nocmd: {args: [x], config: {a: 1}}\n" +
		"  sqlargs: {type: sql, args: [x], connections: {main: {driver: sqlite, dsn: a.db}}}\n" +
		"  badenv: {command: x, env: {\"A=B\": c}}\n" +
		"  neg: {command: x, call_timeout: -1s}\n" +
		"  none: {}\n"
	_, ps, err = Parse([]byte(bad))
	if err == nil {
		t.Fatal("no error")
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`plugins.both: both type "sql" and command "x": a plugin is either a type run in the gateway or a command run beside it; remove one`,
		"plugins.both.connections: a command plugin's connections are its own; put them under config",
		"plugins.nocmd: args, env or config without a command",
		"plugins.sqlargs: args, env, dir and config are for plugins that run a command; a type sql plugin takes none",
		`plugins.badenv.env: "A=B" is not an environment variable name`,
		"plugins.neg.call_timeout: must not be negative",
		"or command (an out-of-process plugin)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q in:\n%s", want, all)
		}
	}
}
