package e2e

// Upstream and gateway failures with real processes: an upstream killed with SIGKILL in
// the middle of a call (shared over streamable HTTP, then per-session over stdio), and the
// gateway itself killed with SIGKILL, which must take every process it started with it.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// killCallTimeout is the gateway's call timeout in these tests: a call cut by a dead
	// upstream must come back long before it.
	killCallTimeout = 60 * time.Second
	// promptAfterKill bounds how long after the kill the cut call may take to return.
	promptAfterKill = 10 * time.Second
	// longCallSeconds is the slow call's length: 40 steps of one second, with progress.
	longCallSeconds = 40
)

func longCallArgs() map[string]any {
	return map[string]any{"duration": longCallSeconds, "steps": longCallSeconds}
}

// startLongCall starts the slow tool with a progress token and waits for its first
// progress notification, so the call is known to run on the upstream.
func startLongCall(t *testing.T, gc *goClient, tool, token string) <-chan callResult {
	t.Helper()
	for drained := false; !drained; { // progress left over from earlier calls
		select {
		case <-gc.progress:
		default:
			drained = true
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), killCallTimeout+30*time.Second)
	t.Cleanup(cancel)
	ch := gc.callAsync(ctx, tool, longCallArgs(), token)
	select {
	case p := <-gc.progress:
		t.Logf("%s running: progress %v/%v (token %v)", tool, p.Progress, p.Total, p.ProgressToken)
		if p.ProgressToken != token {
			t.Errorf("progress carries token %v, want the client's %q", p.ProgressToken, token)
		}
	case r := <-ch:
		t.Fatalf("%s returned before any progress: err=%v result=%q", tool, r.err, resultText(r.res))
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: no progress within 15 s", tool)
	}
	return ch
}

// expectCutCall waits for a call whose upstream was killed at killedAt: it must end
// promptly with an isError tool result that names server.
func expectCutCall(t *testing.T, ch <-chan callResult, killedAt time.Time, server string) {
	t.Helper()
	select {
	case r := <-ch:
		after := time.Since(killedAt)
		t.Logf("cut call returned %s after the kill: err=%v isError=%v text=%q",
			after.Round(time.Millisecond), r.err, r.res != nil && r.res.IsError, resultText(r.res))
		if r.err != nil {
			t.Errorf("cut call: JSON-RPC/transport error %v; want a tool result with isError naming %q", r.err, server)
			return
		}
		if !r.res.IsError {
			t.Errorf("cut call: isError false, text %q", resultText(r.res))
		}
		if txt := resultText(r.res); !strings.Contains(txt, `"`+server+`"`) && !strings.Contains(txt, "upstream "+server) {
			t.Errorf("cut call: error text %q does not name upstream %q", txt, server)
		}
		if after > promptAfterKill {
			t.Errorf("cut call took %s after the kill (call timeout %s); want under %s", after, killCallTimeout, promptAfterKill)
		}
	case <-time.After(promptAfterKill + 5*time.Second):
		t.Errorf("cut call did not return within %s of the kill", promptAfterKill+5*time.Second)
	}
}

func hasPrefixed(names []string, prefix string) int {
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, prefix) {
			n++
		}
	}
	return n
}

// TestUpstreamKilledMidCall: SIGKILL to an upstream while a call runs on it.
func TestUpstreamKilledMidCall(t *testing.T) {
	needGatewayBin(t)
	t.Run("shared-streamable-http", testSharedUpstreamKilled)
	t.Run("per-session-stdio", testPerSessionUpstreamKilled)
}

