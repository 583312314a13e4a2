package statedir

import (
	"errors"
	"path/filepath"
	"strings"
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

func TestDefaultPerOS(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	cases := []struct {
		goos string
		env  map[string]string
		home func() (string, error)
		want string
	}{
		{"linux", nil, home, filepath.Join("/home/u", ".local", "state", "mcpgw")},
		{"darwin", nil, home, filepath.Join("/home/u", ".local", "state", "mcpgw")},
		{"windows", nil, home, filepath.Join("/home/u", ".local", "state", "mcpgw")},
		{"windows", map[string]string{"LOCALAPPDATA": `C:\Users\u\AppData\Local`}, home, filepath.Join(`C:\Users\u\AppData\Local`, "mcpgw")},
		{"linux", map[string]string{"LOCALAPPDATA": "/ignored"}, home, filepath.Join("/home/u", ".local", "state", "mcpgw")},
		{"windows", map[string]string{"XDG_STATE_HOME": "/x", "LOCALAPPDATA": "/l"}, home, filepath.Join("/x", "mcpgw")},
		{"darwin", map[string]string{"XDG_STATE_HOME": "/x"}, home, filepath.Join("/x", "mcpgw")},
		{"linux", nil, noHome, filepath.Join("/tmp", "mcpgw-state")},
	}
	for _, c := range cases {
		env = c.env
		if got := defaultFor(c.goos, getenv, c.home, "/tmp"); got != c.want {
			t.Errorf("%s %v: default %q, want %q", c.goos, c.env, got, c.want)
		}
	}
}

func TestCheckSocketPath(t *testing.T) {
	at := func(n int) string { return "/" + strings.Repeat("s", n-1) }
	cases := []struct {
		goos string
		n    int
		ok   bool
	}{
		{"linux", 108, true}, {"linux", 109, false},
		{"windows", 108, true}, {"windows", 109, false},
		{"darwin", 103, true}, {"darwin", 104, false},
	}
	for _, c := range cases {
		err := checkSocketPath(c.goos, at(c.n))
		if (err == nil) != c.ok {
			t.Errorf("%s, %d bytes: err %v, want ok=%v", c.goos, c.n, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "state_dir") {
			t.Errorf("%s: error %q does not say what to change", c.goos, err)
		}
	}
	if checkSocketPath("linux", "") == nil {
		t.Error("empty path accepted")
	}
	// The default socket under a typical home fits everywhere.
	if err := checkSocketPath("darwin", Socket(filepath.Join("/Users/someone", ".local", "state", "mcpgw"))); err != nil {
		t.Error(err)
	}
}
