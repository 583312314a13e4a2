//go:build unix

package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// The tests here run the everything-server over stdio behind a shell that writes its pid
// to <dir>/pids and then becomes the server (exec): every instance the gateway starts is
// one line, and the pid is the server's own, so a test can tell instances apart, kill one,
// and check that one is gone.
func pidConfig(t *testing.T, server string) (yaml, dir string) {
	t.Helper()
	dir = t.TempDir()
	yaml = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
servers:
  ev:
    type: stdio
    command: sh
    args: ["-c", "echo $$ >> \"$1/pids\"; exec \"$0\"", "` + gatewaytest.EverythingBin() + `", "` + dir + `"]
` + server
	return yaml, dir
}

// pids are the pids of every instance started so far, oldest first.
func pids(t *testing.T, dir string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "pids"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []int
	for _, l := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("pids file: %v", err)
		}
		out = append(out, n)
	}
	return out
}

// alive reports whether a process with the pid runs (a zombie counts as gone: the gateway
// reaps its children, so one is only seen for a moment).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

func alivePids(t *testing.T, dir string) []int {
	var out []int
	for _, p := range pids(t, dir) {
		if alive(p) {
			out = append(out, p)
		}
	}
	return out
}

// killAll stops every instance a test started that is still running (cleanup on failure;
// the gateway stops them itself when it closes).
func killAll(t *testing.T, dir string) {
	t.Cleanup(func() {
		for _, p := range alivePids(t, dir) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
}

func poolStats(g *gatewaytest.GW, server string) registry.PoolStats { return g.Reg.Pools()[server] }

// callOK calls ev's test_simple_text tool and fails the test unless it answers.
func callOK(t *testing.T, g *gatewaytest.GW, sid string, id int, agent ...string) {
	t.Helper()
	h := gatewaytest.SessionHeaders(sid, "2025-11-25")
	if len(agent) > 0 {
		h["X-Agent-Id"] = agent[0]
	}
	r := g.Do(t, gatewaytest.Req{Body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ev__test_simple_text"}}`, id), Header: h})
	m := r.Message(t)
	if r.Status != http.StatusOK || m.Error != nil || isErrorResult(m.Result) {
		t.Fatalf("tools/call: HTTP %d %s", r.Status, r.Body)
	}
}

func endSession(t *testing.T, g *gatewaytest.GW, sid string, agent ...string) {
	t.Helper()
	h := map[string]string{"Mcp-Session-Id": sid}
	if len(agent) > 0 {
		h["X-Agent-Id"] = agent[0]
	}
	if r := g.Do(t, gatewaytest.Req{Method: http.MethodDelete, Header: h}); r.Status != http.StatusOK {
		t.Fatalf("DELETE session: HTTP %d %s", r.Status, r.Body)
	}
}

