package serve_test

import (
	"context"
	"encoding/json"

	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
	"github.com/mcpgw/mcpgw/plugin/serve"
)

// A plugin executable's main: the provider is served to the gateway that started the
// process. (Compiled, not run: Main talks go-plugin's handshake with a gateway on stdout,
// so it runs only under one; internal/pluginproc's tests run it there.)
func ExampleMain() {
	serve.Main(plugintest.New())
}

// A plugin executable whose provider is built from its config in mcpgw.yaml
// (plugins.<name>.config, sent as JSON). Compiled, not run, as ExampleMain.
func ExampleMainFunc() {
	serve.MainFunc(func(ctx context.Context, config json.RawMessage) (plugin.Plugin, error) {
		var c struct {
			Seed bool `json:"seed"`
		}
		if err := json.Unmarshal(config, &c); err != nil {
			return nil, err
		}
		return plugintest.New(), nil
	})
}
