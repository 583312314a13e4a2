package plugins

import (
	"context"
	"fmt"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/plugin"
)

// ProvideSelf gives the registry the mcpgw plugin's provider (package internal/gateway/internal/selfplugin
// over the gateway): every plugin configured with type mcpgw runs it. The gateway calls
// it before the registry starts; the registry never closes it.
func (ru *Runner) ProvideSelf(p plugin.Plugin) {
	ru.provMu.Lock()
	defer ru.provMu.Unlock()
	ru.self = p
}

// providedSelf is the opener of mcpgw plugins.
func (ru *Runner) providedSelf(_ context.Context, name string, _ *config.PluginDef) (plugin.Plugin, error) {
	ru.provMu.Lock()
	defer ru.provMu.Unlock()
	if ru.self == nil {
		return nil, fmt.Errorf("plugin %q is type mcpgw, which only runs inside a gateway (this registry has none)", name)
	}
	return ru.self, nil
}
