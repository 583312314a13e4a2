package e2e

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReloadAppliesServersLive: servers added to and removed from the config file apply
// while the gateway runs. A held session (go-sdk client) hears tools/list_changed when a
// streamable HTTP server (the go-sdk everything-server) is added and calls its tool; when
// the server is removed again, that session loses it, a running task's session that had it
// keeps calling it, a new session of the same task does not see it, and the retired
// upstream is let go once the task's session ends.
func TestReloadAppliesServersLive(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	webURL := startEverythingHTTP(t)
	const base = `
log: {level: info, format: text}
servers:
  everything: {type: stdio, command: {{everything_server}}}
`
	webLine := "  web: {type: streamable_http, url: " + yamlQuote(webURL) + "}\n"
	g := startGateway(t, base)
	const webTool = "web__test_simple_text"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	held := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL, HTTPClient: httpClientWith(map[string]string{"X-Agent-ID": "a1"})})
	if names := held.toolNames(t); slices.Contains(names, webTool) || len(names) == 0 {
		t.Fatalf("before: %v", names)
	}

	// Add the server: the held session is told and can call it.
	cfg, err := os.ReadFile(g.Config)
	if err != nil {
		t.Fatal(err)
	}
	withWeb := strings.TrimRight(string(cfg), "\n") + "\n" + webLine
	writeFileAtomic(t, g.Config, []byte(withWeb))
	if !held.waitListChanged(1, 20*time.Second) {
		t.Fatalf("no tools/list_changed within 20 s of adding a server\ngateway log:\n%s", g.Tail(3000))
	}
	if names := held.toolNames(t); !slices.Contains(names, webTool) {
		t.Fatalf("after adding web the held session lists %v", names)
	}
	if res, err := held.CallTool(ctx, &mcp.CallToolParams{Name: webTool, Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("calling the added server's tool: %v %q", err, resultText(res))
	}

	// A task (admin API) that uses both servers, and a session of it.
	if a := rawRequest(t, http.MethodPost, g.Base+"/api/tasks", nil, `{"id":"t-web","enabled_mcp_servers":["everything","web"]}`); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/tasks: %s", a)
	}
	task := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "t-web"})
	if names := task.tools(t); !slices.Contains(names, webTool) {
		t.Fatalf("the task's session lists %v", names)
	}

	// Remove the server from the file.
	writeFileAtomic(t, g.Config, cfg)
	if !held.waitListChanged(2, 20*time.Second) {
		t.Fatalf("no tools/list_changed within 20 s of removing a server\ngateway log:\n%s", g.Tail(3000))
	}
	if names := held.toolNames(t); slices.Contains(names, webTool) {
		t.Errorf("after removing web the held session still lists it")
	}
	if res, err := held.CallTool(ctx, &mcp.CallToolParams{Name: webTool, Arguments: map[string]any{}}); err == nil && !res.IsError {
		t.Errorf("the held session called a removed server's tool: %q", resultText(res))
	}
	// The running task keeps it.
	if names := task.tools(t); !slices.Contains(names, webTool) {
		t.Errorf("the running task's session lost %s: %v", webTool, names)
	}
	if r := task.callTool(t, webTool, nil); r.Reply == nil || r.Reply.Error != nil {
		t.Errorf("the running task's call to the retired server: %s", r)
	}
	// A new session of the same task does not see it.
	fresh := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "t-web"})
	if names := fresh.tools(t); slices.Contains(names, webTool) || len(names) == 0 {
		t.Errorf("a new session of the task lists %v", names)
	}
	if rz, err := getReadyz(g); err != nil || rz.upstream("web") == nil {
		t.Errorf("/readyz while the task still uses the retired server: %+v %v", rz, err)
	}

	// When the task's session ends, the retired upstream goes.
	if a := rawRequest(t, http.MethodDelete, task.URL, task.headers(nil), ""); a.Status != http.StatusOK && a.Status != http.StatusNoContent {
		t.Fatalf("DELETE the task's session: %s", a)
	}
	if msg, ok := waitFor(10*time.Second, func() (bool, string) {
		rz, err := getReadyz(g)
		if err != nil {
			return false, err.Error()
		}
		return rz.upstream("web") == nil, "web still listed"
	}); !ok {
		t.Errorf("retired server not released after its last session ended: %s\ngateway log:\n%s", msg, g.Tail(3000))
	}
	if !strings.Contains(g.Log(), "retired server stopped") {
		t.Errorf("the gateway log does not say the retired server stopped")
	}
}