// testSharedUpstreamKilled: the npm server-everything over streamable HTTP (shared),
// killed mid-call, then restarted on the same port.
func testSharedUpstreamKilled(t *testing.T) {
	up, port := startServerEverythingNodeProc(t, "streamableHttp")
	upURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
upstream: {call_timeout: `+killCallTimeout.String()+`}
servers:
  ev:
    type: streamable_http
    url: `+upURL+`
`)
	gc := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL})
	tools := gc.toolNames(t) // a session is told list_changed only once it has listed
	nTools := hasPrefixed(tools, "ev__")
	if !slices.Contains(tools, "ev__trigger-long-running-operation") || !slices.Contains(tools, "ev__echo") {
		t.Fatalf("tools: %v", tools)
	}

	ch := startLongCall(t, gc, "ev__trigger-long-running-operation", "shared-kill")
	killedAt := time.Now()
	up.Kill9()
	t.Logf("killed the upstream (pid %d)", up.Pid)
	expectCutCall(t, ch, killedAt, "ev")

	// Health says down; its tools stay listed from its last catalogue (the design's
	// errors table: an upstream down is a tool result naming it, not an unknown tool).
	var (
		down  bool
		state string
	)
	waitFor(15*time.Second, func() (bool, string) {
		if u, err := upstreamState(g, "ev"); err == nil {
			down = u.State != "up" && u.State != "starting"
			state = fmt.Sprintf("%+v", u)
		} else {
			state = err.Error()
		}
		return down, ""
	})
	if !down {
		t.Errorf("/readyz still shows the dead upstream as up 15 s after the kill: %s", state)
	} else {
		t.Logf("/readyz after the kill: %s", state)
	}
	if names, err := gc.tryToolNames(); err != nil || hasPrefixed(names, "ev__") != nTools {
		t.Errorf("tools/list while ev is down: %d ev__ tools (err %v), want its %d kept from its last catalogue", hasPrefixed(names, "ev__"), err, nTools)
	}
	{
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "ev__echo", Arguments: map[string]any{"message": "down"}})
		cancel()
		if err != nil || !res.IsError || !strings.Contains(resultText(res), `"ev"`) || !strings.Contains(resultText(res), "down") {
			t.Errorf("a call while ev is down: err=%v result=%q; want an isError result naming ev and saying it is down", err, resultText(res))
		} else {
			t.Logf("a call while ev is down: %q", resultText(res))
		}
	}
	if m, err := getMetrics(g); err == nil {
		if v, ok := metricValue(m, "mcpgw_upstream_up", map[string]string{"server": "ev"}); !ok || v != 0 {
			t.Errorf("mcpgw_upstream_up{server=ev} = %v (present %v), want 0 while down", v, ok)
		}
		if v, ok := metricValue(m, "mcpgw_tool_calls_total", map[string]string{"server": "ev", "outcome": "unavailable"}); !ok || v < 1 {
			t.Errorf("mcpgw_tool_calls_total{server=ev,outcome=unavailable} = %v (present %v), want >= 1", v, ok)
		}
	} else {
		t.Errorf("metrics: %v", err)
	}

	// Back on the same port: within a bounded time calls work again.
	if _, err := startServerEverythingNodeAt(t, "streamableHttp", port); err != nil {
		t.Fatalf("restart the upstream on port %d: %v", port, err)
	}
	restartedAt := time.Now()
	const recoverWithin = 45 * time.Second
	desc, ok := waitFor(recoverWithin, func() (bool, string) {
		u, err := upstreamState(g, "ev")
		return err == nil && u.State == "up", fmt.Sprintf("%+v %v", u, err)
	})
	if !ok {
		t.Fatalf("upstream not up again %s after its restart: %s", recoverWithin, desc)
	}
	t.Logf("upstream up again %s after its restart: %s", time.Since(restartedAt).Round(time.Millisecond), desc)
	names, err := gc.tryToolNames()
	if err != nil {
		t.Fatalf("tools/list after recovery: %v", err)
	}
	if n := hasPrefixed(names, "ev__"); n != nTools {
		t.Errorf("after recovery tools/list has %d ev__ tools, want %d", n, nTools)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "ev__echo", Arguments: map[string]any{"message": "back"}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "Echo: back") {
		t.Errorf("call after recovery: err=%v result=%q", err, resultText(res))
	}
	if u, err := upstreamState(g, "ev"); err == nil && u.Restarts < 1 {
		t.Errorf("/readyz restarts = %d after a restart", u.Restarts)
	}
}

// guardedInstances finds the upstream processes the gateway runs under its guardian
// (`mcpgw __mcpgw_child ...`) whose command line contains match.
func guardedInstances(gatewayPid int, match string) (instances []procInfo, all []procInfo) {
	all = descendants(gatewayPid)
	byPid := map[int]procInfo{}
	for _, p := range all {
		byPid[p.Pid] = p
	}
	for _, p := range all {
		parent, ok := byPid[p.PPid]
		if ok && strings.Contains(parent.Cmdline, "__mcpgw_child") && !strings.Contains(p.Cmdline, "__mcpgw_child") &&
			strings.Contains(p.Cmdline, match) && p.State != "Z" {
			instances = append(instances, p)
		}
	}
	return instances, all
}

// testPerSessionUpstreamKilled: the session's own stdio instance of the npm
// server-everything (under the guardian) is killed mid-call; a later call starts a new one.
func testPerSessionUpstreamKilled(t *testing.T) {
	script := serverEverythingScript(t)
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
upstream: {call_timeout: `+killCallTimeout.String()+`}
servers:
  ev:
    type: stdio
    command: {{node}}
    args: [`+yamlQuote(script)+`]
`)
	gc := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL})
	gc.toolNames(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "ev__echo", Arguments: map[string]any{"message": "first"}})
	if err != nil || res.IsError {
		t.Fatalf("first call: %v %q", err, resultText(res))
	}
	var inst []procInfo
	desc, ok := waitFor(5*time.Second, func() (bool, string) {
		var all []procInfo
		inst, all = guardedInstances(g.Pid, "server-everything")
		return len(inst) == 1, describeProcs(all)
	})
	if !ok {
		t.Fatalf("want exactly one guarded server-everything under the gateway, process tree:%s", desc)
	}
	victim := inst[0]
	t.Logf("session instance: pid %d (guardian %d)", victim.Pid, victim.PPid)

	ch := startLongCall(t, gc, "ev__trigger-long-running-operation", "session-kill")
	killedAt := time.Now()
	if err := syscall.Kill(victim.Pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", victim.Pid, err)
	}
	expectCutCall(t, ch, killedAt, "ev")

	// A later call works again, on a new instance (at most 20 tries within 30 s).
	var last string
	worked := false
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < 20 && !worked && time.Now().Before(deadline); i++ {
		cctx, ccancel := context.WithDeadline(context.Background(), deadline)
		res, err := gc.CallTool(cctx, &mcp.CallToolParams{Name: "ev__echo", Arguments: map[string]any{"message": "again"}})
		ccancel()
		switch {
		case err != nil:
			last = err.Error()
		case res.IsError || !strings.Contains(resultText(res), "Echo: again"):
			last = resultText(res)
		default:
			worked = true
		}
		if !worked {
			time.Sleep(250 * time.Millisecond)
		}
	}
	if !worked {
		t.Fatalf("no call worked after the instance was killed; last: %s", last)
	}
	if pidAlive(victim.Pid) {
		t.Errorf("killed instance %d still alive", victim.Pid)
	}
	inst, all := guardedInstances(g.Pid, "server-everything")
	if len(inst) != 1 || inst[0].Pid == victim.Pid {
		t.Errorf("want one new instance after the restart, process tree:%s", describeProcs(all))
	}
	t.Logf("tools/list_changed notifications seen by the session: %d", gc.listChanged.Load())
}

