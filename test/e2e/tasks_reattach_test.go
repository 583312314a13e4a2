package e2e

// MCP tasks (SEP-1686) of an upstream that keeps its tasks per session outlive the
// gateway process (docs/tasks.md, "Tasks across restarts and replicas"): the npm
// server-everything over streamableHttp runs simulate-research-query as a task in the
// upstream session the gateway opened; after the gateway restarts on its bbolt state dir,
// or from another replica on the same Redis, the task's owner polls it to its result in
// that same upstream session, reattached to. A task whose upstream session is gone (the
// server restarted) is answered "task lost" at once. Another agent gets nothing.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// reattachProtocol is the revision of the raw client sessions here: tasks are 2025-11-25's.
const reattachProtocol = "2025-11-25"

const reattachConfig = `%[1]s
log: {level: debug, format: text}
upstream: {call_timeout: 60s}
servers:
  everything: {type: streamable_http, url: %[2]s}
%[3]s
agents:
  a1: {servers: [%[4]s]}
  a2: {servers: [%[4]s]}
`

// reattachSess is a raw 2025-11-25 client session: its id outlives the gateway process
// (sessions are kept in the store), so a restarted gateway or another replica revives it.
type reattachSess struct {
	agent, id string
	next      int
}

func (s *reattachSess) headers() map[string]string {
	h := map[string]string{"X-Agent-ID": s.agent, "MCP-Protocol-Version": reattachProtocol}
	if s.id != "" {
		h["Mcp-Session-Id"] = s.id
	}
	return h
}

// reattachOpen initializes a session as agent at url.
func reattachOpen(t *testing.T, url, agent string) *reattachSess {
	t.Helper()
	s := &reattachSess{agent: agent}
	a := s.post(t, url, "initialize", map[string]any{"protocolVersion": reattachProtocol, "capabilities": map[string]any{},
		"clientInfo": map[string]string{"name": "mcpgw-e2e-reattach", "version": "1.0.0"}})
	s.id = a.Header.Get("Mcp-Session-Id")
	if !a.ok() || s.id == "" {
		t.Fatalf("initialize as %s: %s", agent, a)
	}
	if n, err := sessPost(url, s.headers(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %v %s", err, n)
	}
	return s
}

// post sends one request on the session at url (a gateway or replica).
func (s *reattachSess) post(t *testing.T, url, method string, params any) sessAnswer {
	t.Helper()
	p, _ := json.Marshal(params)
	s.next++
	a, err := sessPost(url, s.headers(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.next, method, p))
	if err != nil {
		t.Fatalf("%s at %s: %v", method, url, err)
	}
	return a
}

// start runs the everything server's simulate-research-query as a task and returns the
// gateway's task id.
func (s *reattachSess) start(t *testing.T, url string) string {
	t.Helper()
	return s.startOn(t, url, "everything")
}

// startOn runs server's simulate-research-query as a task.
func (s *reattachSess) startOn(t *testing.T, url, server string) string {
	t.Helper()
	a := s.post(t, url, "tools/call", map[string]any{"name": server + "__simulate-research-query",
		"arguments": map[string]any{"topic": "gateways"}, "task": map[string]any{"ttl": 60000}})
	var r struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if !a.ok() || json.Unmarshal(a.Result, &r) != nil || !strings.HasPrefix(r.Task.TaskID, "mcpgw-task-") {
		t.Fatalf("simulate-research-query as a task: %s (want a CreateTaskResult under a gateway id)", a)
	}
	return r.Task.TaskID
}

// status is tasks/get's status of id at url ("" when refused, with the answer).
func (s *reattachSess) status(t *testing.T, url, id string) (string, sessAnswer) {
	t.Helper()
	a := s.post(t, url, "tasks/get", map[string]any{"taskId": id})
	var r struct {
		Status string `json:"status"`
		TaskID string `json:"taskId"`
	}
	if a.ok() && json.Unmarshal(a.Result, &r) == nil && r.TaskID != id {
		t.Errorf("tasks/get of %s answered task id %q", id, r.TaskID)
	}
	return r.Status, a
}

// await polls id at url until its status is want (bounded in count and time).
func (s *reattachSess) await(t *testing.T, url, id, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last sessAnswer
	for i := 0; i < 200 && time.Now().Before(deadline); i++ {
		st, a := s.status(t, url, id)
		if st == want {
			return
		}
		if !a.ok() || (st != "working" && st != "input_required") {
			t.Fatalf("tasks/get %s at %s: %s (want %s)", id, url, a, want)
		}
		last = a
		time.Sleep(backoff(i))
	}
	t.Fatalf("task %s not %s in time: last %s", id, want, last)
}

// result is tasks/result of id at url, which must hold the research report.
func (s *reattachSess) result(t *testing.T, url, id string) {
	t.Helper()
	a := s.post(t, url, "tasks/result", map[string]any{"taskId": id})
	if !a.ok() || !strings.Contains(string(a.Result), "Research Report") {
		t.Fatalf("tasks/result of %s at %s: %s", id, url, a)
	}
	if strings.Contains(string(a.Result), "related-task") && !strings.Contains(string(a.Result), id) {
		t.Errorf("tasks/result's related-task names another id than %s: %s", id, a.Result)
	}
}

// listed reports whether tasks/list at url holds id.
func (s *reattachSess) listed(t *testing.T, url, id string) bool {
	t.Helper()
	a := s.post(t, url, "tasks/list", map[string]any{})
	if !a.ok() {
		t.Fatalf("tasks/list at %s: %s", url, a)
	}
	return strings.Contains(string(a.Result), id)
}

// reattachForeign: another agent's session gets for id what an unknown id gets.
func reattachForeign(t *testing.T, url, id string) {
	t.Helper()
	other := reattachOpen(t, url, "a2")
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if a := other.post(t, url, m, map[string]any{"taskId": id}); a.Error == nil || a.Error.Code != -32602 || a.Error.Message != "Invalid params: unknown task" {
			t.Errorf("another agent's %s of %s: %s, want -32602 unknown task", m, id, a)
		}
	}
	if other.listed(t, url, id) {
		t.Errorf("another agent's tasks/list holds %s", id)
	}
}

