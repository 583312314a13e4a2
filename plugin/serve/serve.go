// Package serve is what a plugin executable's main calls. A resource provider written
// against package plugin becomes an out-of-process mcpgw plugin with one line:
//
//	func main() { serve.Main(myProvider) }
//
// or, when the provider is built from the plugin's config in mcpgw.yaml
// (plugins.<name>.config, sent as JSON):
//
//	func main() {
//		serve.MainFunc(func(ctx context.Context, config json.RawMessage) (plugin.Plugin, error) {
//			var c MyConfig
//			if err := json.Unmarshal(config, &c); err != nil {
//				return nil, err
//			}
//			return Open(ctx, c)
//		})
//	}
//
// The gateway starts the executable (plugins.<name>.command), talks to it over gRPC through
// hashicorp/go-plugin, restarts it with backoff when it exits, and ends it when the plugin
// is removed or the gateway stops. The process exits by itself when the gateway's
// connection closes. Log with log/slog: the default logger writes JSON lines to stderr,
// which the gateway logs with their level. Do not write to stdout before Main: go-plugin's
// handshake uses it. docs/plugins.md has the details.
package serve

import (
	"context"
	"encoding/json"

	"github.com/mcpgw/mcpgw/internal/pluginproc"
	"github.com/mcpgw/mcpgw/plugin"
)

// Main serves p to the gateway that started this process, and exits when the gateway is
// done with it. The plugin's config, if any, is ignored.
func Main(p plugin.Plugin) {
	pluginproc.Serve(func(context.Context, json.RawMessage) (plugin.Plugin, error) { return p, nil })
}

// MainFunc serves the provider open makes from the plugin's config (empty when the config
// file gives none). An error from open is the reason the gateway shows for the plugin
// being down; it starts the process again later, with backoff.
func MainFunc(open func(ctx context.Context, config json.RawMessage) (plugin.Plugin, error)) {
	pluginproc.Serve(open)
}
