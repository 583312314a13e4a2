package e2e

// Real stdio clients spawning mcpgw-bridge: the Inspector CLI and the TypeScript SDK's
// StdioClientTransport. The bridge relays to the daemon over its Unix socket; the
// upstream is the go-sdk conformance everything-server over streamable HTTP.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// bridgeEverythingConfig is a gateway over one streamable HTTP upstream with agent a1.
func bridgeEverythingConfig(upURL string) string {
	return `
log: {level: debug, format: text}
servers:
  everything:
    type: streamable_http
    url: ` + upURL + `
agents:
  a1: {servers: [everything]}
`
}

// TestBridgeInspector: the Inspector CLI spawns `mcpgw-bridge --socket S --agent a1` as
// its stdio server, lists the tools and calls one through the daemon; an unknown agent is
// refused with an error, not a hang.
func TestBridgeInspector(t *testing.T) {
	bridge := bridgeBin(t)
	nodeBin(t, "mcp-inspector")
	up := startEverythingHTTP(t)
	_, sock := startBridgeGateway(t, shortStateDir(t), bridgeEverythingConfig(up))

	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	res := runInspector(t, 90*time.Second, &list, bridge, "--socket", sock, "--agent", "a1", "--method", "tools/list")
	if res.ExitCode != 0 {
		t.Fatalf("inspector tools/list via the bridge: exit %d (timed out %v)\nstdout: %s\nstderr: %s", res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if !strings.HasPrefix(tl.Name, "everything__") || !exposedNameRE.MatchString(tl.Name) {
			t.Errorf("tool %q: want prefix everything__ and %s", tl.Name, exposedNameRE)
		}
		if len(tl.InputSchema) == 0 {
			t.Errorf("tool %q has no inputSchema", tl.Name)
		}
	}
	for _, want := range []string{"everything__test_simple_text", "everything__test_tool_with_progress", "everything__test_error_handling"} {
		if !slices.Contains(names, want) {
			t.Errorf("inspector tools/list via the bridge lacks %s: %v", want, names)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("tools are not sorted by exposed name: %v", names)
	}

	var call struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	res = runInspector(t, 90*time.Second, &call, bridge, "--socket", sock, "--agent", "a1",
		"--method", "tools/call", "--tool-name", "everything__test_simple_text")
	if res.ExitCode != 0 {
		t.Fatalf("inspector tools/call via the bridge: exit %d (timed out %v)\nstdout: %s\nstderr: %s", res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	}
	if call.IsError || len(call.Content) != 1 || call.Content[0].Text != "This is a simple text response for testing." {
		t.Errorf("tools/call everything__test_simple_text via the bridge: %s", res.Stdout)
	}

	// The identity travels with the bridge: an agent the config does not define is refused.
	res = runInspector(t, 90*time.Second, nil, bridge, "--socket", sock, "--agent", "nobody", "--method", "tools/list")
	t.Logf("inspector, unknown agent: exit %d, stdout %s, stderr %s", res.ExitCode, strings.TrimSpace(res.Stdout), lastLine(res.Stderr))
	if res.TimedOut || res.ExitCode == 0 || !strings.Contains(res.Stdout+res.Stderr, "unknown agent") {
		t.Errorf("inspector with an unknown agent: exit %d, timed out %v, want a refusal naming the unknown agent\nstdout: %s\nstderr: %s",
			res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	}
}

// TestBridgeTSClient: the TypeScript SDK's StdioClientTransport spawns the bridge, lists
// and calls tools; the progress notifications of a progress tool arrive, tied to the call;
// closing the client (its stdin) ends the bridge at once.
func TestBridgeTSClient(t *testing.T) {
	bridge := bridgeBin(t)
	node(t)
	up := startEverythingHTTP(t)
	_, sock := startBridgeGateway(t, shortStateDir(t), bridgeEverythingConfig(up))
	// The socket's line mode (the default) and one HTTP exchange per message
	// (--socket-http) must behave the same for the client.
	t.Run("line mode", func(t *testing.T) { bridgeTSClient(t, bridge, "--socket", sock, "--agent", "a1") })
	t.Run("socket-http", func(t *testing.T) { bridgeTSClient(t, bridge, "--socket", sock, "--agent", "a1", "--socket-http") })
}

func bridgeTSClient(t *testing.T, bridge string, bridgeArgs ...string) {

	steps := []Step{
		{"op": "call", "name": "everything__test_simple_text", "args": map[string]any{}},
		{"op": "call", "name": "everything__test_tool_with_progress", "args": map[string]any{}, "progress": true},
		{"op": "call", "name": "everything__test_error_handling", "args": map[string]any{}},
		{"op": "call", "name": "everything__no_such_tool", "args": map[string]any{}},
		{"op": "list"},
		{"op": "ping"},
	}
	b, _ := json.Marshal(steps)
	stepsFile := filepath.Join(t.TempDir(), "steps.json")
	if err := os.WriteFile(stepsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	args := append([]string{"--steps", stepsFile, "--timeout", "60000", "--", bridge}, bridgeArgs...)
	res := runNode(t, 90*time.Second, "js/bridge-client.mjs", args...)
	var rep struct {
		ClientReport
		Pid     int `json:"pid"`
		CloseMs int `json:"closeMs"`
	}
	if err := json.Unmarshal([]byte(lastLine(res.Stdout)), &rep); err != nil {
		t.Fatalf("bridge-client: no JSON report (exit %d, timed out %v): %v\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.TimedOut, err, res.Stdout, res.Stderr)
	}
	t.Logf("TS client over the bridge: %s, server %s, %d tools, notifications %v, close %d ms, bridge pid %d",
		time.Since(start).Round(time.Millisecond), rep.Server, len(rep.Tools), rep.Notifications, rep.CloseMs, rep.Pid)
	if !rep.OK || res.ExitCode != 0 {
		t.Fatalf("TS client over the bridge failed (exit %d): %+v %v\nstderr:\n%s", res.ExitCode, rep.Error, rep.TransportErrors, res.Stderr)
	}
	if len(rep.TransportErrors) > 0 {
		t.Errorf("transport errors: %v", rep.TransportErrors)
	}
	if !slices.Contains(rep.Tools, "everything__test_tool_with_progress") || len(rep.Tools) < 10 {
		t.Errorf("tools: %v", rep.Tools)
	}
	if len(rep.Results) != len(steps) {
		t.Fatalf("%d results for %d steps: %+v", len(rep.Results), len(steps), rep.Results)
	}
	if r := rep.Results[0]; !r.OK || isErrorJSON(r.Result) || !strings.Contains(string(r.Result), "This is a simple text response") {
		t.Errorf("test_simple_text: ok=%v error=%+v result=%s", r.OK, r.Error, r.Result)
	}

	// Progress: 0, 50, 100 of 100, before the result, for this call's token.
	pr := rep.Results[1]
	if !pr.OK || isErrorJSON(pr.Result) {
		t.Errorf("test_tool_with_progress: ok=%v error=%+v result=%s", pr.OK, pr.Error, pr.Result)
	}
	var got []float64
	for _, p := range pr.Progress {
		var n struct {
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
			Message  string  `json:"message"`
		}
		if err := json.Unmarshal(p, &n); err != nil {
			t.Errorf("progress %s: %v", p, err)
			continue
		}
		if n.Total != 100 {
			t.Errorf("progress %s: total %v, want 100", p, n.Total)
		}
		got = append(got, n.Progress)
	}
	if !slices.Equal(got, []float64{0, 50, 100}) {
		t.Errorf("progress notifications through the bridge: %v, want [0 50 100] (raw %s)", got, pr.Progress)
	}
	if r := rep.Results[2]; !r.OK || !isErrorJSON(r.Result) {
		t.Errorf("test_error_handling: want an isError result, got ok=%v error=%+v result=%s", r.OK, r.Error, r.Result)
	}
	if r := rep.Results[3]; r.OK && !isErrorJSON(r.Result) {
		t.Errorf("unknown tool: want an error, got %s", r.Result)
	} else if r.Error != nil && r.Error.Code != -32602 {
		t.Errorf("unknown tool: error %+v, want -32602", r.Error)
	}
	if r := rep.Results[4]; !r.OK {
		t.Errorf("second tools/list: %+v", r.Error)
	}
	if r := rep.Results[5]; !r.OK {
		t.Errorf("ping: %+v", r.Error)
	}

	// StdioClientTransport.close() ends stdin and waits up to 2 s before SIGTERM: a bridge
	// that leaves on EOF is gone well before that.
	if rep.CloseMs >= 2000 {
		t.Errorf("client.close() took %d ms: the bridge did not exit when its stdin closed", rep.CloseMs)
	}
	if rep.Pid > 0 && pidAlive(rep.Pid) {
		t.Errorf("bridge pid %d still alive after the client closed", rep.Pid)
	}
}

// TestBridgeCustomIdentityHeaders: with the identity headers renamed (auth.headers, see
// docs/auth.md), an agent that reaches the daemon through the bridge is still known by its
// --agent (and --task) flags.
func TestBridgeCustomIdentityHeaders(t *testing.T) {
	bridgeBin(t)
	up := startEverythingHTTP(t)
	_, sock := startBridgeGateway(t, shortStateDir(t), `
log: {level: debug, format: text}
auth:
  headers: {agent: X-Who, task: X-Job}
servers:
  everything:
    type: streamable_http
    url: `+up+`
agents:
  a1: {servers: [everything]}
`)
	bc := startBridge(t, "--socket", sock, "--agent", "a1")
	m, err := bc.request("initialize", map[string]any{
		"protocolVersion": bridgeProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpgw-e2e-bridge-driver", "version": "1.0.0"},
	}, 30*time.Second)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if m.Error != nil {
		t.Fatalf("initialize through the bridge with --agent a1 and auth.headers.agent X-Who: %s "+
			"(the bridge sends its identity as X-Agent-ID whatever the daemon's header names are)", m)
	}
	_ = bc.notify("notifications/initialized", nil)
	if names := bc.tools(t); !slices.Contains(names, "everything__test_simple_text") {
		t.Errorf("tools: %v", names)
	}
}
