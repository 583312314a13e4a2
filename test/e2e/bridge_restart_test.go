package e2e

// The bridge hides daemon restarts from a long-lived stdio client (docs/clients/bridge.md):
// the Go test is the client, driving the bridge's stdin/stdout, and never re-initializes.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// wipeStateDir removes everything in dir (the daemon's state: sessions, audit, socket).
func wipeStateDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBridgeDaemonRestart: a client stays connected through one bridge while the daemon
// is killed (SIGKILL) and started again:
//  1. a call in flight when the daemon dies gets a JSON-RPC error at once (not a hang);
//  2. the daemon comes back on the same state dir: the next call works, and the bridge
//     resumed the same session (no initialize replayed);
//  3. the daemon comes back with an empty state dir (session lost): the next call works,
//     the bridge replayed the client's initialize;
//  4. a call sent while the daemon is down waits for it and then succeeds;
//  5. a daemon that stays away: after --reconnect-for the call gets a JSON-RPC error.
func TestBridgeDaemonRestart(t *testing.T) {
	bridgeBin(t)
	upURL := startServerEverythingNode(t, "streamableHttp")
	state := shortStateDir(t)
	cfg := `
log: {level: debug, format: text}
upstream: {call_timeout: 90s}
servers:
  ev:
    type: streamable_http
    url: ` + upURL + `
`
	g, sock := startBridgeGateway(t, state, cfg)
	bc := startBridge(t, "--socket", sock, "--agent", "a1", "--reconnect-for", "60s")
	bc.initialize(t)
	// A second client whose bridge gives up quickly (step 5).
	quick := startBridge(t, "--socket", sock, "--agent", "a2", "--reconnect-for", "2s")
	quick.Name = "mcpgw-bridge-quick"
	quick.initialize(t)
	names := bc.tools(t)
	for _, want := range []string{"ev__echo", "ev__trigger-long-running-operation"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools lack %s: %v", want, names)
		}
	}
	echo := func(label string, timeout time.Duration) {
		t.Helper()
		start := time.Now()
		text, err := bc.callTool("ev__echo", map[string]any{"message": label}, timeout)
		if err != nil {
			t.Fatalf("%s: ev__echo: %v", label, err)
		}
		if text != "Echo: "+label {
			t.Errorf("%s: ev__echo answered %q", label, text)
		}
		t.Logf("%s: echo answered in %s", label, time.Since(start).Round(time.Millisecond))
	}
	echo("before any restart", 30*time.Second)

	// 1. A call in flight when the daemon dies.
	id, ch, err := bc.send("tools/call", toolCallParams("ev__trigger-long-running-operation",
		map[string]any{"duration": 60, "steps": 60}, "in-flight"))
	if err != nil {
		t.Fatal(err)
	}
	if !bc.waitNotification(20*time.Second, func(m brMsg) bool {
		return m.Method == "notifications/progress" && strings.Contains(string(m.Params), `"in-flight"`)
	}) {
		t.Fatalf("the long call never reported progress through the bridge: %v", bc.notifications())
	}
	killedAt := time.Now()
	g.Kill9()
	m, err := bc.wait(ch, 15*time.Second)
	if err != nil {
		t.Fatalf("the call in flight when the daemon died: %v (the bridge must answer with a JSON-RPC error)", err)
	}
	t.Logf("in-flight call answered %s after SIGKILL: %s", time.Since(killedAt).Round(time.Millisecond), m)
	if m.Error == nil {
		t.Errorf("the call in flight when the daemon died: want a JSON-RPC error, got %s", m)
	}

	// 2. Back on the same state dir: the session survives, the bridge resumes it.
	g, _ = startBridgeGateway(t, state, cfg)
	echo("after a restart on the same state", 60*time.Second)
	if got := bc.tools(t); !slices.Equal(got, names) {
		t.Errorf("tools after the restart differ:\n before %v\n after  %v", names, got)
	}
	if strings.Contains(bc.log(), "gateway session replaced") {
		t.Errorf("the daemon kept its state, yet the bridge replayed initialize (the session did not survive the restart; DESIGN §7)")
	}

	// 3. Back with an empty state dir: the session is lost, the bridge replays initialize.
	g.Kill9()
	wipeStateDir(t, state)
	g, _ = startBridgeGateway(t, state, cfg)
	echo("after a restart that lost the session", 60*time.Second)
	if n := strings.Count(bc.log(), "gateway session replaced"); n != 1 {
		t.Errorf("after the daemon lost the session the bridge replayed initialize %d times, want 1", n)
	}
	if got := bc.tools(t); !slices.Equal(got, names) {
		t.Errorf("tools after the session loss differ:\n before %v\n after  %v", names, got)
	}

	// 4. A call sent while the daemon is down waits for it.
	g.Kill9()
	wipeStateDir(t, state)
	_, waiting, err := bc.send("tools/call", toolCallParams("ev__echo", map[string]any{"message": "sent while down"}, ""))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-waiting:
		t.Fatalf("a call sent while the daemon is down was answered before it came back: %s", m)
	case <-time.After(time.Second):
	}
	downFor := time.Now()
	g, _ = startBridgeGateway(t, state, cfg)
	m, err = bc.wait(waiting, 60*time.Second)
	if err != nil {
		t.Fatalf("the call sent while the daemon was down: %v", err)
	}
	if text, err := callText(m); err != nil || text != "Echo: sent while down" {
		t.Errorf("the call sent while the daemon was down: %q, %v", text, err)
	}
	t.Logf("call sent while down answered %s after the daemon's start began", time.Since(downFor).Round(time.Millisecond))
	echo("after the last restart", 30*time.Second)
	if n := strings.Count(bc.log(), "gateway session replaced"); n != 2 {
		t.Errorf("after the second session loss the bridge replayed initialize %d times in all, want 2", n)
	}

	// 5. The daemon does not come back: after --reconnect-for the call gets a clear error.
	if _, err := quick.callTool("ev__echo", map[string]any{"message": "quick"}, 30*time.Second); err != nil {
		t.Fatalf("quick bridge before the last kill: %v", err)
	}
	g.Kill9()
	start := time.Now()
	m, err = quick.request("tools/call", toolCallParams("ev__echo", map[string]any{"message": "never"}, ""), 15*time.Second)
	if err != nil {
		t.Fatalf("a call while the daemon stays away, --reconnect-for 2s: %v", err)
	}
	t.Logf("--reconnect-for 2s: answered after %s: %s", time.Since(start).Round(time.Millisecond), m)
	if m.Error == nil {
		t.Errorf("a call while the daemon stays away: want a JSON-RPC error, got %s", m)
	}
	if el := time.Since(start); el < 1500*time.Millisecond {
		t.Errorf("the bridge gave up after %s, before --reconnect-for 2s", el)
	}
	for _, p := range quick.protocolProblems() {
		t.Errorf("quick bridge output: %s", p)
	}

	if n := bc.answerCount(id); n != 1 {
		t.Errorf("the in-flight call (id %s) was answered %d times, want 1", id, n)
	}
	for _, p := range bc.protocolProblems() {
		t.Errorf("bridge output: %s", p)
	}
}
