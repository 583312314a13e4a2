package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// The host's other users are trusted for nothing (docs/security.md#local-trust). These
// tests play another local user, `nobody`, with setpriv against a gateway in the default
// auth mode (none, no admin_token), with curl as that user's client, while the owner's
// own clients (the Inspector over HTTP, the bridge, mcpgw top, mcpgw ui) keep working.

// asNobody runs curl ARGS as uid/gid 65534 and returns its stdout (curl -w output).
func asNobody(t *testing.T, timeout time.Duration, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, otherUser(t), "--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c", script)
	cmd.Dir = "/"
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("as nobody: %q timed out after %s", script, timeout)
	}
	if err != nil {
		t.Fatalf("as nobody: %q: %v\n%s", script, err, out)
	}
	return strings.TrimSpace(string(out))
}

// otherUser is setpriv, when this test may play another user (root); else it skips, or
// under make (MCPGW_REQUIRE_PEERS=1) fails, saying why.
func otherUser(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		peers.Missing(t, "root, to play another local user with setpriv", "run the e2e suite as root (CI does)")
	}
	return peers.Command(t, "setpriv")
}

// TestLocalUserGetsNothing: in the default config another local user gets none of the
// admin API, the UI or the tools, cannot make the gateway run a command, learns nothing
// from /readyz, and cannot guess credentials quickly; the owner's clients are unchanged.
func TestLocalUserGetsNothing(t *testing.T) {
	otherUser(t)
	peers.Command(t, "curl")
	cmd, args := serverEverythingStdio(t)
	sd := shortStateDir(t)
	g, sock := startBridgeGateway(t, sd, fmt.Sprintf(`
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: %s
    args: [%q]
`, cmd, args[0]))
	pwned := filepath.Join(t.TempDir(), "pwned")
	_ = os.Chmod(filepath.Dir(pwned), 0o777)
	curl := "curl -s -o /dev/null -w '%{http_code}' --max-time 10 "
	post := func(path, body string) string {
		return curl + "-X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data '" + body + "' " + g.Base + path
	}
	stdio := `{"name":"evil","type":"stdio","command":"touch","args":["` + pwned + `"]}`
	for _, c := range []struct{ what, script, want string }{
		{"create a stdio server", post("/api/servers", stdio), "401"},
		{"test a stdio server", post("/api/servers/test", stdio), "401"},
		{"read the servers", curl + g.Base + "/api/servers", "401"},
		{"initialize", post("/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`), "401"},
		{"initialize as another agent", post("/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`) + " -H 'X-Agent-ID: default'", "401"},
		{"open the legacy SSE stream", curl + "--max-time 3 " + g.Base + "/sse", "401"},
		{"open the UI", curl + g.Base + "/ui/servers", "303"},
		{"a forged forwarded request", curl + "-H 'X-Forwarded-For: 127.0.0.1' " + g.Base + "/api/servers", "401"},
	} {
		if got := asNobody(t, 20*time.Second, c.script); got != c.want {
			t.Errorf("nobody: %s: HTTP %s, want %s", c.what, got, c.want)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a command nobody sent ran as the gateway's user")
	}
	if got := asNobody(t, 20*time.Second, "curl -s --max-time 10 "+g.Base+"/readyz"); got != `{"ready":true}` {
		t.Errorf("nobody's /readyz: %s, want only ready", got)
	}
	if got := asNobody(t, 20*time.Second, "curl -s --max-time 10 "+g.Base+"/ui/servers -L"); strings.Contains(got, "everything") {
		t.Errorf("nobody's UI shows the servers: %.300s", got)
	}

	// The signed-in address mcpgw ui prints works wherever the owner opens it, even in a
	// browser the gateway cannot tell is the owner's (here: nobody's, handed the address).
	uiURL, stderr, code := runMcpgw(t, 30*time.Second, "ui", "--config", g.Config)
	uiURL = strings.TrimSpace(uiURL)
	if code != 0 || !strings.HasPrefix(uiURL, g.Base+"/ui/login?token=") {
		t.Fatalf("mcpgw ui: exit %d %q %s", code, uiURL, stderr)
	}
	// The address serves a sign-in form holding the token, which a browser posts at once
	// (a GET alone never signs in): curl does what the page's script does, posting the
	// form with its CSRF token from the same cookie jar.
	u, err := url.Parse(uiURL)
	if err != nil {
		t.Fatal(err)
	}
	openUI := "jar=/tmp/nobody-jar-$$; page=$(curl -s --max-time 10 -c $jar -b $jar '" + uiURL + "'); " +
		`csrf=$(printf '%s' "$page" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -1); ` +
		"curl -s -L --max-time 10 -c $jar -b $jar --data-urlencode \"csrf=$csrf\" --data-urlencode 'token=" + u.Query().Get("token") +
		"' --data-urlencode next=/ui/servers '" + g.Base + "/ui/login'; rm -f $jar"
	if page := asNobody(t, 20*time.Second, openUI); !strings.Contains(page, "everything") {
		t.Errorf("the signed-in UI address did not open the Servers page: %.300s", page)
	}

	// 300 guesses in 15 s: after a few, the rest are not even checked (429).
	start := time.Now()
	out := asNobody(t, 60*time.Second, `for i in $(seq 300); do `+curl+`-H "Authorization: Bearer guess$i" `+g.Base+`/api/servers; echo; done`)
	counts := map[string]int{}
	for _, code := range strings.Fields(out) {
		counts[code]++
	}
	t.Logf("300 guesses as nobody in %s: %v", time.Since(start).Round(time.Millisecond), counts)
	if counts["401"] > 12 || counts["429"] < 280 {
		t.Errorf("300 guesses: %v, want at most 12 checked (401) and the rest slowed (429)", counts)
	}

	// While nobody's guesses are being slowed, even the right token is not checked. One
	// more wrong guess first, in the same shell: the last window may have ended as the
	// loop did (on an idle machine 300 guesses take 7 s), and a guess then is checked and
	// opens a longer one, so the sign-in right after it falls inside a window either way.
	if page := asNobody(t, 20*time.Second, curl+`-H "Authorization: Bearer guess-last" `+g.Base+"/api/servers; "+openUI); !strings.Contains(page, "Too many wrong credentials") {
		t.Errorf("the signed-in address during nobody's back-off: %.500s, want the back-off refusal", page)
	}

	// The owner's clients, unchanged and not slowed by nobody's guesses (a source is the
	// address and, on loopback, the user): the Inspector over HTTP, the bridge over the
	// socket, mcpgw top.
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	res := runInspector(t, 90*time.Second, &list, g.URL, "--transport", "http", "--method", "tools/list")
	if res.ExitCode != 0 || len(list.Tools) == 0 {
		t.Errorf("the owner's Inspector over HTTP: exit %d, %d tools\n%s\n%s", res.ExitCode, len(list.Tools), res.Stdout, res.Stderr)
	}
	res = runInspector(t, 90*time.Second, &list, bridgeBin(t), "--socket", sock, "--method", "tools/list")
	if res.ExitCode != 0 || len(list.Tools) == 0 {
		t.Errorf("the owner's bridge: exit %d, %d tools\n%s\n%s", res.ExitCode, len(list.Tools), res.Stdout, res.Stderr)
	}
	if stdout, stderr, code := runMcpgw(t, 30*time.Second, "top", "--config", g.Config); code != 0 || !strings.Contains(stdout, "calls") {
		t.Errorf("mcpgw top as the owner: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