// TestPoolRefillAfterUseAndCrash: a pool of 2 is ready before any session; ready
// instances that die are replaced; a session's first call runs on a pooled instance (no
// process started for it but the refill), and ending the session stops that instance.
func TestPoolRefillAfterUseAndCrash(t *testing.T) {
	yaml, dir := pidConfig(t, "    pool: {warm: 2, max: 5}\n")
	killAll(t, dir)
	g := gatewaytest.Start(t, yaml)
	var ready []int
	// The registry's catalogue probe exits once it listed the tools: then only the pool runs.
	if !gatewaytest.WaitFor(10*time.Second, func() bool { ready = alivePids(t, dir); return poolStats(g, "ev").Ready == 2 && len(ready) == 2 }) {
		t.Fatalf("pool %+v, live instances %v; want 2 ready", poolStats(g, "ev"), ready)
	}

	// Crash: kill both ready instances; the pool starts two others.
	for _, p := range ready {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	var fresh []int
	if !gatewaytest.WaitFor(10*time.Second, func() bool {
		fresh = alivePids(t, dir)
		return poolStats(g, "ev").Ready == 2 && len(fresh) == 2 && !slices.Contains(fresh, ready[0]) && !slices.Contains(fresh, ready[1])
	}) {
		t.Fatalf("after the ready instances died: pool %+v, live %v (killed %v)", poolStats(g, "ev"), fresh, ready)
	}

	// Use: the session takes a ready instance; the only process started is the refill.
	started := len(pids(t, dir))
	sid := g.Initialize(t, "2025-11-25", "")
	callOK(t, g, sid, 1)
	if !gatewaytest.WaitFor(10*time.Second, func() bool { s := poolStats(g, "ev"); return s.Ready == 2 && s.InUse == 1 }) {
		t.Fatalf("after one take: %+v, want 2 ready and 1 in use", poolStats(g, "ev"))
	}
	if n := len(pids(t, dir)); n != started+1 {
		t.Fatalf("%d instances started for one session, want 1 (the refill)", n-started)
	}
	var inUse int
	for _, p := range fresh {
		if alive(p) {
			inUse++
		}
	}
	if inUse != 2 {
		t.Fatalf("%d of the pooled pair run, want both (one in use, one ready)", inUse)
	}
	callOK(t, g, sid, 2)
	if n := len(pids(t, dir)); n != started+1 {
		t.Fatalf("the session's second call started an instance")
	}
	if v := g.MetricValue(t, `mcpgw_pool_instances{server="ev",state="in_use"}`); v != 1 {
		t.Errorf("mcpgw_pool_instances in_use = %v, want 1", v)
	}
	// The admin API and the UI's Servers page show the pool.
	if a := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/api/servers/ev"}); !strings.Contains(string(a.Body), `"in_use": 1`) || !strings.Contains(string(a.Body), `"ready": 2`) {
		t.Errorf("GET /api/servers/ev does not show the pool: %d %s", a.Status, a.Body)
	}
	if a := gatewaytest.NewUIClient(t, g).Do("GET", "/ui/servers", "", nil); !strings.Contains(a.Body, "(pool 2 ready, 0 starting, 1 in use / 5)") {
		t.Errorf("the UI's Servers page does not show the pool: %d %s", a.Status, a.Body)
	}
	if v := g.MetricValue(t, `mcpgw_upstream_instance_start_seconds_count{server="ev"}`); v < 5 {
		t.Errorf("start time histogram counted %v starts, want at least 5", v)
	}
	// Ending the session stops its instance; the two ready ones stay.
	endSession(t, g, sid)
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return len(alivePids(t, dir)) == 2 && poolStats(g, "ev").InUse == 0 }) {
		t.Errorf("after the session ended: live %v, pool %+v; want the 2 ready", alivePids(t, dir), poolStats(g, "ev"))
	}
}

