package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// TestUISessionBoundToLocalUser: a UI session signed in over loopback is honoured only
// from the local user who signed in. Browsers send a host's cookies to every port of it
// (RFC 6265, 8.5), so the owner's signed-in mcpgw_ui cookie reaches any web server
// another local user runs on 127.0.0.1 under /ui/; before, that user replayed it and was
// the UI's admin (attack round, 2026-11-29).
func TestUISessionBoundToLocalUser(t *testing.T) {
	setpriv := otherUser(t)
	curl := peers.Command(t, "curl")
	g := startGateway(t, `
log: {level: info, format: text}
servers:
  everything: {type: stdio, command: {{everything_server}}}
`)
	tok, err := os.ReadFile(filepath.Join(g.StateDir, "local-token"))
	if err != nil {
		t.Fatal(err)
	}
	// A directory other users can reach (t.TempDir's parent is root's alone).
	jarDir, err := os.MkdirTemp("", "mcpgw-ui-cookie-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(jarDir) })
	if err := os.Chmod(jarDir, 0o777); err != nil {
		t.Fatal(err)
	}
	jar := filepath.Join(jarDir, "jar")
	as := func(uid string, script string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, setpriv, "--reuid="+uid, "--regid=65534", "--clear-groups", "bash", "-c", script)
		cmd.Dir = "/"
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("as uid %s: %q: %v\n%s", uid, script, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// nobody, who holds the local token, signs in as a browser would: the form, then its post.
	signIn := fmt.Sprintf(`set -e
%[1]s -s -c %[2]s -b %[2]s -m 5 %[3]s/ui/login -o %[4]s/form.html
csrf=$(grep -o 'name="csrf" value="[^"]*' %[4]s/form.html | sed 's/.*value="//')
%[1]s -s -c %[2]s -b %[2]s -m 5 --data-urlencode "token=%[5]s" --data-urlencode "csrf=$csrf" -o /dev/null -w '%%{http_code}' %[3]s/ui/login
chmod 644 %[2]s`, curl, jar, g.Base, jarDir, strings.TrimSpace(string(tok)))
	if got := as("65534", signIn); got != "303" {
		t.Fatalf("nobody's sign-in with the local token: HTTP %s, want 303", got)
	}
	page := fmt.Sprintf(`%s -s -b %s -m 5 -o /dev/null -w '%%{http_code}' %s/ui/servers`, curl, jar, g.Base)
	if got := as("65534", page); got != "200" {
		t.Fatalf("nobody's signed-in /ui/servers: HTTP %s, want 200", got)
	}
	if got := as("20001", page); got == "200" {
		t.Errorf("another local user replaying nobody's UI cookie: /ui/servers HTTP %s, want it not signed in", got)
	}
}
