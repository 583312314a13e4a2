// Package pluginkind holds mcpgw's plugin kinds that need more than the gateway itself:
// the sql plugin (SQLite and PostgreSQL drivers) and out-of-process plugins (go-plugin and
// gRPC). A program supplies the kinds it wants when it builds its registry
// (registry.Registry.PluginKinds, embedded.Options.PluginKinds); `mcpgw serve` supplies
// All. A program that imports neither this package nor the plugin packages links none of
// those libraries.
package pluginkind

import (
	"context"
	"fmt"
	"sort"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/pluginproc"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/sqlplugin"
	"github.com/mcpgw/mcpgw/plugin"
)

// All is every kind of this package: sql and command.
func All() registry.PluginKinds {
	return registry.PluginKinds{"sql": SQL(), registry.KindCommand: Command()}
}

// SQL is the kind of type sql plugins: database tables as resource types (package
// internal/sqlplugin).
func SQL() registry.PluginKind { return sqlKind{} }

// Command is the kind of out-of-process plugins (plugins.<name>.command): an executable
// built with package plugin/serve, started over go-plugin and spoken to over gRPC
// (package internal/pluginproc).
func Command() registry.PluginKind { return commandKind{} }

type sqlKind struct{}

func (sqlKind) Open(ctx context.Context, _ string, def *config.PluginDef, _ registry.PluginEnv) (plugin.Plugin, error) {
	cfg := sqlplugin.Config{ReadOnly: def.ReadOnly, Connections: map[string]sqlplugin.ConnectionConfig{}}
	for id, c := range def.Connections {
		if c != nil {
			cfg.Connections[id] = sqlplugin.ConnectionConfig{Driver: c.Driver, DSN: c.DSN, Database: c.Database, Seed: c.Seed,
				Schemas: c.Schemas, Listen: c.Listen}
		}
	}
	return sqlplugin.Open(ctx, cfg)
}

func (sqlKind) Check(ctx context.Context, where string, def *config.PluginDef) config.Problems {
	return checkSQL(ctx, where, def)
}

// commandKind launches plugins with busy (nil: their calls never busy-wait). Command()
// has none; the kind a registry binds (Bind) has the registry's own.
type commandKind struct{ busy *pluginproc.BusyWait }

// Bind gives a registry a command kind of its own: its busy waiting counts that
// registry's plugin calls in flight, gives way to that gateway's requests (env.Quiet)
// and follows that gateway's upstream.busy_poll (Configure), so two gateways in one
// process wait and count apart.
func (commandKind) Bind(env registry.PluginEnv) registry.PluginKind {
	return commandKind{busy: pluginproc.NewBusyWait(0, env.Quiet)}
}

// Open starts the executable and sends it its config. The provider it returns ends the
// process when closed, and reports the process exiting, which the registry treats like a
// failed catalogue read: the plugin is down, its tools go, and it is started again with
// backoff.
func (k commandKind) Open(ctx context.Context, name string, d *config.PluginDef, env registry.PluginEnv) (plugin.Plugin, error) {
	raw, err := d.ConfigJSON()
	if err != nil {
		return nil, fmt.Errorf("plugin %q: config cannot be sent as JSON: %v", name, err)
	}
	vars := make([]string, 0, len(d.Env))
	for k, v := range d.Env {
		vars = append(vars, k+"="+v)
	}
	sort.Strings(vars)
	return pluginproc.Launch(ctx, pluginproc.Command{Name: name, Path: d.Command, Args: d.Args, Env: vars, Dir: d.Dir,
		Config: raw, Logger: env.Log, MaxMessageBytes: env.MaxMessageBytes, BusyWait: k.busy})
}

// Check finds nothing: config.Validate checks the command's shape, and starting it is
// what validation must not do.
func (commandKind) Check(context.Context, string, *config.PluginDef) config.Problems { return nil }

// Configure follows upstream.busy_poll: while the registry's only plugin call is in
// flight and its gateway is otherwise quiet, the host keeps its CPU busy for the answer.
// An unbound kind has no busy waiting to set.
func (k commandKind) Configure(cfg *config.Config, _ registry.PluginEnv) {
	if k.busy != nil {
		k.busy.SetDuration(cfg.Upstream.BusyPoll)
	}
}

// BusyStats is how the busy waits of the registry's plugin calls ended.
func (k commandKind) BusyStats() registry.BusyStats {
	s := k.busy.Stats() // a nil *BusyWait has none
	return registry.BusyStats{Waits: s.Waits, Caught: s.Caught, GaveWay: s.GaveWay, TimedOut: s.TimedOut}
}
