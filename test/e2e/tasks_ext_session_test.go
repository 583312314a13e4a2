package e2e

// The Tasks extension (2026-07-28) over an upstream of a session revision (SEP-1686,
// docs/tasks.md): a stateless caller that declares the extension runs the npm
// server-everything's simulate-research-query (execution.taskSupport "required") as a
// task; mcpgw makes the upstream call task-augmented and translates the shapes.

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

// plainStatelessPost sends one 2026-07-28 tools/call that declares no extension.
func plainStatelessPost(t *testing.T, url, name string, args map[string]any) taskAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": name, "arguments": args,
		"_meta": json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`)}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := taskAnswer{Status: resp.StatusCode}
	if err := json.Unmarshal(b, &a); err != nil || (a.Result == nil && a.Error == nil) {
		t.Fatalf("tools/call: HTTP %d %s (%v)", resp.StatusCode, b, err)
	}
	return a
}

// researchTool is server-everything's tool that runs only as a task (taskSupport "required").
const researchTool = "simulate-research-query"

// startResearch starts researchTool on topic through url as agent, a caller of the Tasks
// extension, and returns the gateway's id of the flat task it is answered.
func startResearch(t *testing.T, url, agent, topic string) string {
	t.Helper()
	a := taskPost(t, url, agent, "tools/call", researchTool, map[string]any{"name": researchTool, "arguments": map[string]any{"topic": topic}})
	var id, rt, st string
	var ttl, poll float64
	if a.Result != nil {
		_ = json.Unmarshal(a.Result["taskId"], &id)
		_ = json.Unmarshal(a.Result["resultType"], &rt)
		_ = json.Unmarshal(a.Result["status"], &st)
		_ = json.Unmarshal(a.Result["ttlMs"], &ttl)
		_ = json.Unmarshal(a.Result["pollIntervalMs"], &poll)
	}
	if rt != "task" || !strings.HasPrefix(id, "mcpgw-task-") || st != "working" || ttl <= 0 || poll <= 0 || a.Result["task"] != nil {
		t.Fatalf("%s for a caller of the Tasks extension: %+v %v; want a flat task under a gateway id", researchTool, a, a.Result)
	}
	return id
}

// researchReport checks that a completed task's tasks/get holds the report on topic inline.
func researchReport(t *testing.T, done taskAnswer, topic string) {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(done.Result["result"], &res); err != nil || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "Research Report: "+topic) {
		t.Errorf("tasks/get of the completed task holds no research report on %q inline: %s (%v)", topic, done.Result["result"], err)
	}
}

func TestMCPTasksExtensionOnSessionUpstream(t *testing.T) {
	g := tasksGateway(t, "naming: {prefix: never}\n")
	url := g.Base + "/mcp"
	start := func(topic string) string { t.Helper(); return startResearch(t, url, "a1", topic) }

	id := start("quantum computing")
	done := taskAwait(t, url, "a1", id, "completed")
	researchReport(t, done, "quantum computing")
	if id2 := string(done.Result["taskId"]); id2 != `"`+id+`"` {
		t.Errorf("tasks/get names task %s, want %s", id2, id)
	}
	taskUnknownFor(t, url, "intruder", id)
	if a := taskPost(t, url, "a1", "tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{}}); a.Error == nil || a.Error.Code != -32602 || !strings.Contains(a.Error.Message, "session revision") {
		t.Errorf("tasks/update of a SEP-1686 task: %+v, want -32602 saying why", a)
	}

	// A second task, cancelled while it runs.
	id = start("cancel me")
	c := taskPost(t, url, "a1", "tasks/cancel", id, map[string]any{"taskId": id})
	var st string
	if c.Result != nil {
		_ = json.Unmarshal(c.Result["status"], &st)
	}
	if c.Error != nil || st != "cancelled" {
		t.Fatalf("tasks/cancel: %+v %v", c, c.Result)
	}
	if st, a := taskStatus(t, url, "a1", id); st != "cancelled" || a.Result["result"] != nil {
		t.Errorf("tasks/get after cancel: %q %+v", st, a)
	}

	// Without the extension the tool, which runs only as a task, cannot be called.
	if a := plainStatelessPost(t, url, researchTool, map[string]any{"topic": "x"}); a.Status != http.StatusBadRequest || a.Error == nil || a.Error.Code != -32021 || !strings.Contains(a.Error.Message, "io.modelcontextprotocol/tasks") {
		t.Errorf("%s without the Tasks extension: %+v, want HTTP 400, -32021 naming it", researchTool, a)
	}
}

// TestMCPTasksExtensionOnSessionUpstreamRestart: such a task's route names the upstream
// session that runs it (server-everything over streamableHttp); the gateway restarted on
// its bbolt state dir reattaches to it and still translates: polled to completed with the
// report inline, another agent -32602.
func TestMCPTasksExtensionOnSessionUpstreamRestart(t *testing.T) {
	needGatewayBin(t)
	up := startServerEverythingNode(t, "streamableHttp")
	g := startGatewayChecked(t, fmt.Sprintf(reattachConfig, "store: bolt\nnaming: {prefix: never}", yamlQuote(up), "", "everything"))
	id := startResearch(t, g.URL, "a1", "restarts")
	g.Proc.Stop()
	g2 := sessRestartGateway(t, g, "mcpgw-2")
	researchReport(t, taskAwait(t, g2.URL, "a1", id, "completed"), "restarts")
	taskUnknownFor(t, g2.URL, "a2", id)
}
