package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// The agent CLIs' own health check is the proof that a `client-config` block works in the
// client it is for: `gemini mcp list` and `claude mcp list` connect to every configured
// server (initialize, list) and print Connected or Disconnected/Failed, with no model,
// API key or network. scripts/peers.sh installs both from test/e2e/agents/package-lock.json
// into $MCPGW_PEERS/agents.

// agentCLITimeout bounds one run of an agent CLI (Gemini CLI alone takes about 5 s to start
// on the shared 2-core machine).
const agentCLITimeout = 90 * time.Second

// agentCLI returns $MCPGW_PEERS/agents/node_modules/.bin/NAME; missing, the test skips
// (fails under MCPGW_REQUIRE_PEERS=1).
func agentCLI(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(needPeers(t), "agents", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		peers.Missing(t, name+" not installed at "+p, peers.Install+" (npm ci of test/e2e/agents)")
	}
	return p
}

// agentHome is a scratch HOME for one agent CLI and a working directory inside it.
func agentHome(t *testing.T) (home, work string) {
	t.Helper()
	home = t.TempDir()
	work = filepath.Join(home, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	return home, work
}

// runAgentCLI runs cli with HOME=home in work, with Node 22 first on PATH and every
// background download and report of the CLIs turned off; loopback is never proxied.
func runAgentCLI(t *testing.T, home, work, cli string, args ...string) NodeResult {
	t.Helper()
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
		"GEMINI_CLI_NO_RELAUNCH=true",
	}
	res := runToolIn(t, work, agentCLITimeout, env, cli, args...)
	if res.TimedOut {
		t.Fatalf("%s %v timed out after %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(cli), args, agentCLITimeout, res.Stdout, res.Stderr)
	}
	return res
}

// clientConfigEntry runs `mcpgw client-config ARGS` and returns its one mcpServers entry.
func clientConfigEntry(t *testing.T, cfg string, args ...string) map[string]any {
	t.Helper()
	out := runClientConfigBin(t, cfg, args...)
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.MCPServers) != 1 || doc.MCPServers["mcpgw"] == nil {
		t.Fatalf("client-config %v: want one mcpServers entry mcpgw (err %v):\n%s", args, err, out)
	}
	return doc.MCPServers["mcpgw"]
}

// agentCLIVersion is the version of the npm package pkg installed in $MCPGW_PEERS/agents.
func agentCLIVersion(t *testing.T, pkg string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(needPeers(t), "agents", "node_modules", pkg, "package.json"))
	var m struct {
		Version string `json:"version"`
	}
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatalf("version of %s: %v", pkg, err)
	}
	return m.Version
}