func TestMCPTasksEverythingSurviveRestartOnBolt(t *testing.T) {
	needGatewayBin(t)
	url := startServerEverythingNode(t, "streamableHttp")
	// The same server over stdio: its process, and its tasks, end with the gateway.
	stdio := fmt.Sprintf("  viastdio: {type: stdio, command: %s, args: [%s]}", yamlQuote(node(t)), yamlQuote(serverEverythingScript(t)))
	g := startGatewayChecked(t, fmt.Sprintf(reattachConfig, "store: bolt", yamlQuote(url), stdio, "everything, viastdio"))
	s := reattachOpen(t, g.URL, "a1")
	id := s.start(t, g.URL)
	gone := s.startOn(t, g.URL, "viastdio")
	for _, task := range []string{id, gone} {
		if st, a := s.status(t, g.URL, task); st != "working" {
			t.Fatalf("tasks/get of %s before the restart: %s", task, a)
		}
	}
	g.Proc.Stop() // SIGTERM: the gateway ends its upstream sessions, but not one a task keeps
	g2 := sessRestartGateway(t, g, "mcpgw-2")

	// The same client session, revived from bbolt, reaches the task in the upstream session
	// that runs it: listed, working, then completed, and its result.
	if !s.listed(t, g2.URL, id) {
		t.Errorf("tasks/list after the restart does not hold %s", id)
	}
	s.await(t, g2.URL, id, "completed")
	s.result(t, g2.URL, id)
	reattachForeign(t, g2.URL, id)

	// The stdio server's task ended with the process that ran it: its owner is told so,
	// then the id is forgotten.
	a := s.post(t, g2.URL, "tasks/get", map[string]any{"taskId": gone})
	if a.Error == nil || a.Error.Code != -32602 || !strings.Contains(a.Error.Message, "task lost") || !strings.Contains(a.Error.Message, `"viastdio"`) {
		t.Fatalf("tasks/get of a stdio server's task after the restart: %s, want -32602 task lost naming viastdio", a)
	}
	if a := s.post(t, g2.URL, "tasks/result", map[string]any{"taskId": gone}); a.Error == nil || a.Error.Message != "Invalid params: unknown task" {
		t.Errorf("tasks/result of the lost task: %s, want -32602 unknown task (forgotten)", a)
	}
}

func TestMCPTasksEverythingAcrossReplicasOnRedis(t *testing.T) {
	needGatewayBin(t)
	sessNeedRedis(t)
	redis := sessStartRedis(t, "redis", 0, "")
	up, port := startServerEverythingNodeProc(t, "streamableHttp")
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	cfg := sessWriteConfig(t, "mcpgw.yaml", fmt.Sprintf(reattachConfig,
		fmt.Sprintf("listen: ${E2E_LISTEN}\nstate_dir: ${E2E_STATE}\nstore: redis://127.0.0.1:%d/0", redis.Port), yamlQuote(url), "", "everything"))
	ga := sessStartReplica(t, "mcpgw-A", cfg)
	gb := sessStartReplica(t, "mcpgw-B", cfg)

	s := reattachOpen(t, ga.URL, "a1")
	done := s.start(t, ga.URL)
	long := s.start(t, ga.URL)
	// B cancels one of A's tasks in A's upstream session; A, whose instance runs it, reads
	// it cancelled.
	if a := s.post(t, gb.URL, "tasks/cancel", map[string]any{"taskId": long}); !a.ok() || !strings.Contains(string(a.Result), `"cancelled"`) {
		t.Fatalf("tasks/cancel on B of A's task: %s", a)
	}
	if st, a := s.status(t, ga.URL, long); st != "cancelled" {
		t.Errorf("tasks/get on A of the task B cancelled: %s", a)
	}
	// B polls the other to its result; A sees the same.
	if !s.listed(t, gb.URL, done) {
		t.Errorf("tasks/list on B does not hold A's task %s", done)
	}
	s.await(t, gb.URL, done, "completed")
	s.result(t, gb.URL, done)
	if st, a := s.status(t, ga.URL, done); st != "completed" {
		t.Errorf("tasks/get on A after B saw it completed: %s", a)
	}
	reattachForeign(t, gb.URL, done)

	// The upstream restarts: the session that ran a task is gone with it. Its owner is
	// told so at once on B (which reattaches to the session, and the upstream answers it
	// does not know it), and the route is forgotten.
	lost := s.start(t, ga.URL)
	up.Stop()
	if _, err := startServerEverythingNodeAt(t, "streamableHttp", port); err != nil {
		t.Fatalf("server-everything again on port %d: %v", port, err)
	}
	a := s.post(t, gb.URL, "tasks/get", map[string]any{"taskId": lost})
	if a.Error == nil || a.Error.Code != -32602 || !strings.Contains(a.Error.Message, "task lost") {
		t.Fatalf("tasks/get of a task whose upstream session is gone: %s, want -32602 task lost", a)
	}
	if a := s.post(t, ga.URL, "tasks/get", map[string]any{"taskId": lost}); a.Error == nil || a.Error.Message != "Invalid params: unknown task" {
		t.Errorf("tasks/get of the lost task again: %s, want -32602 unknown task (forgotten)", a)
	}
}
