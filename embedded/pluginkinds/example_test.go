package pluginkinds_test

import (
	"fmt"

	"github.com/mcpgw/mcpgw/embedded"
	"github.com/mcpgw/mcpgw/embedded/pluginkinds"
)

// A host that runs sql plugins and out-of-process plugins, as `mcpgw serve` does, gives
// the gateway every kind; one that wants only the sql plugin gives SQL().
func ExampleAll() {
	opts := embedded.Options{PluginKinds: pluginkinds.All()}
	for _, k := range opts.PluginKinds {
		fmt.Println(k.PluginKind())
	}
	// Output:
	// sql
	// command
}
