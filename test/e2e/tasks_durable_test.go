package e2e

// Tasks of the Tasks extension (2026-07-28) outlive the gateway process (docs/tasks.md):
// a task created through one gateway is polled to completion through the same gateway
// restarted on its bbolt state dir, and through another replica on the same Redis, where
// it is also cancelled; another agent never sees it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const taskMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// taskAnswer is one JSON-RPC answer of the stateless revision.
type taskAnswer struct {
	Status int
	Result map[string]json.RawMessage
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
}

// taskPost sends one 2026-07-28 request declaring the Tasks extension, as agent.
func taskPost(t *testing.T, url, agent, method, name string, params map[string]any) taskAnswer {
	t.Helper()
	params["_meta"] = json.RawMessage(taskMeta)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	req.Header.Set("X-Agent-ID", agent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				b = []byte(d)
			}
		}
	}
	a := taskAnswer{Status: resp.StatusCode}
	if err := json.Unmarshal(b, &a); err != nil || (a.Result == nil && a.Error == nil) {
		t.Fatalf("%s: HTTP %d %s (%v)", method, resp.StatusCode, b, err)
	}
	return a
}

// taskCreate starts slow_compute as a task through url and returns the gateway's task id.
func taskCreate(t *testing.T, url, agent string, seconds float64) string {
	t.Helper()
	a := taskPost(t, url, agent, "tools/call", "slow_compute", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": seconds}})
	var id, rt string
	if a.Result != nil {
		_ = json.Unmarshal(a.Result["taskId"], &id)
		_ = json.Unmarshal(a.Result["resultType"], &rt)
	}
	if rt != "task" || !strings.HasPrefix(id, "mcpgw-task-") {
		t.Fatalf("slow_compute as a task: %+v (want resultType task and a gateway id)", a)
	}
	return id
}

// taskStatus is tasks/get's status of id through url as agent ("" and the error when refused).
func taskStatus(t *testing.T, url, agent, id string) (string, taskAnswer) {
	t.Helper()
	a := taskPost(t, url, agent, "tasks/get", id, map[string]any{"taskId": id})
	var st string
	if a.Result != nil {
		_ = json.Unmarshal(a.Result["status"], &st)
	}
	return st, a
}

// taskAwait polls id through url until its status is want (bounded in count and time).
func taskAwait(t *testing.T, url, agent, id, want string) taskAnswer {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last taskAnswer
	for i := 0; i < 200 && time.Now().Before(deadline); i++ {
		st, a := taskStatus(t, url, agent, id)
		if st == want {
			return a
		}
		if a.Error != nil || (st != "working" && st != "input_required") {
			t.Fatalf("tasks/get %s: %+v (want %s)", id, a, want)
		}
		last = a
		time.Sleep(backoff(i))
	}
	t.Fatalf("task %s not %s in time: last %+v", id, want, last)
	return last
}

// taskUnknownFor: another agent gets what an unknown id gets.
func taskUnknownFor(t *testing.T, url, agent, id string) {
	t.Helper()
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if a := taskPost(t, url, agent, m, id, map[string]any{"taskId": id}); a.Error == nil || a.Error.Code != -32602 {
			t.Errorf("%s of another agent's task %s: %+v, want -32602", m, id, a)
		}
	}
}

const durableTasksConfig = `%s
log: {level: debug, format: text}
naming: {prefix: never}
servers:
  tasks: {type: streamable_http, url: %s}
agents:
  a1: {servers: [tasks]}
  a2: {servers: [tasks]}
`

func TestMCPTasksSurviveRestartOnBolt(t *testing.T) {
	needGatewayBin(t)
	url := startTaskPeer(t)
	g := startGatewayChecked(t, fmt.Sprintf(durableTasksConfig, "store: bolt", yamlQuote(url)))
	id := taskCreate(t, g.URL, "a1", 2)
	g.Proc.Stop()
	g2 := sessRestartGateway(t, g, "mcpgw-2")
	a := taskAwait(t, g2.URL, "a1", id, "completed")
	if !bytes.Contains(a.Result["result"], []byte("content")) {
		t.Errorf("the completed task's inline result: %s", a.Result["result"])
	}
	taskUnknownFor(t, g2.URL, "a2", id)
}

func TestMCPTasksAcrossReplicasOnRedis(t *testing.T) {
	needGatewayBin(t)
	sessNeedRedis(t)
	redis := sessStartRedis(t, "redis", 0, "")
	url := startTaskPeer(t)
	cfg := sessWriteConfig(t, "mcpgw.yaml", fmt.Sprintf(durableTasksConfig,
		fmt.Sprintf("listen: ${E2E_LISTEN}\nstate_dir: ${E2E_STATE}\nstore: redis://127.0.0.1:%d/0", redis.Port), yamlQuote(url)))
	ga := sessStartReplica(t, "mcpgw-A", cfg)
	gb := sessStartReplica(t, "mcpgw-B", cfg)
	done := taskCreate(t, ga.URL, "a1", 1)
	taskAwait(t, gb.URL, "a1", done, "completed")
	taskUnknownFor(t, gb.URL, "a2", done)

	long := taskCreate(t, ga.URL, "a1", 60)
	if st, a := taskStatus(t, gb.URL, "a1", long); st != "working" {
		t.Fatalf("tasks/get on B of A's task: %+v", a)
	}
	taskUnknownFor(t, gb.URL, "a2", long)
	if a := taskPost(t, gb.URL, "a1", "tasks/cancel", long, map[string]any{"taskId": long}); a.Error != nil {
		t.Fatalf("tasks/cancel on B: %+v", a)
	}
	taskAwait(t, ga.URL, "a1", long, "cancelled")
}
