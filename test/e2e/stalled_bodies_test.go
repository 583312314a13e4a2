package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// Another local user (nobody) holds connections open without a credential: a POST that
// declares a body and sends one byte, and connections whose headers never end. The
// gateway answers the first's 401 at once, and nobody holds no more than its share of
// http.max_connections, so the owner's /readyz and /api/servers answer at once
// (docs/security.md, "Connections and bodies").

// stalledPostScript is a bash script that sends a POST to addr declaring a 100000-byte
// body, sends one byte of it, and prints the status line of the answer (or nothing, if
// none comes within wait seconds).
func stalledPostScript(addr string, wait int) string {
	host, port, _ := strings.Cut(addr, ":")
	return fmt.Sprintf(`exec 3<>/dev/tcp/%s/%s || exit 1
printf 'POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{' >&3
timeout %d head -n 1 <&3 | tr -d '\r'`, host, port, addr, wait)
}

// TestStalledConnectionsDoNotLockOutTheOwner: as nobody, a credential-less POST with a
// stalled body gets its 401 at once; then nobody opens 60 connections that never finish
// their headers against max_connections 40, and the owner's requests still answer at
// once. Before, the 401 never came (net/http read the body's rest first, without a
// deadline), and 40 idle connections blocked Accept: the owner waited for minutes.
func TestStalledConnectionsDoNotLockOutTheOwner(t *testing.T) {
	setpriv := otherUser(t)
	g := startGateway(t, `
log: {level: info, format: text}
http: {max_connections: 40}
servers:
  everything: {type: stdio, command: {{everything_server}}}
`)
	start := time.Now()
	status := asNobody(t, 20*time.Second, stalledPostScript(g.Addr, 10))
	took := time.Since(start)
	if !strings.HasPrefix(status, "HTTP/1.1 401") || took > 5*time.Second {
		t.Errorf("nobody's credential-less POST with a stalled body: %q after %s, want a 401 at once", status, took.Round(time.Millisecond))
	}

	// nobody opens 60 connections whose headers never end, says so, and holds them.
	host, port, _ := strings.Cut(g.Addr, ":")
	flood := fmt.Sprintf(`trap '' PIPE
exec 2>/dev/null
for i in $(seq 60); do
  exec {fd}<>/dev/tcp/%s/%s || continue
  printf 'POST /mcp HTTP/1.1\r\nHost: %s\r\n' >&$fd
done
echo ready
exec sleep 120`, host, port, g.Addr)
	startFlood(t, setpriv, "65534", flood)

	// The owner, on new connections each time.
	owner := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, path := range []string{"/readyz", "/api/servers", "/readyz", "/api/servers"} {
		start := time.Now()
		resp, err := owner.Get(g.Base + path)
		took := time.Since(start)
		if err != nil {
			t.Errorf("the owner's %s while nobody holds 60 connections: %v (after %s)", path, err, took.Round(time.Millisecond))
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || took > 3*time.Second {
			t.Errorf("the owner's %s while nobody holds 60 connections: HTTP %d after %s, want 200 at once", path, resp.StatusCode, took.Round(time.Millisecond))
		}
	}
}

// TestStalledSourcesDoNotLockOutAuthenticatedCallers: four local users (uids other than
// the gateway's) each hold ten connections whose headers never end against
// max_connections 40; a fifth user with an admin credential must still be answered.
// Before, the four held 35 places between them, all that connections not yet
// authenticated may hold, and every new connection was answered 503 before its
// credential could be read: the reserve served only connections already admitted
// (attack round, 2026-11-29).
func TestStalledSourcesDoNotLockOutAuthenticatedCallers(t *testing.T) {
	setpriv := otherUser(t)
	curl := peers.Command(t, "curl")
	g := startGateway(t, `
log: {level: info, format: text}
http: {max_connections: 40}
auth: {admin_token: attack-round-admin-token}
servers:
  everything: {type: stdio, command: {{everything_server}}}
`)
	host, port, _ := strings.Cut(g.Addr, ":")
	flood := fmt.Sprintf(`trap '' PIPE
exec 2>/dev/null
for i in $(seq 10); do
  exec {fd}<>/dev/tcp/%s/%s || continue
  printf 'POST /mcp HTTP/1.1\r\nHost: %s\r\n' >&$fd
done
echo ready
exec sleep 120`, host, port, g.Addr)
	for _, uid := range []string{"20001", "20002", "20003", "20004"} {
		startFlood(t, setpriv, uid, flood)
	}
	// The fifth user, with the admin token, three times on new connections. The four
	// users' connections stay open for as long as the header timeout (10 s).
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, setpriv, "--reuid=20005", "--regid=65534", "--clear-groups",
			curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "5", "-H", "Authorization: Bearer attack-round-admin-token", g.Base+"/api/servers")
		cmd.Dir = "/"
		out, _ := cmd.Output()
		cancel()
		if got := strings.TrimSpace(string(out)); got != "200" {
			t.Errorf("try %d: the fifth user's /api/servers with the admin token while four users hold 40 stalled connections: HTTP %q, want 200", i, got)
		}
	}
}

// startFlood runs the bash script flood as local user uid (group nobody) and waits, at
// most 30 s, until it says "ready": its connections are open. The script is stopped by
// its pid when the test ends.
func startFlood(t *testing.T, setpriv, uid, flood string) {
	t.Helper()
	cmd := exec.Command(setpriv, "--reuid="+uid, "--regid=65534", "--clear-groups", "bash", "-c", flood)
	cmd.Dir = "/"
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		if strings.TrimSpace(line) != "ready" {
			t.Fatalf("uid %s's connections: %q", uid, line)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("uid %s did not open its connections within 30s", uid)
	}
}
