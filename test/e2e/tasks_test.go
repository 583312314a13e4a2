package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// MCP tasks (SEP-1686) through mcpgw, against the npm server-everything (which declares
// tasks.list, tasks.cancel and tasks.requests.tools.call, and runs
// simulate-research-query as a task) and the TypeScript SDK 1.32.2 client
// (js/tasks-client.mjs).

// TasksReport is the JSON js/tasks-client.mjs prints.
type TasksReport struct {
	OK                 bool            `json:"ok"`
	Error              json.RawMessage `json:"error"`
	ServerCapabilities struct {
		Tasks json.RawMessage `json:"tasks"`
	} `json:"serverCapabilities"`
	SessionID   string            `json:"sessionId"`
	Steps       []TaskStep        `json:"steps"`
	StatusNotes []json.RawMessage `json:"statusNotes"`
}

// TaskStep is one request of a TasksReport.
type TaskStep struct {
	Name   string          `json:"name"`
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Error  *ClientError    `json:"error"`
}

func (r *TasksReport) step(t testing.TB, name string) TaskStep {
	t.Helper()
	for _, s := range r.Steps {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("the client made no %q step: %+v", name, r.Steps)
	return TaskStep{}
}

// runTasksClient runs js/tasks-client.mjs against url (a URL, or a command after "--"
// in args when url is empty).
func runTasksClient(t testing.TB, url string, args ...string) *TasksReport {
	t.Helper()
	pre := []string{"--timeout", "60000"}
	if url != "" {
		pre = append(pre, "--url", url)
	}
	res := runNode(t, 75*time.Second, "js/tasks-client.mjs", append(pre, args...)...)
	var rep TasksReport
	if err := json.Unmarshal([]byte(lastLine(res.Stdout)), &rep); err != nil {
		t.Fatalf("tasks-client: no JSON report (exit %d, timed out %v): %v\nstdout:\n%s\nstderr:\n%s",
			res.ExitCode, res.TimedOut, err, res.Stdout, res.Stderr)
	}
	if !rep.OK {
		t.Fatalf("tasks-client failed: %s\nreport: %+v\nstderr:\n%s", rep.Error, rep, res.Stderr)
	}
	return &rep
}

// tasksGateway is a gateway serving the npm server-everything over stdio as "everything".
func tasksGateway(t testing.TB, extra string) *Gateway {
	t.Helper()
	return startGatewayChecked(t, `
log: {level: debug, format: text}
upstream: {call_timeout: 60s}
servers:
  everything:
    type: stdio
    command: `+yamlQuote(node(t))+`
    args: [`+yamlQuote(serverEverythingScript(t))+`]
`+extra)
}

// createdTaskID is the task id of a CreateTaskResult.
func createdTaskID(t testing.TB, s TaskStep) string {
	t.Helper()
	if !s.OK {
		t.Fatalf("task-augmented tools/call failed: %+v", s.Error)
	}
	var r struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(s.Result, &r); err != nil || r.Task.TaskID == "" {
		t.Fatalf("tools/call with task answered no task: %s (%v)", s.Result, err)
	}
	if !strings.HasPrefix(r.Task.TaskID, "mcpgw-task-") {
		t.Errorf("the client sees the upstream's task id %q, not a gateway id", r.Task.TaskID)
	}
	return r.Task.TaskID
}

func TestMCPTasksStreamable(t *testing.T) {
	g := tasksGateway(t, "")
	rep := runTasksClient(t, g.Base+"/mcp", "--op", "run")
	var caps struct {
		List     *struct{} `json:"list"`
		Cancel   *struct{} `json:"cancel"`
		Requests struct {
			Tools struct {
				Call *struct{} `json:"call"`
			} `json:"tools"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(rep.ServerCapabilities.Tasks, &caps); err != nil || caps.List == nil || caps.Cancel == nil || caps.Requests.Tools.Call == nil {
		t.Errorf("initialize declares tasks %s, want list, cancel and requests.tools.call (%v)", rep.ServerCapabilities.Tasks, err)
	}
	id := createdTaskID(t, rep.step(t, "call"))
	list := rep.step(t, "list")
	if !list.OK || !strings.Contains(string(list.Result), id) {
		t.Errorf("tasks/list does not hold the session's task %s: %+v %s", id, list.Error, list.Result)
	}
	get := rep.step(t, "get")
	if !get.OK || !strings.Contains(string(get.Result), `"completed"`) || !strings.Contains(string(get.Result), id) {
		t.Fatalf("tasks/get never saw the task completed under its id: %+v %s", get.Error, get.Result)
	}
	res := rep.step(t, "result")
	if !res.OK || !strings.Contains(string(res.Result), "Research Report") {
		t.Fatalf("tasks/result: %+v %s", res.Error, res.Result)
	}
	if strings.Contains(string(res.Result), "related-task") && !strings.Contains(string(res.Result), id) {
		t.Errorf("tasks/result's related-task names another id than %s: %s", id, res.Result)
	}

	// Another agent (another session too) gets what an unknown task gets: nothing.
	other := runTasksClient(t, g.Base+"/mcp", "--op", "foreign", "--task", id, "--header", "X-Agent-ID: intruder")
	for _, name := range []string{"get", "result", "cancel"} {
		s := other.step(t, name)
		if s.OK || s.Error == nil || s.Error.Code != -32602 {
			t.Errorf("another agent's tasks/%s of %s: ok %v, error %+v, result %s; want -32602", name, id, s.OK, s.Error, s.Result)
		}
	}
	if l := other.step(t, "list"); !l.OK || strings.Contains(string(l.Result), id) {
		t.Errorf("another agent's tasks/list: %+v %s; want its own (empty) list", l.Error, l.Result)
	}
	unknown := runTasksClient(t, g.Base+"/mcp", "--op", "foreign", "--task", "mcpgw-task-AAAAAAAAAAAAAAAAAAAAAA")
	if a, b := other.step(t, "get").Error, unknown.step(t, "get").Error; a == nil || b == nil || a.Message != b.Message || a.Code != b.Code {
		t.Errorf("a foreign task's error %+v differs from an unknown one's %+v", a, b)
	}
}

func TestMCPTasksCancel(t *testing.T) {
	g := tasksGateway(t, "")
	rep := runTasksClient(t, g.Base+"/mcp", "--op", "cancel")
	id := createdTaskID(t, rep.step(t, "call"))
	c := rep.step(t, "cancel")
	if !c.OK || !strings.Contains(string(c.Result), `"cancelled"`) || !strings.Contains(string(c.Result), id) {
		t.Fatalf("tasks/cancel: %+v %s", c.Error, c.Result)
	}
	if s := rep.step(t, "get"); !s.OK || !strings.Contains(string(s.Result), `"cancelled"`) {
		t.Fatalf("tasks/get after cancel: %+v %s", s.Error, s.Result)
	}
}

// A task-augmented call through mcpgw-bridge (the TS client spawns the bridge and speaks
// stdio; the bridge relays to the daemon's socket).
func TestMCPTasksBridge(t *testing.T) {
	bridge := bridgeBin(t)
	_, sock := startBridgeGateway(t, shortStateDir(t), `
log: {level: debug, format: text}
upstream: {call_timeout: 60s}
servers:
  everything:
    type: stdio
    command: `+yamlQuote(node(t))+`
    args: [`+yamlQuote(serverEverythingScript(t))+`]
`)
	rep := runTasksClient(t, "", "--op", "run", "--", bridge, "--socket", sock, "--agent", "a1")
	if len(rep.ServerCapabilities.Tasks) == 0 {
		t.Errorf("initialize through the bridge declares no tasks")
	}
	id := createdTaskID(t, rep.step(t, "call"))
	if get := rep.step(t, "get"); !get.OK || !strings.Contains(string(get.Result), `"completed"`) {
		t.Fatalf("tasks/get of %s through the bridge: %+v %s", id, get.Error, get.Result)
	}
	if res := rep.step(t, "result"); !res.OK || !strings.Contains(string(res.Result), "Research Report") {
		t.Fatalf("tasks/result through the bridge: %+v %s", res.Error, res.Result)
	}
}

// Bidirectional: the upstream asks the client to run sampling/createMessage as a task
// (trigger-sampling-request-async); the client, which declared
// tasks.requests.sampling.createMessage, answers a CreateTaskResult, and the upstream
// polls the client's tasks/get and tasks/result through mcpgw.
func TestMCPTasksSamplingRoundTrip(t *testing.T) {
	// The tool appears only on an instance whose client declared the capability: a new
	// tool of the server, served at once (integrity warn) rather than held for an admin.
	g := tasksGateway(t, "    mode: per_session\n    integrity: warn\n")
	rep := runTasksClient(t, g.Base+"/mcp", "--op", "sampling", "--tool", "everything__trigger-sampling-request-async")
	call := rep.step(t, "call")
	if !call.OK {
		t.Fatalf("trigger-sampling-request-async: %+v", call.Error)
	}
	text := string(call.Result)
	if !strings.Contains(text, "sampled by the e2e client") || strings.Contains(text, "[SYNC]") || strings.Contains(text, "TIMEOUT") {
		t.Fatalf("the sampling task did not round-trip: %s", text)
	}
	if !strings.Contains(text, "completed") {
		t.Errorf("the upstream never saw the client's task completed: %s", text)
	}
}
