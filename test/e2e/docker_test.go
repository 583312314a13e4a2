package e2e

// The container's config, served: examples/docker.yaml itself (not a copy) run by
// bin/mcpgw the way the image runs it, with the environment the README's `docker run`
// sets (MCPGW_API_KEY_SHA256). Three things differ from the container, because no Docker
// engine runs here, and each is an override the gateway or the config already offers:
//   - `serve --listen 127.0.0.1:PORT` replaces the file's 0.0.0.0:8080 (tests listen on
//     loopback only), so this run does not pass through the non-loopback check; the
//     config's own listener is checked by cmd/mcpgw/docker_test.go;
//   - MCPGW_STATE_DIR points at a temp dir instead of the image's /var/lib/mcpgw;
//   - PATH starts with $MCPGW_PEERS/bin, where `make peers` builds the everything-server
//     that the image copies to /usr/local/bin (the config names it by its bare name).
// cmd/mcpgw/docker_test.go checks the Dockerfile and the documented docker lines.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
)

func TestDockerExampleConfigServes(t *testing.T) {
	bin := needGatewayBin(t)
	peers := needPeers(t)
	if _, err := os.Stat(filepath.Join(peers, "bin", "everything-server")); err != nil {
		t.Fatalf("the everything-server peer is missing (make peers builds it): %v", err)
	}
	cfgPath, err := filepath.Abs(filepath.Join(e2eDir(t), "..", "..", "examples", "docker.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	key, keyHash := auth.NewAPIKey()
	stateDir := t.TempDir()
	env := []string{
		"MCPGW_API_KEY_SHA256=" + keyHash,
		"MCPGW_STATE_DIR=" + stateDir,
		"PATH=" + filepath.Join(peers, "bin") + string(os.PathListSeparator) + os.Getenv("PATH"),
	}

	var g *Proc
	var base string
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		g = startProcess(t, "mcpgw-docker-yaml", bin, []string{"serve", "--config", cfgPath, "--listen", addr}, env)
		base = "http://" + addr
		if lastErr = waitHTTP(g, base+"/healthz", http.StatusOK, readyTimeout); lastErr == nil {
			lastErr = waitStarted(g, base, readyTimeout)
			break
		}
		if !addrInUse(g) {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("mcpgw with %s did not become healthy: %v", cfgPath, lastErr)
	}
	url := base + "/mcp"

	// No key, a wrong key: 401 with a challenge, and no session.
	for name, hdr := range map[string]map[string]string{
		"no key":                     nil,
		"wrong key":                  bearer("mcpgw_not-the-key"),
		"agent header without a key": {"X-Agent-ID": "default"},
	} {
		a := rawInitialize(t, url, hdr)
		if a.Status != http.StatusUnauthorized || !strings.HasPrefix(a.Header.Get("WWW-Authenticate"), "Bearer") || a.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("initialize with %s: %s; want 401 with a Bearer challenge and no session", name, a)
		}
	}

	// The key: initialize, the everything-server's tools, a call.
	s := openRawSession(t, url, bearer(key))
	tools := s.tools(t)
	if !slices.Contains(tools, "everything__test_simple_text") {
		t.Fatalf("tools/list with the key: %d tools, no everything__test_simple_text: %v", len(tools), tools)
	}
	a := s.callTool(t, "everything__test_simple_text", nil)
	if a.Status != http.StatusOK || a.Reply == nil || a.Reply.Error != nil {
		t.Fatalf("tools/call everything__test_simple_text: %s", a)
	}
	if text, isErr := toolResultText(a.Reply.Result); isErr || text != "This is a simple text response for testing." {
		t.Errorf("everything__test_simple_text answered %q (isError %v)", text, isErr)
	}

	// The state went where MCPGW_STATE_DIR said (in the image: the volume).
	if _, err := os.Stat(filepath.Join(stateDir, "mcpgw.db")); err != nil {
		t.Errorf("session store not in MCPGW_STATE_DIR: %v", err)
	}
	// The audit log has the call, written by a background writer: wait, bounded.
	auditPath := filepath.Join(stateDir, "audit.jsonl")
	if why, ok := waitFor(10*time.Second, func() (bool, string) {
		n := countAudit(readAudit(t, auditPath), func(l auditLine) bool {
			return l.Kind == "call" && l.Tool == "everything__test_simple_text" && l.Agent == "default"
		})
		return n == 1, fmt.Sprintf("%d matching lines", n)
	}); !ok {
		t.Errorf("audit log %s: %s; want the call by agent default", auditPath, why)
	}
}
