package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bidirectional MCP tasks (SEP-1686) and task status notifications through mcpgw: the npm
// server-everything 2026.8.31 asks the client (the TypeScript SDK 1.32.2 client,
// js/tasks-client.mjs) to run elicitation/create as a task, and sends
// notifications/tasks/status for the tasks it runs (simulate-research-query).

// checkElicitationTask checks the report of js/tasks-client.mjs --op elicitation: the
// upstream saw the client's task (its own id), polled it through input_required to
// completed, and read the accepted form with tasks/result.
func checkElicitationTask(t *testing.T, rep *TasksReport, raw map[string]json.RawMessage) string {
	t.Helper()
	call := rep.step(t, "call")
	if !call.OK {
		t.Fatalf("trigger-elicitation-request-async: %+v", call.Error)
	}
	var ids []string
	_ = json.Unmarshal(raw["clientTaskIds"], &ids)
	if len(ids) != 1 {
		t.Fatalf("the client ran %d elicitation tasks (%s), want 1; tool result: %s", len(ids), raw["clientTaskIds"], call.Result)
	}
	text := string(call.Result)
	for _, want := range []string{"[COMPLETED]", "Name: e2e elicited", "Favorite Color: Blue", "Task created: " + ids[0], "input_required - waiting for the e2e user"} {
		if !strings.Contains(text, want) {
			t.Errorf("the elicitation task did not round-trip (no %q): %s", want, text)
		}
	}
	if strings.Contains(text, "[SYNC]") || strings.Contains(text, "TIMEOUT") {
		t.Errorf("the upstream did not run the elicitation as the client's task: %s", text)
	}
	return ids[0]
}

