package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// everythingServer is the go-sdk conformance fixture built by scripts/peers.sh: the
// server whose tool, prompt and resource names the conformance suite calls.
func everythingServer(t testing.TB) string {
	t.Helper()
	p := filepath.Join(needPeers(t), "bin", "everything-server")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("everything-server missing (run scripts/peers.sh): %v", err)
	}
	return p
}

// startEverythingHTTP runs the go-sdk everything-server as a stateful streamable HTTP
// server on 127.0.0.1 and returns its URL (it serves any path; /mcp by convention).
func startEverythingHTTP(t testing.TB) string {
	t.Helper()
	url, _ := startEverythingHTTPProc(t)
	return url
}

// startEverythingHTTPProc is startEverythingHTTP that also returns the process.
func startEverythingHTTPProc(t testing.TB) (string, *Proc) {
	t.Helper()
	bin := everythingServer(t)
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		p := startProcess(t, "everything-server", bin, []string{"-http", addr, "-stateless=false"}, nil)
		if lastErr = waitPort(p, addr, readyTimeout); lastErr == nil {
			return "http://" + addr + "/mcp", p
		}
		if !addrInUse(p) {
			break
		}
	}
	t.Fatalf("everything-server: %v", lastErr)
	return "", nil
}

// startServerEverythingNode runs the npm reference server
// @modelcontextprotocol/server-everything with Node 22 in mode "sse" (returns
// http://127.0.0.1:PORT/sse) or "streamableHttp" (returns http://127.0.0.1:PORT/mcp).
// It binds all interfaces; tests only ever connect to 127.0.0.1.
func startServerEverythingNode(t testing.TB, mode string) string {
	t.Helper()
	var path string
	switch mode {
	case "sse":
		path = "/sse"
	case "streamableHttp":
		path = "/mcp"
	default:
		t.Fatalf("startServerEverythingNode: mode %q (want sse or streamableHttp)", mode)
	}
	script := filepath.Join(e2eDir(t), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("server-everything missing (run scripts/peers.sh): %v", err)
	}
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		port := freePort(t)
		env := append(nodeEnv(t), "PORT="+strconv.Itoa(port))
		p := startProcessIn(t, e2eDir(t), "server-everything-"+mode, node(t), []string{script, mode}, env)
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		if lastErr = waitPort(p, addr, readyTimeout); lastErr == nil {
			return "http://" + addr + path
		}
		if !addrInUse(p) {
			break
		}
	}
	t.Fatalf("server-everything %s: %v", mode, lastErr)
	return ""
}

// serverEverythingStdio is the command line of the npm server-everything over stdio,
// for a gateway config's stdio upstream: node (Node 22) and its arguments.
func serverEverythingStdio(t testing.TB) (cmd string, args []string) {
	t.Helper()
	return node(t), []string{filepath.Join(e2eDir(t), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")}
}