// TestPoolMaxUnderLoad: 50 sessions start at once on a pool of max 5; each makes a call
// and ends. The pool never has more than 5 instances, and every session gets its call
// answered (those beyond max wait for an instance to end).
func TestPoolMaxUnderLoad(t *testing.T) {
	yaml, dir := pidConfig(t, "    pool: {warm: 2, max: 5}\n    timeouts: {connect: 30s}\n")
	killAll(t, dir)
	g := gatewaytest.Start(t, yaml)
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return poolStats(g, "ev").Ready == 2 }) {
		t.Fatalf("pool never ready: %+v", poolStats(g, "ev"))
	}
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			s := poolStats(g, "ev")
			if n := int64(s.Ready + s.InUse + s.Starting); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := post(g, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)
			sid := r.Header.Get("Mcp-Session-Id")
			if err != nil || sid == "" {
				errs <- fmt.Errorf("initialize: %v %s", err, r.Body)
				return
			}
			r, err = post(g, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ev__test_simple_text"}}`)
			if err != nil || r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"result"`) || strings.Contains(string(r.Body), `"isError":true`) {
				errs <- fmt.Errorf("call: %v HTTP %d %s", err, r.Status, r.Body)
				return
			}
			hr, _ := http.NewRequest(http.MethodDelete, g.Base+"/mcp", nil)
			hr.Header.Set("Mcp-Session-Id", sid)
			if dr, err := gatewaytest.Client().Do(hr); err != nil {
				errs <- err
			} else {
				dr.Body.Close()
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if p := peak.Load(); p > 5 || p < 2 {
		t.Errorf("peak pooled instances %d, want at most max (5)", p)
	}
	// Processes agree with the pool's count: never more than max ran at once is not
	// observable after the fact, but every one of them is accounted for at the end.
	if !gatewaytest.WaitFor(10*time.Second, func() bool { s := poolStats(g, "ev"); return s.InUse == 0 && s.Ready == 2 }) {
		t.Errorf("pool after the load: %+v, want 2 ready and none in use", poolStats(g, "ev"))
	}
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return len(alivePids(t, dir)) == 2 }) {
		t.Errorf("live instances after the load %v, want the 2 ready", alivePids(t, dir))
	}
}

// TestPoolFullError: at max, a take waits for the server's connect timeout and then the
// call fails saying the pool is full.
func TestPoolFullError(t *testing.T) {
	yaml, dir := pidConfig(t, "    pool: {warm: 1, max: 1}\n    timeouts: {connect: 300ms}\n")
	killAll(t, dir)
	g := gatewaytest.Start(t, yaml)
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return poolStats(g, "ev").Ready == 1 }) {
		t.Fatalf("pool never ready: %+v", poolStats(g, "ev"))
	}
	a := g.Initialize(t, "2025-11-25", "")
	callOK(t, g, a, 1)
	b := g.Initialize(t, "2025-11-25", "")
	start := time.Now()
	r := g.Call(t, b, 1, "tools/call", `{"name":"ev__test_simple_text"}`)
	m := r.Message(t)
	if !isErrorResult(m.Result) || !strings.Contains(string(m.Result), "all 1 pooled instances in use (pool.max)") {
		t.Fatalf("call at max: %s", r.Body)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("refused after %v, want after the 300ms connect timeout", took)
	}
	endSession(t, g, a)
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return poolStats(g, "ev").Ready == 1 }) {
		t.Fatalf("pool did not refill after the session ended: %+v", poolStats(g, "ev"))
	}
	callOK(t, g, b, 2)
}

// TestPerAgentSharing: two sessions of one agent share one instance, another agent gets
// its own, and the instance stops agent_grace after its agent's last session ended, not
// after its first (a third agent's instance, stopped by a grace that began later, marks
// the time).
func TestPerAgentSharing(t *testing.T) {
	yaml, dir := pidConfig(t, "    mode: per_agent\n    agent_grace: 200ms\n")
	killAll(t, dir)
	g := gatewaytest.Start(t, yaml)
	probe := len(pids(t, dir))
	a1 := g.InitializeAs(t, "alpha")
	a2 := g.InitializeAs(t, "alpha")
	callOK(t, g, a1, 1, "alpha")
	callOK(t, g, a2, 1, "alpha")
	callOK(t, g, a1, 2, "alpha")
	all := pids(t, dir)
	if len(all) != probe+1 {
		t.Fatalf("two sessions of one agent started %d instances, want 1", len(all)-probe)
	}
	alpha := all[len(all)-1]
	b := g.InitializeAs(t, "beta")
	callOK(t, g, b, 1, "beta")
	all = pids(t, dir)
	if len(all) != probe+2 {
		t.Fatalf("a second agent started %d instances, want 1 of its own", len(all)-probe-1)
	}
	beta := all[len(all)-1]
	if v := g.Do(t, gatewaytest.Req{Path: "/readyz", Method: http.MethodGet}); !strings.Contains(string(v.Body), `"mode": "per_agent"`) {
		t.Errorf("/readyz does not show the per_agent policy: %s", v.Body)
	}
	c := g.InitializeAs(t, "gamma")
	callOK(t, g, c, 1, "gamma")
	gamma := pids(t, dir)[probe+2]
	endSession(t, g, a1, "alpha") // a2 still holds alpha's instance
	// gamma's last session ends after alpha's first: once its instance has stopped, its
	// grace has passed, and alpha's would have passed before it.
	endSession(t, g, c, "gamma")
	if !gatewaytest.WaitFor(5*time.Second, func() bool { return !alive(gamma) }) {
		t.Fatal("gamma's instance still runs after its last session ended and the grace passed")
	}
	if !alive(alpha) {
		t.Fatal("the agent's instance stopped while one of its sessions remained")
	}
	callOK(t, g, a2, 2, "alpha")
	endSession(t, g, a2, "alpha")
	if !gatewaytest.WaitFor(5*time.Second, func() bool { return !alive(alpha) }) {
		t.Error("the agent's instance still runs after its last session ended and the grace passed")
	}
	if !alive(beta) {
		t.Error("the other agent's instance stopped with alpha's")
	}
}

// TestPerCallTeardown: each tools/call gets a fresh instance, and none is left running
// after its answer.
func TestPerCallTeardown(t *testing.T) {
	yaml, dir := pidConfig(t, "    mode: per_call\n")
	killAll(t, dir)
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", "")
	probe := len(pids(t, dir))
	var seen []int
	for i := 1; i <= 3; i++ {
		callOK(t, g, sid, i)
		all := pids(t, dir)
		if len(all) != probe+i {
			t.Fatalf("after %d calls %d instances started, want %d", i, len(all)-probe, i)
		}
		p := all[len(all)-1]
		if slices.Contains(seen, p) {
			t.Fatalf("call %d reused instance %d", i, p)
		}
		seen = append(seen, p)
		if !gatewaytest.WaitFor(5*time.Second, func() bool { return !alive(p) }) {
			t.Fatalf("instance %d of call %d still runs after its answer", p, i)
		}
	}
	if live := alivePids(t, dir); len(live) != 0 {
		t.Errorf("instances left running: %v", live)
	}
	var st []registry.Status
	r := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/readyz"})
	var ready struct{ Upstreams []registry.Status }
	if err := json.Unmarshal(r.Body, &ready); err != nil {
		t.Fatal(err)
	}
	st = ready.Upstreams
	if len(st) != 1 || st[0].Mode != "per_call" {
		t.Errorf("/readyz upstreams %+v, want ev in mode per_call", st)
	}
}

// TestStartFailureVisible: a stdio server that fails to start shows its command, exit
// code and last stderr lines (secrets out) in /readyz and is retried with backoff; an
// instance of a session that fails to start says the same in the call's result.
func TestStartFailureVisible(t *testing.T) {
	dir := t.TempDir()
	yaml := `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
servers:
  broken:
    type: stdio
    command: sh
    args: ["-c", "echo \"login with $API_TOKEN failed\" >&2; exit 4"]
    env: {API_TOKEN: tok-abcdef-123}
  flaky:
    type: stdio
    command: sh
    args: ["-c", "if [ -e \"$1/started\" ]; then echo 'cannot open /data: permission denied' >&2; exit 7; fi; touch \"$1/started\"; exec \"$0\"", "` + gatewaytest.EverythingBin() + `", "` + dir + `"]
`
	g := gatewaytest.Start(t, yaml)
	var broken registry.Status
	if !gatewaytest.WaitFor(10*time.Second, func() bool {
		for _, st := range g.Reg.Statuses() {
			if st.Name == "broken" {
				broken = st
			}
		}
		return broken.Restarts >= 1
	}) {
		t.Fatalf("broken server not retried: %+v", broken)
	}
	r := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/readyz"})
	body := string(r.Body)
	for _, want := range []string{`exited with code 4`, `login with [redacted] failed`, `command \"sh -c`} {
		if !strings.Contains(body, want) {
			t.Errorf("/readyz lacks %s: %s", want, body)
		}
	}
	if strings.Contains(body, "tok-abcdef-123") {
		t.Errorf("/readyz shows the env secret: %s", body)
	}

	// flaky answered the catalogue probe, and fails for the session.
	sid := g.Initialize(t, "2025-11-25", "")
	cr := g.Call(t, sid, 1, "tools/call", `{"name":"flaky__test_simple_text"}`)
	m := cr.Message(t)
	if !isErrorResult(m.Result) || !strings.Contains(string(m.Result), "exited with code 7") || !strings.Contains(string(m.Result), "permission denied") {
		t.Errorf("call result %s, want the start failure with exit code and stderr", cr.Body)
	}
}

