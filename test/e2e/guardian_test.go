package e2e

// The guardian of stdio upstreams (`mcpgw __mcpgw_child`) against upstreams that leave
// their process group: a shell that starts `setsid sleep`-style helpers (directly, or
// after a double fork) and then execs the npm server-everything. Whatever happens to the
// gateway or the session (kill -9 of the gateway, DELETE of the session, the session
// ending while its instance is still starting, the start-up probe instance closing), no
// process started for an upstream may outlive what it was started for.
//
// Every upstream process carries MCPGW_E2E_MARK in its environment (the server's env in
// the config), so the tests find all of them, also those that left the gateway's tree,
// and kill survivors by pid at cleanup.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	guardMarkEnv = "MCPGW_E2E_MARK"
	// guardGoneWithin bounds how long after the event every upstream process must be gone.
	guardGoneWithin = 5 * time.Second
)

// guardUpstreamScript runs as `sh FILE`: it may sleep first ($START_DELAY, for an
// instance that is slow to start), starts a helper that leaves the process group and
// session ($LEAF_MODE setsid or double-fork) and writes its pid to $D/leaf-PID, then
// execs the npm server-everything.
const guardUpstreamScript = `
if [ -n "$START_DELAY" ]; then sleep "$START_DELAY"; fi
leaf='echo $$ > "$D/.leaf-$$" && mv "$D/.leaf-$$" "$D/leaf-$$"; exec sleep 600'
case "$LEAF_MODE" in
setsid) setsid sh -c "$leaf" & ;;
double-fork) ( setsid sh -c "$leaf" & ) ;;
esac
exec "$NODE" "$EVERYTHING"
`

// guardEnv is one upstream's test environment: pid files in Dir, processes marked Mark.
type guardEnv struct {
	Dir, Mark string
}