// sessionStarted returns the gateway's "session started" log line for agent, or "".
func sessionStarted(log, agent string) string {
	for line := range strings.Lines(log) {
		if strings.Contains(line, "session started") && strings.Contains(line, " agent="+agent+" ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// listLine returns the line of a `mcp list` output that names server (as "name:").
func listLine(out, server string) string {
	for line := range strings.Lines(out) {
		if strings.Contains(line, server+":") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// connected reports whether a `mcp list` line says the server is connected.
func connected(line string) bool {
	return strings.Contains(line, "Connected") && !strings.Contains(line, "Disconnected")
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

const agentCLIsConfig = `
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
tasks:
  t-run:
    enabled_mcp_servers: [everything]
`

// TestGeminiCLIListsClientConfig: the entries `mcpgw client-config --client gemini` prints
// for streamable HTTP and for `--via sse`, written into ~/.gemini/settings.json, are
// Connected in `gemini mcp list` (Gemini CLI 0.61, pinned in test/e2e/agents). The SSE
// entry must carry "type": "sse": Gemini CLI 0.61 reads a url without type as streamable
// HTTP, and the same entry without its type, listed beside it, must not be Connected (the
// control that shows this check can tell the two apart).
func TestGeminiCLIListsClientConfig(t *testing.T) {
	gemini := agentCLI(t, "gemini")
	everythingServer(t)
	g := startGatewayChecked(t, agentCLIsConfig)

	httpEntry := clientConfigEntry(t, g.Config, "--agent", "gem-http", "--client", "gemini")
	if httpEntry["httpUrl"] != g.URL {
		t.Errorf("client-config --client gemini: httpUrl %v, want %s: %v", httpEntry["httpUrl"], g.URL, httpEntry)
	}
	sseEntry := clientConfigEntry(t, g.Config, "--agent", "gem-sse", "--client", "gemini", "--via", "sse")
	if sseEntry["type"] != "sse" {
		t.Errorf("client-config --client gemini --via sse prints an SSE entry without \"type\": \"sse\" (Gemini CLI 0.61 reads it as streamable HTTP): %v", sseEntry)
	}
	untyped := map[string]any{}
	for k, v := range sseEntry {
		if k != "type" {
			untyped[k] = v
		}
	}
	untyped["headers"] = map[string]any{"X-Agent-ID": "gem-untyped"}

	home, work := agentHome(t)
	writeJSON(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{
		"mcpServers": map[string]any{"gw-http": httpEntry, "gw-sse": sseEntry, "gw-sse-untyped": untyped},
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
	})
	writeJSON(t, filepath.Join(home, ".gemini", "trustedFolders.json"), map[string]string{work: "TRUST_FOLDER"})

	res := runAgentCLI(t, home, work, gemini, "mcp", "list")
	out := res.Stdout + res.Stderr
	t.Logf("Gemini CLI %s, `gemini mcp list` (exit %d):\n%s", agentCLIVersion(t, "@google/gemini-cli"), res.ExitCode, out)
	for _, name := range []string{"gw-http", "gw-sse"} {
		if line := listLine(out, name); !connected(line) {
			t.Errorf("`gemini mcp list` does not show %s (the entry client-config printed) Connected: %q", name, line)
		}
	}
	if line := listLine(out, "gw-sse-untyped"); line == "" || connected(line) {
		t.Errorf("`gemini mcp list` shows the SSE entry without \"type\" as %q; want it listed and not Connected (the control)", line)
	}
	log := g.Log()
	for _, agent := range []string{"gem-http", "gem-sse"} {
		if line := sessionStarted(log, agent); line == "" {
			t.Errorf("no session of agent %s in the gateway's log:\n%s", agent, g.Tail(3000))
		}
	}
}

// TestClaudeCodeListsClientConfig: the entries `mcpgw client-config --client claude-code`
// prints, plain and with `--task`, added with `claude mcp add-json -s user`, are Connected
// in `claude mcp list` (Claude Code 2.1.332, pinned in test/e2e/agents), and the gateway
// saw both agents' sessions, the second one as the task's. A control entry (the same URL
// as SSE) listed beside them must not be Connected.
func TestClaudeCodeListsClientConfig(t *testing.T) {
	claude := agentCLI(t, "claude")
	everythingServer(t)
	g := startGatewayChecked(t, agentCLIsConfig)

	home, work := agentHome(t)
	entries := map[string]map[string]any{
		"gw-plain": clientConfigEntry(t, g.Config, "--agent", "cc-plain", "--client", "claude-code"),
		"gw-task":  clientConfigEntry(t, g.Config, "--agent", "cc-task", "--client", "claude-code", "--task", "t-run"),
	}
	// The control: the plain entry as SSE, which the gateway's /mcp does not speak.
	control := map[string]any{"type": "sse", "headers": map[string]any{"X-Agent-ID": "cc-control"}}
	control["url"] = entries["gw-plain"]["url"]
	for name, e := range map[string]map[string]any{"gw-plain": entries["gw-plain"], "gw-task": entries["gw-task"], "gw-control": control} {
		b, _ := json.Marshal(e)
		if res := runAgentCLI(t, home, work, claude, "mcp", "add-json", "-s", "user", name, string(b)); res.ExitCode != 0 {
			t.Fatalf("claude mcp add-json %s %s: exit %d\n%s%s", name, b, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	res := runAgentCLI(t, home, work, claude, "mcp", "list")
	out := res.Stdout + res.Stderr
	t.Logf("Claude Code %s, `claude mcp list` (exit %d):\n%s", agentCLIVersion(t, "@anthropic-ai/claude-code"), res.ExitCode, out)
	for name := range entries {
		if line := listLine(out, name); !connected(line) {
			t.Errorf("`claude mcp list` does not show %s (the entry client-config printed) Connected: %q", name, line)
		}
	}
	if line := listLine(out, "gw-control"); line == "" || connected(line) {
		t.Errorf("`claude mcp list` shows the control (the entry as SSE) as %q; want it listed and not Connected", line)
	}
	log := g.Log()
	if line := sessionStarted(log, "cc-plain"); line == "" {
		t.Errorf("no session of agent cc-plain in the gateway's log:\n%s", g.Tail(3000))
	}
	if line := sessionStarted(log, "cc-task"); !strings.Contains(line, " task=t-run ") {
		t.Errorf("agent cc-task's session started as %q, want task=t-run:\n%s", line, g.Tail(3000))
	}
}