// TestPoolIdleReap: a pool nobody took from for idle_timeout stops its ready instances;
// the next session's call starts one for itself and the pool fills again.
func TestPoolIdleReap(t *testing.T) {
	yaml, dir := pidConfig(t, "    pool: {warm: 2, max: 5, idle_timeout: 1s}\n")
	killAll(t, dir)
	g := gatewaytest.Start(t, yaml)
	var ready []int
	if !gatewaytest.WaitFor(10*time.Second, func() bool { ready = alivePids(t, dir); return poolStats(g, "ev").Ready == 2 && len(ready) == 2 }) {
		t.Fatalf("pool never ready: %+v, live %v", poolStats(g, "ev"), ready)
	}
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return poolStats(g, "ev").Ready == 0 && len(alivePids(t, dir)) == 0 }) {
		t.Fatalf("idle pool kept its instances: %+v, live %v", poolStats(g, "ev"), alivePids(t, dir))
	}
	sid := g.Initialize(t, "2025-11-25", "")
	callOK(t, g, sid, 1)
	if !gatewaytest.WaitFor(10*time.Second, func() bool { s := poolStats(g, "ev"); return s.Ready == 2 && s.InUse == 1 }) {
		t.Fatalf("pool after a take from an idle pool: %+v, want 2 ready and 1 in use", poolStats(g, "ev"))
	}
}

