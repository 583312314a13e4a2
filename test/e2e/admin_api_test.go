package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// liveEvent is one line of js/live-client.mjs.
type liveEvent struct {
	Event string   `json:"event"`
	Tools []string `json:"tools"`
	OK    bool     `json:"ok"`
	Text  string   `json:"text"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// waitLiveEvent reads the client's log until it has printed event (or ended), polling
// the file every 10 ms, bounded by timeout.
func waitLiveEvent(t *testing.T, p *Proc, event string, timeout time.Duration) (liveEvent, time.Time) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		f, err := os.Open(p.LogPath)
		if err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var ev liveEvent
				if json.Unmarshal(sc.Bytes(), &ev) != nil {
					continue
				}
				if ev.Event == event {
					f.Close()
					return ev, time.Now()
				}
				if ev.Event == "timeout" || ev.Event == "error" {
					f.Close()
					t.Fatalf("live client: %s while waiting for %s\n%s", sc.Text(), event, p.Tail(3000))
				}
			}
			f.Close()
		}
		if time.Now().After(deadline) || p.Exited() {
			t.Fatalf("live client: no %q event within %s (exited %v)\n%s", event, timeout, p.Exited(), p.Tail(3000))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAdminAPIServersLive: servers created through POST /api/servers apply live. A TypeScript
// SDK client holding a session hears tools/list_changed and calls the new server's tool
// within 1 s of the POST; deleting the server leaves a running task's session able to call
// it while a new task's session does not see it; a server created through the API is still
// there after the gateway restarts on the same state dir.
func TestAdminAPIServersLive(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	nodeBinary := node(t)
	webURL := startEverythingHTTP(t)
	g := startGateway(t, `
log: {level: info, format: text}
servers:
  everything: {type: stdio, command: {{everything_server}}}
`)
	const webTool = "web__test_simple_text"

	client := startProcessIn(t, e2eDir(t), "live-client", nodeBinary,
		[]string{"js/live-client.mjs", "--url", g.URL, "--header", "X-Agent-ID: a1", "--call", webTool, "--timeout", "60000"}, nil)
	ready, _ := waitLiveEvent(t, client, "ready", 30*time.Second)
	if slices.Contains(ready.Tools, webTool) || len(ready.Tools) == 0 {
		t.Fatalf("before the POST the client lists %v", ready.Tools)
	}

	posted := time.Now()
	body := `{"name":"web","type":"streamable_http","url":"` + webURL + `","meta":{"title":"everything over HTTP"}}`
	if a := rawRequest(t, http.MethodPost, g.Base+"/api/servers", nil, body); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/servers: %s", a)
	}
	called, at := waitLiveEvent(t, client, "called", 20*time.Second)
	took := at.Sub(posted)
	t.Logf("POST to the client's tool result: %s", took.Round(time.Millisecond))
	if !called.OK || called.Text == "" || !slices.Contains(called.Tools, webTool) {
		t.Fatalf("the client's call of %s after list_changed: %+v", webTool, called)
	}
	if took > time.Second {
		t.Errorf("list_changed and the call took %s after the POST, want within 1 s", took)
	}

	// A task that uses the server, and a session of it.
	if a := rawRequest(t, http.MethodPost, g.Base+"/api/tasks", nil, `{"id":"t-web","enabledMcpServers":["everything","web"]}`); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/tasks: %s", a)
	}
	task := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "t-web"})
	if names := task.tools(t); !slices.Contains(names, webTool) {
		t.Fatalf("the task's session lists %v", names)
	}

	// Delete the server: the running task keeps it, a new task's session does not see it.
	if a := rawRequest(t, http.MethodDelete, g.Base+"/api/servers/web", nil, ""); a.Status != http.StatusNoContent {
		t.Fatalf("DELETE /api/servers/web: %s", a)
	}
	if a := rawRequest(t, http.MethodGet, g.Base+"/api/servers/web", nil, ""); a.Status != http.StatusNotFound {
		t.Errorf("GET after DELETE: %s", a)
	}
	if r := task.callTool(t, webTool, nil); r.Reply == nil || r.Reply.Error != nil {
		t.Errorf("the running task's call to the deleted server: %s", r)
	} else if text, isErr := toolResultText(r.Reply.Result); isErr || text == "" {
		t.Errorf("the running task's call to the deleted server: %q (isError %v)", text, isErr)
	}
	if a := rawRequest(t, http.MethodPost, g.Base+"/api/tasks", nil, `{"id":"t-late","enabled_mcp_servers":["web"]}`); a.Status != http.StatusBadRequest {
		t.Errorf("a new task naming the deleted server: %s, want 400", a)
	}
	if a := rawRequest(t, http.MethodPost, g.Base+"/api/tasks", nil, `{"id":"t-new"}`); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/tasks t-new: %s", a)
	}
	fresh := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Task-ID": "t-new"})
	if names := fresh.tools(t); slices.Contains(names, webTool) || len(names) == 0 {
		t.Errorf("a new task's session lists %v", names)
	}

	// A server created through the API survives a restart on the same state dir.
	body = `{"name":"keep","type":"streamable_http","url":"` + webURL + `"}`
	if a := rawRequest(t, http.MethodPost, g.Base+"/api/servers", nil, body); a.Status != http.StatusCreated {
		t.Fatalf("POST /api/servers keep: %s", a)
	}
	g.Stop()
	g2 := sessRestartGateway(t, g, "mcpgw-restarted")
	a := rawRequest(t, http.MethodGet, g2.Base+"/api/servers/keep", nil, "")
	if a.Status != http.StatusOK || !strings.Contains(string(a.Body), `"source": "api"`) {
		t.Fatalf("after the restart GET /api/servers/keep: %s\n%s", a, g2.Tail(3000))
	}
	after := openRawSession(t, g2.URL, map[string]string{"X-Agent-ID": "a1"})
	if names := after.tools(t); !slices.Contains(names, "keep__test_simple_text") {
		t.Errorf("after the restart a session lists %v", names)
	}
}