// TestGatewayKill9LeavesNoChildren: kill -9 of the gateway takes its upstreams with it:
// a per-session stdio instance (node, under the guardian), a shared stdio one, and a
// per-session one one level deeper (sh, which does not exec, running everything-server).
func TestGatewayKill9LeavesNoChildren(t *testing.T) {
	needGatewayBin(t)
	everything := serverEverythingScript(t)
	memory := npmServerScript(t, "server-memory")
	memFile := t.TempDir() + "/memory.jsonl"
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
servers:
  ev:
    type: stdio
    command: {{node}}
    args: [`+yamlQuote(everything)+`]
  mem:
    type: stdio
    mode: shared
    stdio_proxy: true
    command: {{node}}
    args: [`+yamlQuote(memory)+`]
    env: {MEMORY_FILE_PATH: `+yamlQuote(memFile)+`}
  deep:
    type: stdio
    command: sh
    args: ["-c", "'{{everything_server}}'; exit $?"]
`)
	var recorded []int
	killPidsAtCleanup(t, func() []int { return recorded })

	gc := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{"ev__echo", "mem__read_graph", "deep__test_simple_text"} {
		args := map[string]any{}
		if name == "ev__echo" {
			args["message"] = "start the instance"
		}
		res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %q", name, err, resultText(res))
		}
	}
	var tree []procInfo
	desc, ok := waitFor(5*time.Second, func() (bool, string) {
		tree = descendants(g.Pid)
		inst, _ := guardedInstances(g.Pid, "server-everything")
		mem, _ := guardedInstances(g.Pid, "server-memory")
		deep := 0
		for _, p := range tree {
			if strings.HasSuffix(p.Cmdline, "/everything-server") && p.State != "Z" {
				deep++
			}
		}
		return len(inst) == 1 && len(mem) == 1 && deep == 1, describeProcs(tree)
	})
	if !ok {
		t.Fatalf("want one guarded server-everything, one server-memory and one everything-server under sh under the gateway; tree:%s", desc)
	}
	for _, p := range tree {
		recorded = append(recorded, p.Pid)
	}
	t.Logf("gateway %d descendants:%s", g.Pid, describeProcs(tree))

	g.Kill9()
	desc, ok = waitFor(5*time.Second, func() (bool, string) {
		var alive []procInfo
		for _, pid := range recorded {
			if pidAlive(pid) {
				p, _ := readProc(pid)
				alive = append(alive, p)
			}
		}
		return len(alive) == 0, describeProcs(alive)
	})
	if !ok {
		t.Errorf("5 s after kill -9 of the gateway these descendants are still alive:%s", desc)
	}
}

// TestUpstreamSessionLost: the upstream forgets the gateway's session while both stay up
// (here the test ends it with DELETE, as a restart behind the gateway's back would). The
// npm server-everything then answers 400 with a JSON-RPC error without an id (see
// PEERS.md: 400, not 404, for an unknown session). A call must not hang until the call
// timeout, and within a bounded time the gateway must have a working session again.
func TestUpstreamSessionLost(t *testing.T) {
	needGatewayBin(t)
	up, port := startServerEverythingNodeProc(t, "streamableHttp")
	upURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	const callTimeout = 6 * time.Second
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
upstream: {call_timeout: `+callTimeout.String()+`}
servers:
  ev:
    type: streamable_http
    url: `+upURL+`
`)
	// The upstream logs each session it creates; the gateway's shared connection is the only one.
	sid := ""
	for _, line := range strings.Split(up.Log(), "\n") {
		if _, rest, ok := strings.Cut(line, "Session initialized with ID: "); ok {
			sid = strings.TrimSpace(rest)
		}
	}
	if sid == "" {
		t.Fatalf("no session id in the upstream's log:\n%s", up.Tail(2000))
	}
	req, _ := http.NewRequest(http.MethodDelete, upURL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := probeClient.Do(req)
	if err != nil {
		t.Fatalf("DELETE the gateway's upstream session: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE the gateway's upstream session: HTTP %d", resp.StatusCode)
	}
	t.Logf("ended the gateway's upstream session %s", sid)

	gc := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL})
	gc.toolNames(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout+10*time.Second)
	defer cancel()
	res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "ev__echo", Arguments: map[string]any{"message": "after"}})
	took := time.Since(start)
	t.Logf("first call after the session loss: %s, err=%v text=%q", took.Round(time.Millisecond), err, resultText(res))
	if err == nil && !res.IsError && !strings.Contains(resultText(res), "Echo: after") {
		t.Errorf("first call: unexpected result %q", resultText(res))
	}
	if err == nil && res.IsError && !strings.Contains(resultText(res), `"ev"`) {
		t.Errorf("first call: isError %q does not name the upstream", resultText(res))
	}
	if took >= callTimeout-time.Second {
		t.Errorf("first call after the upstream lost the session took %s (call timeout %s): the upstream's 400 answer was not taken as an answer", took.Round(time.Millisecond), callTimeout)
	}
	// Recovery: a call works again within a bounded time.
	const recoverWithin = 15 * time.Second
	desc, ok := waitFor(recoverWithin, func() (bool, string) {
		cctx, ccancel := context.WithTimeout(context.Background(), callTimeout+2*time.Second)
		defer ccancel()
		res, err := gc.CallTool(cctx, &mcp.CallToolParams{Name: "ev__echo", Arguments: map[string]any{"message": "again"}})
		if err != nil {
			return false, err.Error()
		}
		return !res.IsError && strings.Contains(resultText(res), "Echo: again"), resultText(res)
	})
	if !ok {
		st, _ := upstreamState(g, "ev")
		t.Errorf("no call worked within %s after the upstream lost the gateway's session; last: %s; readyz: %+v", recoverWithin, desc, st)
	}
}