func newGuardEnv(t *testing.T) *guardEnv {
	t.Helper()
	e := &guardEnv{Dir: t.TempDir(), Mark: fmt.Sprintf("guard-%d-%d", os.Getpid(), time.Now().UnixNano())}
	// Kill every marked process still alive when the test ends (by pid, in bounded
	// rounds: a dying shell may have started one more).
	t.Cleanup(func() {
		for round := 0; round < 20; round++ {
			left := markedUpstreamProcs(e.Mark, "")
			if len(left) == 0 {
				return
			}
			for _, p := range left {
				_ = syscall.Kill(p.Pid, syscall.SIGKILL)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	return e
}

// serverYAML is a per-session stdio server entry that runs guardUpstreamScript.
func (e *guardEnv) serverYAML(t *testing.T, name, leafMode, startDelay string) string {
	t.Helper()
	script := filepath.Join(e.Dir, "upstream.sh")
	if err := os.WriteFile(script, []byte(guardUpstreamScript), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"D": e.Dir, guardMarkEnv: e.Mark, "MCPGW_E2E_SERVER": name, "LEAF_MODE": leafMode,
		"START_DELAY": startDelay, "NODE": node(t), "EVERYTHING": serverEverythingScript(t),
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n    type: stdio\n    command: sh\n    args: [%s]\n    env:\n", name, yamlQuote(script))
	for _, k := range []string{"D", guardMarkEnv, "MCPGW_E2E_SERVER", "LEAF_MODE", "START_DELAY", "NODE", "EVERYTHING"} {
		fmt.Fprintf(&b, "      %s: %s\n", k, yamlQuote(env[k]))
	}
	return b.String()
}

// markedUpstreamProcs lists live processes whose environment holds mark (and, unless
// server is "", MCPGW_E2E_SERVER=server): the guardians, upstreams and their helpers.
func markedUpstreamProcs(mark, server string) []procInfo {
	want := []byte(guardMarkEnv + "=" + mark + "\x00")
	var srv []byte
	if server != "" {
		srv = []byte("MCPGW_E2E_SERVER=" + server + "\x00")
	}
	var out []procInfo
	for _, p := range allProcs() {
		if p.State == "Z" || p.State == "X" {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.Pid))
		if err != nil || !bytes.Contains(env, want) || (srv != nil && !bytes.Contains(env, srv)) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// leafPids lists the pids in $D/leaf-* (helpers started so far, alive or not).
func (e *guardEnv) leafPids() map[int]bool {
	out := map[int]bool{}
	ents, _ := os.ReadDir(e.Dir)
	for _, en := range ents {
		if rest, ok := strings.CutPrefix(en.Name(), "leaf-"); ok {
			if pid, err := strconv.Atoi(rest); err == nil {
				out[pid] = true
			}
		}
	}
	return out
}

// newLeaf waits (bounded) for a helper not in before and returns its pid.
func (e *guardEnv) newLeaf(t *testing.T, before map[int]bool) int {
	t.Helper()
	var pid int
	_, ok := waitFor(15*time.Second, func() (bool, string) {
		for p := range e.leafPids() {
			if !before[p] && pidAlive(p) {
				pid = p
				return true, ""
			}
		}
		return false, ""
	})
	if !ok {
		t.Fatalf("no new setsid'd helper within 15 s (pid files in %s)", e.Dir)
	}
	return pid
}

// expectNoMarked waits up to within for no marked process (of server, "" for all) to be
// alive; it reports survivors as errors.
func (e *guardEnv) expectNoMarked(t *testing.T, server string, within time.Duration, after string) bool {
	t.Helper()
	var left []procInfo
	_, ok := waitFor(within, func() (bool, string) {
		left = markedUpstreamProcs(e.Mark, server)
		return len(left) == 0, ""
	})
	if !ok {
		t.Errorf("%s after %s, %d upstream processes are still alive:%s", within, after, len(left), describeProcs(left))
	}
	return ok
}

func processSession(pid int) int {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	if errno != 0 {
		return -1
	}
	return int(sid)
}

// startEscapingSession connects a client and makes one call, which starts the session's
// own instance; it returns the client and the pid of that instance's escaped helper.
func startEscapingSession(t *testing.T, g *Gateway, e *guardEnv, server string) (*goClient, int) {
	t.Helper()
	before := e.leafPids()
	gc := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: server + "__echo", Arguments: map[string]any{"message": "start"}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "Echo: start") {
		t.Fatalf("%s__echo: %v %q", server, err, resultText(res))
	}
	leaf := e.newLeaf(t, before)
	if s := processSession(leaf); s == processSession(g.Pid) || s < 0 {
		t.Fatalf("helper %d is in session %d, want one of its own (gateway's: %d)", leaf, s, processSession(g.Pid))
	}
	return gc, leaf
}

// endSession ends a client's session with DELETE /mcp, as a client that is done does.
func endSession(t *testing.T, g *Gateway, gc *goClient) {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, g.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", gc.ID())
	req.Header.Set("Mcp-Protocol-Version", gc.InitializeResult().ProtocolVersion)
	resp, err := probeClient.Do(req)
	if err != nil {
		t.Fatalf("DELETE session: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE session: HTTP %d", resp.StatusCode)
	}
}

// waitUp waits until /readyz shows server up (its probe instance listed the tools).
func waitUp(t *testing.T, g *Gateway, server string) {
	t.Helper()
	desc, ok := waitFor(readyTimeout, func() (bool, string) {
		u, err := upstreamState(g, server)
		return err == nil && u.State == "up", fmt.Sprintf("%+v %v", u, err)
	})
	if !ok {
		t.Fatalf("%s not up: %s", server, desc)
	}
}

// anyAlive reports whether any of pids is still a running process.
func anyAlive(pids []int) bool {
	for _, pid := range pids {
		if pidAlive(pid) {
			return true
		}
	}
	return false
}

var guardLeafModes = []string{"setsid", "double-fork"}

// TestGuardianKill9 kills the gateway with SIGKILL while a session's instance runs, its
// helper in a session of its own: the helper and every other upstream process must be
// gone within 5 s.
func TestGuardianKill9(t *testing.T) {
	needGatewayBin(t)
	for _, mode := range guardLeafModes {
		t.Run(mode, func(t *testing.T) {
			e := newGuardEnv(t)
			g := startGatewayChecked(t, "log: {level: debug, format: text}\nservers:\n"+e.serverYAML(t, "ev", mode, ""))
			var recorded []int
			killPidsAtCleanup(t, func() []int { return recorded })
			waitUp(t, g, "ev")
			_, leaf := startEscapingSession(t, g, e, "ev")
			seen := map[int]bool{}
			for _, p := range append(descendants(g.Pid), markedUpstreamProcs(e.Mark, "")...) {
				if !seen[p.Pid] {
					seen[p.Pid] = true
					recorded = append(recorded, p.Pid)
				}
			}
			if !seen[leaf] {
				recorded = append(recorded, leaf)
			}
			t.Logf("helper %d (session %d); gateway %d descendants:%s marked:%s", leaf, processSession(leaf), g.Pid, describeProcs(descendants(g.Pid)), describeProcs(markedUpstreamProcs(e.Mark, "")))

			g.Kill9()
			killed := time.Now()
			if _, ok := waitFor(guardGoneWithin, func() (bool, string) { return !pidAlive(leaf), "" }); !ok {
				t.Errorf("the setsid'd helper %d outlived kill -9 of the gateway by %s", leaf, guardGoneWithin)
			}
			e.expectNoMarked(t, "", time.Second, "kill -9 of the gateway (and the wait for the helper)")
			// The guardian itself goes last, after its tree: on a busy machine its exit
			// (a many-threaded Go process) may still be under way here. It has what is
			// left of the same 5 s, counted from the kill.
			waitFor(time.Until(killed.Add(guardGoneWithin)), func() (bool, string) { return !anyAlive(recorded), "" })
			for _, pid := range recorded {
				if pidAlive(pid) {
					p, _ := readProc(pid)
					t.Errorf("process %d outlived kill -9 of the gateway:%s", pid, describeProcs([]procInfo{p}))
				}
			}
		})
	}
}

// TestGuardianSessionEnd ends the session with DELETE /mcp: its instance's helper in a
// session of its own goes with it, and the gateway lives on.
func TestGuardianSessionEnd(t *testing.T) {
	needGatewayBin(t)
	for _, mode := range guardLeafModes {
		t.Run(mode, func(t *testing.T) {
			e := newGuardEnv(t)
			g := startGatewayChecked(t, "log: {level: debug, format: text}\nservers:\n"+e.serverYAML(t, "ev", mode, ""))
			waitUp(t, g, "ev")
			gc, leaf := startEscapingSession(t, g, e, "ev")
			endSession(t, g, gc)
			if _, ok := waitFor(guardGoneWithin, func() (bool, string) { return !pidAlive(leaf), "" }); !ok {
				t.Errorf("the setsid'd helper %d outlived its session by %s", leaf, guardGoneWithin)
			}
			e.expectNoMarked(t, "", time.Second, "the session's end")
			if g.Exited() {
				t.Fatalf("the gateway exited")
			}
		})
	}
}

// TestGuardianNoLeftoverInstances counts the upstream processes over a gateway's normal
// life: none once the start-up probe has listed the tools (the probe instance and its
// helper are gone), one set per session while sessions call, and none again once every
// session has ended, also a session that ended while its instance was still starting.
func TestGuardianNoLeftoverInstances(t *testing.T) {
	needGatewayBin(t)
	e := newGuardEnv(t)
	g := startGatewayChecked(t, "log: {level: debug, format: text}\nservers:\n"+
		e.serverYAML(t, "ev", "setsid", "")+e.serverYAML(t, "slow", "setsid", "2"))
	waitUp(t, g, "ev")
	waitUp(t, g, "slow")

	// The probe instances listed the tools and were closed: nothing of theirs is left.
	e.expectNoMarked(t, "", guardGoneWithin, "the start-up probes listed the tools")

	// Three sessions, each with its own instance of ev, each called a few times.
	const sessions = 3
	var clients []*goClient
	for i := 0; i < sessions; i++ {
		gc, _ := startEscapingSession(t, g, e, "ev")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		for j := 0; j < 3; j++ {
			msg := fmt.Sprintf("s%d-%d", i, j)
			res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "ev__echo", Arguments: map[string]any{"message": msg}})
			if err != nil || res.IsError || !strings.Contains(resultText(res), "Echo: "+msg) {
				t.Errorf("call %s: %v %q", msg, err, resultText(res))
			}
		}
		cancel()
		clients = append(clients, gc)
	}
	desc, ok := waitFor(guardGoneWithin, func() (bool, string) {
		inst, all := guardedInstances(g.Pid, "server-everything")
		return len(inst) == sessions, describeProcs(all)
	})
	if !ok {
		t.Errorf("want %d guarded instances of ev with %d sessions; gateway's tree:%s", sessions, sessions, desc)
	}
	// Per session: the guardian, node (the shell exec'd it) and the helper.
	if n := len(markedUpstreamProcs(e.Mark, "ev")); n != 3*sessions {
		t.Errorf("%d upstream processes for ev with %d sessions, want %d:%s", n, sessions, 3*sessions,
			describeProcs(markedUpstreamProcs(e.Mark, "ev")))
	}

	// A session that ends while its first call is still starting its instance of slow.
	slowClient := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL})
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	call := slowClient.callAsync(cctx, "slow__echo", map[string]any{"message": "too late"}, "")
	if desc, ok := waitFor(10*time.Second, func() (bool, string) {
		ps := markedUpstreamProcs(e.Mark, "slow")
		return len(ps) > 0, describeProcs(ps)
	}); !ok {
		t.Fatalf("the slow instance did not start: %s", desc)
	}
	endSession(t, g, slowClient)
	select {
	case r := <-call:
		t.Logf("the call on the ended session: err=%v result=%q", r.err, resultText(r.res))
	case <-time.After(30 * time.Second):
		t.Errorf("the call on the ended session did not return within 30 s")
	}
	// The instance comes up after its session ended (START_DELAY 2 s): it must be stopped.
	e.expectNoMarked(t, "slow", 2*time.Second+guardGoneWithin, "the session that was starting slow ended")

	for _, gc := range clients {
		endSession(t, g, gc)
	}
	e.expectNoMarked(t, "", guardGoneWithin, "every session ended")
	// The gateway's own tree is empty too (a zombie counts as gone: the gateway reaps a
	// guardian once the upstream's pipes have closed).
	desc, ok = waitFor(guardGoneWithin, func() (bool, string) {
		var live []procInfo
		for _, p := range descendants(g.Pid) {
			if p.State != "Z" && p.State != "X" {
				live = append(live, p)
			}
		}
		return len(live) == 0, describeProcs(live)
	})
	if !ok {
		t.Errorf("with no sessions the gateway still has descendants:%s", desc)
	}
}