// checkTaskInput checks the report of js/tasks-client.mjs --op input: the upstream's task
// asked the client for input during tasks/result, naming the task by the client's id
// (related-task), and went on with the client's answer.
func checkTaskInput(t *testing.T, run NodeResult) {
	t.Helper()
	rep, raw := parseTasksReport(t, run)
	id := createdTaskID(t, rep.step(t, "call"))
	res := rep.step(t, "result")
	if !res.OK || !strings.Contains(string(res.Result), `\"programming\"`) {
		t.Errorf("tasks/result of a task that asked for input: %+v %s", res.Error, res.Result)
	}
	var asked []struct {
		Meta map[string]struct {
			TaskID string `json:"taskId"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw["elicitationRequests"], &asked); err != nil || len(asked) != 1 {
		t.Fatalf("the task asked the client %s, want one elicitation/create (%v)", raw["elicitationRequests"], err)
	}
	if rel, ok := asked[0].Meta["io.modelcontextprotocol/related-task"]; !ok || rel.TaskID != id {
		t.Errorf("the task's elicitation/create names task %q (%v), not the client's %s", rel.TaskID, ok, id)
	}
}

// runTasksClientRaw is runTasksClient with the report's members as raw JSON too.
func runTasksClientRaw(t *testing.T, url string, args ...string) (*TasksReport, map[string]json.RawMessage) {
	t.Helper()
	pre := []string{"--timeout", "60000"}
	if url != "" {
		pre = append(pre, "--url", url)
	}
	return parseTasksReport(t, runNode(t, 75*time.Second, "js/tasks-client.mjs", append(pre, args...)...))
}

// parseTasksReport reads the report a run of js/tasks-client.mjs printed last.
func parseTasksReport(t *testing.T, res NodeResult) (*TasksReport, map[string]json.RawMessage) {
	t.Helper()
	line := lastLine(res.Stdout)
	var rep TasksReport
	raw := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(line), &rep); err != nil || json.Unmarshal([]byte(line), &raw) != nil {
		t.Fatalf("tasks-client: no JSON report (exit %d, timed out %v): %v\nstdout:\n%s\nstderr:\n%s",
			res.ExitCode, res.TimedOut, err, res.Stdout, res.Stderr)
	}
	if !rep.OK {
		t.Fatalf("tasks-client failed: %s\nreport: %+v\nstderr:\n%s", rep.Error, rep, res.Stderr)
	}
	return &rep, raw
}

// The upstream asks the client to run elicitation/create as a task; the client's
// CreateTaskResult, its status (input_required, then completed) and its result reach the
// upstream through mcpgw (the upstream's requests under gateway ids, the client's answers
// back under the upstream's). Another agent's session knows nothing of the client's task.
func TestMCPTasksElicitationRoundTrip(t *testing.T) {
	// The tool appears only on an instance whose client declared the capability: a new
	// tool of the server, served at once (integrity warn) rather than held for an admin.
	g := tasksGateway(t, "    mode: per_session\n    integrity: warn\n")
	rep, raw := runTasksClientRaw(t, g.Base+"/mcp", "--op", "elicitation", "--tool", "everything__trigger-elicitation-request-async")
	clientTask := checkElicitationTask(t, rep, raw)
	var asked []struct {
		Task *struct {
			TTL float64 `json:"ttl"`
		} `json:"task"`
	}
	if err := json.Unmarshal(raw["elicitationRequests"], &asked); err != nil || len(asked) != 1 || asked[0].Task == nil {
		t.Errorf("the client was asked %s, want one task-augmented elicitation/create (%v)", raw["elicitationRequests"], err)
	}

	// The client's task is the client's: another session asking mcpgw for it gets what an
	// unknown task gets, and its own list does not hold it.
	other := runTasksClient(t, g.Base+"/mcp", "--op", "foreign", "--task", clientTask, "--header", "X-Agent-ID: intruder")
	for _, name := range []string{"get", "result", "cancel"} {
		if s := other.step(t, name); s.OK || s.Error == nil || s.Error.Code != -32602 {
			t.Errorf("another session's tasks/%s of the client's task %s: ok %v, error %+v, result %s; want -32602", name, clientTask, s.OK, s.Error, s.Result)
		}
	}
	if l := other.step(t, "list"); !l.OK || strings.Contains(string(l.Result), clientTask) {
		t.Errorf("another session's tasks/list: %+v %s; want its own (empty) list", l.Error, l.Result)
	}
}

// The other way round: the upstream's task asks the client for input (elicitation/create
// during tasks/result, related to the task by the client's id), and completes with the
// client's answer.
func TestMCPTasksInputDuringResult(t *testing.T) {
	g := tasksGateway(t, "    mode: per_session\n")
	checkTaskInput(t, runNode(t, 75*time.Second, "js/tasks-client.mjs", "--timeout", "60000", "--url", g.Base+"/mcp",
		"--op", "input", "--tool", "everything__simulate-research-query"))
}

// The same round trip through mcpgw-bridge (stdio to the client, the socket to the daemon).
func TestMCPTasksBridgeElicitation(t *testing.T) {
	bridge := bridgeBin(t)
	_, sock := startBridgeGateway(t, shortStateDir(t), `
log: {level: debug, format: text}
upstream: {call_timeout: 60s}
servers:
  everything:
    type: stdio
    command: `+yamlQuote(node(t))+`
    args: [`+yamlQuote(serverEverythingScript(t))+`]
    mode: per_session
    integrity: warn
`)
	rep, raw := runTasksClientRaw(t, "", "--op", "elicitation", "--tool", "everything__trigger-elicitation-request-async",
		"--", bridge, "--socket", sock, "--agent", "a1")
	checkElicitationTask(t, rep, raw)
}

// notesOf reads the taskIds of a report's notifications/tasks/status.
func notesOf(t *testing.T, rep *TasksReport) []string {
	t.Helper()
	var ids []string
	for _, n := range rep.StatusNotes {
		var p struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(n, &p); err != nil || p.Status == "" {
			t.Errorf("a status notification without a status: %s (%v)", n, err)
		}
		ids = append(ids, p.TaskID)
	}
	return ids
}

// The upstream's notifications/tasks/status reach the session whose task it is, under
// the client's (mcpgw's) task id, and no other: two agents run a task each at once on
// one shared instance of the server, over stdio (stdio_proxy: one process for every
// session) and over streamable HTTP (one upstream session, whose notifications come on
// its GET stream): each agent's session runs its two tasks at once, beside the other's.
func TestMCPTasksStatusNotifications(t *testing.T) {
	httpUp := startServerEverythingNode(t, "streamableHttp")
	g := tasksGateway(t, "    stdio_proxy: true\n  evhttp:\n    type: streamable_http\n    url: "+yamlQuote(httpUp)+"\n    mode: shared\n")
	agents := []string{"alice", "bob"}
	tools := []string{"everything__simulate-research-query", "evhttp__simulate-research-query"}
	// The clients run at once; only the processes run in goroutines, their reports are
	// read here.
	res := make([]NodeResult, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[i] = runNode(t, 75*time.Second, "js/tasks-client.mjs", "--timeout", "60000", "--url", g.Base+"/mcp",
				"--op", "runall", "--tool", tools[0], "--tool", tools[1], "--header", "X-Agent-ID: "+a)
		}()
	}
	wg.Wait()
	for i, a := range agents {
		rep, _ := parseTasksReport(t, res[i])
		own := map[string]int{}
		for k, tool := range tools {
			id := createdTaskID(t, rep.step(t, "call"+strconv.Itoa(k)))
			own[id] = 0
			if get := rep.step(t, "get"+strconv.Itoa(k)); !get.OK {
				t.Errorf("%s: the %s task never ended: %+v", a, tool, get.Error)
			}
		}
		for _, got := range notesOf(t, rep) {
			n, ok := own[got]
			if !ok {
				t.Errorf("%s received a status notification for task %q, not one of its own %v", a, got, own)
				continue
			}
			own[got] = n + 1
		}
		for id, n := range own {
			if n == 0 {
				t.Errorf("%s received no notifications/tasks/status for its task %s", a, id)
			}
		}
	}
}
