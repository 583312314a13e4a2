package registry

import (
	"testing"

	"github.com/mcpgw/mcpgw/internal/registry/internal/plugins"
)

// TestPluginStatesAreServerStates: /readyz and the admin API read a plugin's state and a
// server's with the same words.
func TestPluginStatesAreServerStates(t *testing.T) {
	for _, c := range [][2]string{{StateStarting, plugins.StateStarting}, {StateUp, plugins.StateUp},
		{StateDown, plugins.StateDown}, {StateStopped, plugins.StateStopped}} {
		if c[0] != c[1] {
			t.Errorf("server state %q is plugin state %q", c[0], c[1])
		}
	}
}
