package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runClientConfigBin runs `mcpgw client-config --config FILE args...` (bounded) and returns
// its stdout; a failure ends the test with its stderr.
func runClientConfigBin(t *testing.T, cfg string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, needGatewayBin(t), append([]string{"client-config", "--config", cfg}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcpgw client-config %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// TestClientConfigTaskFile: `mcpgw client-config --task T --out FILE` writes the per-run
// MCP config a run of Claude Code takes (`claude --mcp-config FILE`): the gateway's URL
// with the agent's and the task's headers, in a file only its owner reads. A client that
// connects as the file says sees exactly the task's servers. `--allowed-tools` prints the
// Claude Code name of every tool the agent may call in that task (mcp__mcpgw__<exposed
// name>), each one a name the session lists, and not the one the agent's deny glob
// hides; `--via bridge --task T` passes the task to the bridge.
func TestClientConfigTaskFile(t *testing.T) {
	needPeers(t)
	gw := startGateway(t, `store: memory
auth:
  mode: none
servers:
  alpha:
    type: stdio
    command: {{everything_server}}
  beta:
    type: stdio
    command: {{everything_server}}
agents:
  a1:
    tools: {deny: ["beta__test_simple_text"]}
tasks:
  t-run:
    enabled_mcp_servers: [beta]
`)
	file := filepath.Join(t.TempDir(), "run-42.mcp.json")
	if out := runClientConfigBin(t, gw.Config, "--agent", "a1", "--client", "claude-code", "--task", "t-run", "--out", file); out != "" {
		t.Errorf("with --out, stdout should be empty: %q", out)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatalf("--out wrote no file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600 (it may hold a token)", file, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(file)
	var doc struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the file is not JSON: %v\n%s", err, b)
	}
	e, ok := doc.MCPServers["mcpgw"]
	if !ok || e.Type != "http" || e.URL != gw.URL || e.Headers["X-Agent-ID"] != "a1" || e.Headers["X-Task-ID"] != "t-run" {
		t.Fatalf("the per-run file: %s\nwant mcpServers.mcpgw of type http at %s with X-Agent-ID a1 and X-Task-ID t-run", b, gw.URL)
	}

	// Connect as the file says: the session is the task's.
	s := openRawSession(t, e.URL, e.Headers)
	tools := slices.DeleteFunc(s.tools(t), gatewayOwnTool)
	if len(tools) == 0 || withPrefix(tools, "beta__") != len(tools) {
		t.Fatalf("a session opened with the file's headers lists %v; want beta's tools only (task t-run)", tools)
	}

	// The Claude Code names of the tools the agent may call in the task.
	lines := strings.Fields(runClientConfigBin(t, gw.Config, "--agent", "a1", "--client", "claude-code", "--task", "t-run", "--allowed-tools"))
	for _, name := range tools {
		if !slices.Contains(lines, "mcp__mcpgw__"+name) {
			t.Errorf("--allowed-tools does not print mcp__mcpgw__%s (a tool the task's session lists): %v", name, lines)
		}
	}
	if slices.Contains(tools, "beta__test_simple_text") || slices.Contains(lines, "mcp__mcpgw__beta__test_simple_text") {
		t.Errorf("the tool a1's deny glob hides is listed (session %v) or printed (--allowed-tools %v)", tools, lines)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "mcp__mcpgw__beta__") {
			t.Errorf("--allowed-tools prints %q, not a Claude Code name of one of the task's tools", l)
		}
	}

	// Through the bridge, the task goes as the bridge's --task.
	var bridged struct {
		MCPServers map[string]struct {
			Args []string `json:"args"`
		} `json:"mcpServers"`
	}
	out := runClientConfigBin(t, gw.Config, "--agent", "a1", "--client", "claude-code", "--via", "bridge", "--task", "t-run")
	if err := json.Unmarshal([]byte(out), &bridged); err != nil {
		t.Fatalf("client-config --via bridge: %v\n%s", err, out)
	}
	if args := bridged.MCPServers["mcpgw"].Args; !slices.Contains(args, "--task") || args[slices.Index(args, "--task")+1] != "t-run" {
		t.Errorf("the bridge's args %q do not carry --task t-run", args)
	}
}
