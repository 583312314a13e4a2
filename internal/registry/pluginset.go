package registry

import (
	"maps"
	"slices"

	"github.com/mcpgw/mcpgw/internal/registry/internal/plugins"
	"github.com/mcpgw/mcpgw/plugin"
)

// Plugin returns a configured plugin by name, or nil.
func (r *Registry) Plugin(name string) *Plugin { return r.set.Load().plugins[name] }

// PluginFor is the plugin whose tool t is (t.PluginTool set): the plugin named t.Server,
// if the run that generated t is still its run; nil when a reload replaced or removed it
// since (its calls then fail as a stopped plugin's do).
func (r *Registry) PluginFor(t *Tool) *Plugin {
	if p := r.set.Load().plugins[t.Server]; p != nil && p.Run() == t.PluginRun {
		return p
	}
	return nil
}

// PluginNames lists the configured plugins in order.
func (r *Registry) PluginNames() []string {
	return slices.Sorted(maps.Keys(r.set.Load().plugins))
}

// PluginStatuses reports every plugin's health, in name order.
func (r *Registry) PluginStatuses() []PluginStatus {
	set := r.set.Load()
	out := make([]PluginStatus, 0, len(set.plugins))
	for _, name := range slices.Sorted(maps.Keys(set.plugins)) {
		out = append(out, set.plugins[name].Status())
	}
	return out
}

// pluginHost is what the plugins need of the registry r (plugins.Host).
func pluginHost(r *Registry) plugins.Host {
	return plugins.Host{
		Ctx: r.ctx, Log: r.log, Config: r.Config,
		BackoffMin: r.timing.BackoffMin, BackoffMax: r.timing.BackoffMax, DrainFor: r.timing.DrainFor,
		Supplied: func() PluginKinds { return r.PluginKinds },
		Quiet:    r.dialer.Busy.Quiet,
		Changed:  r.changes.note,
		OnState: func(p *Plugin, state string) {
			if r.OnState != nil && r.Plugin(p.Name) == p {
				r.OnState(p.Name, state)
			}
		},
		Observe: r.integ.observePlugin,
		Restart: r.restartPlugin,
	}
}

// Provide gives the registry an in-process provider: the plugin of that name, configured
// with type go, runs it (plugins.Runner.Provide).
func (r *Registry) Provide(name string, p plugin.Plugin) { r.plug.Provide(name, p) }

// ProvideSelf gives the registry the provider of the mcpgw plugin (plugins.Runner.ProvideSelf).
func (r *Registry) ProvideSelf(p plugin.Plugin) { r.plug.ProvideSelf(p) }

// PluginBusyStats is how the busy waits of this registry's plugin calls ended
// (plugins.Runner.BusyStats).
func (r *Registry) PluginBusyStats() BusyStats { return r.plug.BusyStats() }
