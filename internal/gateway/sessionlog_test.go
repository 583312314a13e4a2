package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// A session start logs one line naming the agent, task, executor and the servers it got,
// so an operator can confirm which servers loaded for a task.
func TestSessionStartLogsItsServers(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig+`
executors:
  box: {type: local_docker, mcp_policy: {denylist_servers: [down]}}
tasks:
  t7: {enabled_mcp_servers: [everything, down]}
`)
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		Header: map[string]string{"X-Agent-ID": "coder", "X-Task-ID": "t7", "X-Executor-ID": "box"}})
	if r.Status != http.StatusOK {
		t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	var line string
	for _, l := range strings.Split(g.Log.String(), "\n") {
		if strings.Contains(l, `msg="session started"`) && strings.Contains(l, "session="+sid) {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no session started line for %s in:\n%s", sid, g.Log.String())
	}
	for _, want := range []string{"agent=coder", "task=t7", "executor=box", "servers=[everything]", "transport=streamable"} {
		if !strings.Contains(line, want) {
			t.Errorf("session line %q lacks %s", line, want)
		}
	}
}

// The tools/list form a session is served (full, thin or search) is logged once, when it
// is chosen, with the session, agent, client, form and tool count: an operator can tell
// why an agent saw the tools it saw. Pages and re-lists of the same view do not log again.
func TestSessionListFormLogged(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig+`
agents:
  coder: {handshake: thin}
`)
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"formclient","version":"1"}}}`,
		Header: map[string]string{"X-Agent-ID": "coder"}})
	if r.Status != http.StatusOK {
		t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	g.ToolNames(t, sid) // every page
	g.ToolNames(t, sid) // and again
	var lines []string
	for _, l := range strings.Split(g.Log.String(), "\n") {
		if strings.Contains(l, `msg="list form"`) && strings.Contains(l, "session="+sid) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d list form lines for %s, want 1:\n%s", len(lines), sid, g.Log.String())
	}
	for _, want := range []string{"level=INFO", "agent=coder", "client=formclient", "form=thin", "tools="} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("list form line %q lacks %s", lines[0], want)
		}
	}
	if strings.Contains(lines[0], "tools=0 ") {
		t.Errorf("list form line %q counts no tools", lines[0])
	}
}
