// Package statedir names where mcpgw keeps its state and its local socket when the config
// does not say. It has no dependencies, so the small mcpgw-bridge binary can import it
// without pulling in the config loader.
package statedir

import (
	"os"
	"path/filepath"
)

// SocketName is the daemon's local socket inside its state directory.
const SocketName = "mcpgw.sock"

// Default is $XDG_STATE_HOME/mcpgw, else ~/.local/state/mcpgw, else a directory under the
// system temp dir when there is no home.
func Default() string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "mcpgw")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "mcpgw-state")
	}
	return filepath.Join(home, ".local", "state", "mcpgw")
}

// Socket is the daemon's socket path for a state directory.
func Socket(stateDir string) string { return filepath.Join(stateDir, SocketName) }
