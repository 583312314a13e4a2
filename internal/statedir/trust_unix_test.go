//go:build !windows

package statedir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrepare: a missing state dir is made 0700; a dir or an entry that is not the
// gateway user's alone is refused with an error naming it and what to do.
func TestPrepare(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(t *testing.T, sd string) // sd does not exist yet
		want    []string                      // in the error; none: accepted
	}{
		{"missing", func(*testing.T, string) {}, nil},
		{"private", func(t *testing.T, sd string) { mkdir(t, sd, 0o700); write(t, filepath.Join(sd, "local-token"), 0o600) }, nil},
		{"readable by others, written by none", func(t *testing.T, sd string) { mkdir(t, sd, 0o755); write(t, filepath.Join(sd, "mcpgw.db"), 0o644) }, nil},
		{"dir writable by others", func(t *testing.T, sd string) { mkdir(t, sd, 0o777) }, []string{"mode 0777", "chmod 700"}},
		{"dir writable by the group", func(t *testing.T, sd string) { mkdir(t, sd, 0o770) }, []string{"mode 0770"}},
		{"a file others may write", func(t *testing.T, sd string) {
			mkdir(t, sd, 0o700)
			write(t, filepath.Join(sd, "api_keys.jsonl"), 0o666)
		}, []string{"api_keys.jsonl", "mode 0666"}},
		{"a link", func(t *testing.T, sd string) {
			mkdir(t, sd, 0o700)
			if err := os.Symlink("/etc/passwd", filepath.Join(sd, "audit.jsonl")); err != nil {
				t.Fatal(err)
			}
		}, []string{"audit.jsonl", "symbolic link", "/etc/passwd"}},
		{"a not a directory", func(t *testing.T, sd string) { write(t, sd, 0o600) }, []string{"not a directory"}},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name    string
			prepare func(t *testing.T, sd string)
			want    []string
		}{"another user's token", func(t *testing.T, sd string) {
			mkdir(t, sd, 0o700)
			tok := filepath.Join(sd, "local-token")
			write(t, tok, 0o600)
			if err := os.Chown(tok, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, []string{"local-token", "owned by uid 65534"}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sd := filepath.Join(t.TempDir(), "state")
			c.prepare(t, sd)
			err := Prepare(sd)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range append([]string{sd}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
		})
	}
	// A state dir made here is the user's alone, whatever the umask lets through.
	sd := filepath.Join(t.TempDir(), "new")
	if err := Prepare(sd); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(sd); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("a new state dir: %v %v, want mode 0700", fi.Mode().Perm(), err)
	}
	// EnsureToken refuses the same, and does not read or trust such a token.
	bad := filepath.Join(t.TempDir(), "bad")
	mkdir(t, bad, 0o777)
	if tok, err := EnsureToken(bad); err == nil {
		t.Errorf("EnsureToken on a 0777 dir: %q", tok)
	}
}

// TestReadTokenFollowsNoLink: a local-token that is a link is not read.
func TestReadTokenFollowsNoLink(t *testing.T) {
	sd := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte(strings.Repeat("a", 64)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, TokenPath(sd)); err != nil {
		t.Fatal(err)
	}
	if tok, err := ReadToken(sd); err == nil {
		t.Errorf("read %q through a link", tok)
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func write(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Repeat("a", 64)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
