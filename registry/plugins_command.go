package registry

import (
	"context"
	"fmt"
	"sort"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/external"
)

// openCommand is the opener of out-of-process plugins (plugins.<name>.command): it starts
// the executable through package plugin/external and sends it its config. The provider it
// returns ends the process when closed, and reports the process exiting (exited), which
// runOnce treats like a failed catalogue read: the plugin is down, its tools go, and it is
// started again with backoff.
func (r *Registry) openCommand(ctx context.Context, name string, d *config.PluginDef) (plugin.Plugin, error) {
	raw, err := d.ConfigJSON()
	if err != nil {
		return nil, fmt.Errorf("plugin %q: config cannot be sent as JSON: %v", name, err)
	}
	env := make([]string, 0, len(d.Env))
	for k, v := range d.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return external.Launch(ctx, external.Command{Name: name, Path: d.Command, Args: d.Args, Env: env, Dir: d.Dir,
		Config: raw, Logger: r.log, MaxMessageBytes: r.cfg.Load().Upstream.MaxMessageBytes, BusyWait: r.pluginBusy})
}

// exited is the channel closed when an out-of-process provider's process went, and why
// (nil channel for providers in the gateway's process).
func exited(prov plugin.Plugin) (<-chan struct{}, func() error) {
	if x, ok := prov.(interface {
		Exited() <-chan struct{}
		Err() error
	}); ok {
		return x.Exited(), x.Err
	}
	return nil, nil
}
