package statedir

import (
	"path/filepath"
	"testing"
)

func TestDefaultFollowsXDGStateHome(t *testing.T) {
	d := t.TempDir()
	t.Setenv("XDG_STATE_HOME", d)
	if got, want := Default(), filepath.Join(d, "mcpgw"); got != want {
		t.Fatalf("Default() = %q, want %q", got, want)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", d)
	if got, want := Default(), filepath.Join(d, ".local", "state", "mcpgw"); got != want {
		t.Fatalf("Default() without XDG_STATE_HOME = %q, want %q", got, want)
	}
	if got, want := Socket("/s"), filepath.Join("/s", "mcpgw.sock"); got != want {
		t.Fatalf("Socket = %q, want %q", got, want)
	}
}
