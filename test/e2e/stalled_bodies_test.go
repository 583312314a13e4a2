package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
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
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "bash", "-c", flood)
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
			t.Fatalf("nobody's connections: %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nobody did not open its connections within 30s")
	}

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
