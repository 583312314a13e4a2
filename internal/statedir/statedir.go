// Package statedir names where mcpgw keeps its state and its local socket when the config
// does not say. It has no dependencies, so the small mcpgw-bridge binary can import it
// without pulling in the config loader.
package statedir

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// SocketName is the daemon's local socket inside its state directory.
const SocketName = "mcpgw.sock"

// Default is $XDG_STATE_HOME/mcpgw; else, on Windows, %LOCALAPPDATA%\mcpgw; else
// ~/.local/state/mcpgw; else a directory under the system temp dir when there is no home.
func Default() string {
	return defaultFor(runtime.GOOS, os.Getenv, os.UserHomeDir, os.TempDir())
}

func defaultFor(goos string, getenv func(string) string, home func() (string, error), tmp string) string {
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "mcpgw")
	}
	if goos == "windows" {
		if d := getenv("LOCALAPPDATA"); d != "" {
			return filepath.Join(d, "mcpgw")
		}
	}
	h, err := home()
	if err != nil || h == "" {
		return filepath.Join(tmp, "mcpgw-state")
	}
	return filepath.Join(h, ".local", "state", "mcpgw")
}

// Socket is the daemon's socket path for a state directory. It is a Unix domain socket on
// every OS (AF_UNIX on Windows 10 1803 and later).
func Socket(stateDir string) string { return filepath.Join(stateDir, SocketName) }

// CheckSocketPath says why path cannot name a Unix domain socket on this OS: the kernel's
// sun_path holds 108 bytes on Linux and Windows and 104 (with the terminating NUL) on
// macOS; a longer path fails with a bare "invalid argument".
func CheckSocketPath(path string) error { return checkSocketPath(runtime.GOOS, path) }

// MaxSocketPath is the longest socket path goos takes.
func MaxSocketPath(goos string) int {
	switch goos {
	case "darwin", "ios", "freebsd", "netbsd", "openbsd", "dragonfly":
		return 103
	}
	return 108
}

func checkSocketPath(goos, path string) error {
	if path == "" {
		return fmt.Errorf("empty socket path")
	}
	if n, limit := len(path), MaxSocketPath(goos); n > limit {
		return fmt.Errorf("socket path %s is %d bytes long; %s allows at most %d (choose a shorter state_dir)", path, n, goos, limit)
	}
	return nil
}
