package registry

import (
	"context"
	"fmt"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/plugin"
)

// ProvideSelf gives the registry the mcpgw plugin's provider (package internal/gateway/internal/selfplugin
// over the gateway): every plugin configured with type mcpgw runs it. The gateway calls
// it before the registry starts; the registry never closes it.
func (r *Registry) ProvideSelf(p plugin.Plugin) {
	r.provMu.Lock()
	defer r.provMu.Unlock()
	r.self = p
}

// providedSelf is the opener of mcpgw plugins.
func (r *Registry) providedSelf(_ context.Context, name string, _ *config.PluginDef) (plugin.Plugin, error) {
	r.provMu.Lock()
	defer r.provMu.Unlock()
	if r.self == nil {
		return nil, fmt.Errorf("plugin %q is type mcpgw, which only runs inside a gateway (this registry has none)", name)
	}
	return r.self, nil
}
