package registry

import (
	"context"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/plugins"
)

// The names of the plugin runner's types as the rest of the module used them before it
// moved to internal/registry/internal/plugins. They stay until their users name the
// runner's own.

// Plugin is plugins.Plugin.
type Plugin = plugins.Plugin

// PluginStatus is plugins.Status.
type PluginStatus = plugins.Status

// PluginScope is plugins.Scope.
type PluginScope = plugins.Scope

// PluginScoper is plugins.Scoper.
type PluginScoper = plugins.Scoper

// PluginKind is plugins.Kind.
type PluginKind = plugins.Kind

// PluginKinds is plugins.Kinds.
type PluginKinds = plugins.Kinds

// PluginEnv is plugins.Env.
type PluginEnv = plugins.Env

// PluginKindConfigurer is plugins.KindConfigurer.
type PluginKindConfigurer = plugins.KindConfigurer

// PluginKindBinder is plugins.KindBinder.
type PluginKindBinder = plugins.KindBinder

// PluginBusyReporter is plugins.BusyReporter.
type PluginBusyReporter = plugins.BusyReporter

// BusyStats is plugins.BusyStats.
type BusyStats = plugins.BusyStats

// KindCommand is plugins.KindCommand.
const KindCommand = plugins.KindCommand

// ErrPluginTimeout, ErrPluginStopped and ErrNoWatch are plugins.ErrTimeout,
// plugins.ErrStopped and plugins.ErrNoWatch.
var (
	ErrPluginTimeout = plugins.ErrTimeout
	ErrPluginStopped = plugins.ErrStopped
	ErrNoWatch       = plugins.ErrNoWatch
)

// CheckPlugins is plugins.CheckPlugins.
func CheckPlugins(ctx context.Context, cfg *config.Config, kinds PluginKinds) config.Problems {
	return plugins.CheckPlugins(ctx, cfg, kinds)
}
