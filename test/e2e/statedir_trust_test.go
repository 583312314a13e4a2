package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A state directory someone else can write is not the gateway's: its local token is an
// admin credential, and the audit log, the session store and the socket are opened there.
// Once, `nobody` prepared a 0777 directory with a local-token of known content and an
// audit.jsonl linked to a root-owned file; root started the gateway on it, nobody's token
// was then the admin credential (GET /api/servers 200, a stdio server added with it ran as
// root), and audit lines were appended through the link. Now the start is refused, naming
// the path, its owner and mode, and what to do.

// TestStateDirOthersCanWriteIsRefused starts bin/mcpgw as root on state directories
// prepared as nobody would, and on one with a planted link, and wants each start refused.
func TestStateDirOthersCanWriteIsRefused(t *testing.T) {
	otherUser(t)
	bin := needGatewayBin(t)
	const knownToken = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	victim := filepath.Join(t.TempDir(), "root-owned.log") // a file only root may write
	if err := os.WriteFile(victim, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name string
		// prepare makes the state dir sd (it does not exist yet).
		prepare func(t *testing.T, sd string)
		// want are strings the refusal names.
		want []string
	}{
		{"nobody's 0777 dir with a token and a linked audit log", func(t *testing.T, sd string) {
			asNobody(t, 20*time.Second, fmt.Sprintf("mkdir -m 0777 %[1]s && chmod 0777 %[1]s && echo %[2]s > %[1]s/local-token && chmod 0600 %[1]s/local-token && ln -s %[3]s %[1]s/audit.jsonl",
				sd, knownToken, victim))
		}, []string{"state dir", "owned by uid 65534", "mode 0777"}},
		{"root's dir made 0777", func(t *testing.T, sd string) {
			if err := os.Mkdir(sd, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(sd, 0o777); err != nil {
				t.Fatal(err)
			}
		}, []string{"owned by uid 0", "mode 0777", "chmod 700"}},
		{"a token owned by nobody in root's dir", func(t *testing.T, sd string) {
			if err := os.Mkdir(sd, 0o700); err != nil {
				t.Fatal(err)
			}
			tok := filepath.Join(sd, "local-token")
			if err := os.WriteFile(tok, []byte(knownToken+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(tok, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, []string{"local-token", "owned by uid 65534"}},
		{"a linked audit log in root's dir", func(t *testing.T, sd string) {
			if err := os.Mkdir(sd, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(sd, "audit.jsonl")); err != nil {
				t.Fatal(err)
			}
		}, []string{"audit.jsonl", "symbolic link", victim}},
		// nobody's link may be pointed again, at any directory of root's, between starts
		// (attack round, 2026-11-29): the gateway wrote its files where it pointed.
		{"the state dir a link of nobody's to a dir of root's", func(t *testing.T, sd string) {
			target := t.TempDir() // root's, 0700
			asNobody(t, 20*time.Second, fmt.Sprintf("ln -s %s %s", target, sd))
		}, []string{"state dir", "symbolic link", "uid 65534"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// In the system temp dir, which nobody reaches (t.TempDir's parent is private).
			parent, err := os.MkdirTemp("", "sdtrust")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(parent) })
			if err := os.Chmod(parent, 0o777); err != nil { // nobody may make sd in it
				t.Fatal(err)
			}
			sd := filepath.Join(parent, "state")
			c.prepare(t, sd)
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			cfg := filepath.Join(t.TempDir(), "mcpgw.yaml")
			if err := os.WriteFile(cfg, []byte(fmt.Sprintf("listen: %s\nstate_dir: %s\nstore: bolt\n", addr, yamlQuote(sd))), 0o600); err != nil {
				t.Fatal(err)
			}
			res := runTool(t, 15*time.Second, nil, bin, "serve", "--config", cfg)
			if res.TimedOut {
				t.Fatalf("mcpgw serve started on the state dir (still running after 15 s)\nstderr:\n%s", tail(res.Stderr, 3000))
			}
			if res.ExitCode == 0 {
				t.Fatalf("mcpgw serve exited 0\nstderr:\n%s", tail(res.Stderr, 3000))
			}
			for _, w := range append([]string{sd}, c.want...) {
				if !strings.Contains(res.Stderr, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, tail(res.Stderr, 3000))
				}
			}
			if b, _ := os.ReadFile(victim); string(b) != "root's\n" {
				t.Errorf("the root-owned file was written through the link: %q", b)
			}
		})
	}
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