// TestAdminServerPoolAndPolicy: the admin API creates a pooled per_agent server, shows its
// pool and policy, and refuses a pool where it cannot apply, naming the field.
func TestAdminServerPoolAndPolicy(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	dir := t.TempDir()
	killAll(t, dir)
	body := `{"name":"pooled","type":"stdio","command":"sh","args":["-c","echo $$ >> \"$1/pids\"; exec \"$0\"","` + gatewaytest.EverythingBin() + `","` + dir + `"],
	          "mode":"per_agent","agent_grace":"5s","pool":{"warm":1,"max":3,"idle_timeout":"1m"}}`
	a := g.API(t, "POST", "/api/servers", body, g.LocalAuth(t))
	if a.Status != http.StatusCreated {
		t.Fatalf("POST /api/servers: %s", a)
	}
	if p, _ := a.Obj["pool"].(map[string]any); p["warm"] != float64(1) || p["max"] != float64(3) || p["idle_timeout"] != "1m" || a.Obj["agent_grace"] != "5s" {
		t.Errorf("pool and agent_grace in the answer: %v %v", a.Obj["pool"], a.Obj["agent_grace"])
	}
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return poolStats(g, "pooled").Ready == 1 }) {
		t.Fatalf("the API server's pool never had its instance ready: %+v", poolStats(g, "pooled"))
	}
	live := g.API(t, "GET", "/api/servers/pooled", "", nil)
	if l, _ := live.Obj["live"].(map[string]any); l["mode"] != "per_agent" || l["pool"] == nil {
		t.Errorf("live state: %v", live.Obj["live"])
	}
	view := g.API(t, "GET", "/api/agents/default/view", "", nil)
	if m, _ := view.Obj["modes"].(map[string]any); m["pooled"] != "per_agent" || m["everything"] != "shared" {
		t.Errorf("the agent view's modes: %v", view.Obj["modes"])
	}
	for _, c := range []struct{ body, field, want string }{
		{`{"name":"p2","type":"streamable_http","url":"` + gatewaytest.EverythingURL() + `","pool":{"warm":2}}`, "servers.p2.pool", "needs per_session or per_agent"},
		{`{"name":"p3","type":"stdio","command":"x","pool":{"warm":1,"idle_timeout":"soon"}}`, "servers.p3.pool.idle_timeout", "not a duration"},
		{`{"name":"p4","type":"stdio","command":"x","pool":{"warm":4,"max":2}}`, "servers.p4.pool", "more than max"},
		{`{"name":"p5","type":"stdio","command":"x","mode":"per_task"}`, "servers.p5", "per_agent, per_call"},
	} {
		a := g.API(t, "POST", "/api/servers", c.body, nil)
		fe := a.FieldErrors()
		if a.Status != http.StatusBadRequest || len(fe) == 0 || !strings.HasPrefix(fe[0], c.field+": ") || !strings.Contains(string(a.Raw), c.want) {
			t.Errorf("POST %s: %s; want 400 about %s saying %q", c.body, a, c.field, c.want)
		}
	}
}
