package e2e

// Churn: what the gateway keeps after many sessions came and went, and how a fleet of
// stdio servers comes back after a gateway restart. Both run inside `make test` in a short
// form; MCPGW_CHURN_FULL=1 runs the full form:
//
//	MCPGW_CHURN_FULL=1 make test-e2e E2E_ARGS='-run TestChurn -v -timeout 120m'
//
// TestChurnSessions opens and closes sessions (initialize, one tools/call on a
// per_session npm server-memory from a warm pool, DELETE), a few at once, then checks
// that the gateway runs no upstream process beyond its pool, that its resident memory
// is back within 10% of its value after a warm-up, and that its goroutines are back.
// TestChurnFleetRestart configures many shared stdio servers (the npm server-everything,
// server-memory and server-filesystem, each under many names), restarts the gateway, and
// checks that every server is up again within twice what the CPU allows, compared with a
// single server's start.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
)

const (
	// churnRSSSlack: resident memory at the end may exceed the warm reading by this share.
	churnRSSSlack = 0.10
	// churnGoroutineSlack: goroutines at the end may exceed the warm reading by this many
	// (an idle keep-alive connection's serve goroutine the runtime has not ended yet).
	churnGoroutineSlack = 5
	// churnSettle bounds the wait for instances, memory and goroutines to come back.
	churnSettle = 60 * time.Second
)

// churnFull reports whether MCPGW_CHURN_FULL=1 asks for the full form.
func churnFull() bool { return os.Getenv("MCPGW_CHURN_FULL") == "1" }

// churnCount is n, or the full form's full, or the count env names (MCPGW_CHURN_SESSIONS,
// MCPGW_CHURN_SERVERS: a run sized to the time at hand).
func churnCount(t *testing.T, env string, n, full int) int {
	t.Helper()
	if churnFull() {
		n = full
	}
	if v := os.Getenv(env); v != "" {
		c, err := strconv.Atoi(v)
		if err != nil || c < 1 {
			t.Fatalf("%s=%q: want a positive number", env, v)
		}
		n = c
	}
	return n
}

// churnProcs are the gateway's descendants: upstream processes and their guardians.
type churnProcs struct {
	upstreams, guardians, zombies []procInfo
}

func (p churnProcs) String() string {
	return fmt.Sprintf("%d upstream processes, %d guardians, %d zombies", len(p.upstreams), len(p.guardians), len(p.zombies))
}

func countChurnProcs(gatewayPid int) churnProcs {
	var out churnProcs
	for _, p := range descendants(gatewayPid) {
		switch {
		case p.State == "Z" || p.State == "X":
			out.zombies = append(out.zombies, p)
		case strings.Contains(p.Cmdline, "__mcpgw_child"):
			out.guardians = append(out.guardians, p)
		default:
			out.upstreams = append(out.upstreams, p)
		}
	}
	return out
}

// churnReading is the gateway's resident memory and goroutines after a forced collection.
type churnReading struct {
	rssKiB     int
	goroutines int
	sessions   int
	// soak holds the runtime's figures and the free heap pages it kept resident (from
	// GODEBUG=scavtrace=1; see soakReading.held, which the check compares).
	soak soakReading
}

// heldKiB is VmRSS less the free heap pages the Go runtime keeps resident even after
// debug.FreeOSMemory: those are not the gateway's. They vary between readings by a few
// MiB (soak_test.go measured them), which is 10% of this ~30 MiB process on their own.
func (r churnReading) heldKiB() float64 {
	if r.soak.heapFree < 0 {
		return float64(r.rssKiB)
	}
	return float64(r.rssKiB) - float64(r.soak.heapFree)/1024
}

func (r churnReading) String() string {
	return fmt.Sprintf("VmRSS %.1f MiB (anon %.1f, file %.1f), held %.1f MiB (free heap kept by the runtime %.1f MiB), go_goroutines %d, %d sessions, heap in use %.1f MiB, runtime sys %.1f MiB",
		float64(r.rssKiB)/1024, float64(r.soak.RSSAnon)/(1<<20), float64(r.soak.RSSFile)/(1<<20), r.heldKiB()/1024,
		float64(r.soak.heapFree)/(1<<20), r.goroutines, r.sessions, float64(r.soak.HeapInuse)/(1<<20), float64(r.soak.Sys)/(1<<20))
}

// readChurn collects garbage in the gateway (GET /api/runtime?gc=1), then reads VmRSS
// from /proc and go_goroutines from /metrics.
func readChurn(g *Gateway) (churnReading, error) {
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	advHTTP.CloseIdleConnections()
	rt, err := advGetRuntime(g, true)
	if err != nil {
		return churnReading{}, err
	}
	rss, err := vmRSSKiB(g.Pid)
	if err != nil {
		return churnReading{}, err
	}
	text, err := getMetrics(g)
	if err != nil {
		return churnReading{}, err
	}
	gr, ok := metricValue(text, "go_goroutines", nil)
	if !ok {
		return churnReading{}, fmt.Errorf("/metrics has no go_goroutines")
	}
	return churnReading{rssKiB: rss, goroutines: int(gr), sessions: rt.Sessions, soak: soakReading{advRuntime: rt, heapFree: soakHeapFree(g, rt)}}, nil
}

// churnOneSession opens a session, calls read_graph on its own instance of server-memory
// and ends the session with DELETE.
func churnOneSession(url string) error {
	s, err := advTryOpenSession(url, nil, rawProtocolVersion, "")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	text, _, callErr := s.callTool(ctx, "mem__read_graph", nil)
	if callErr == nil && !strings.Contains(text, "entities") {
		callErr = fmt.Errorf("read_graph answered %q", advShort([]byte(text), 200))
	}
	a, err := advDo(ctx, http.MethodDelete, url, s.headers(), nil)
	if callErr != nil {
		return fmt.Errorf("session %s: tools/call: %w", s.ID, callErr)
	}
	if err != nil {
		return fmt.Errorf("session %s: DELETE: %w", s.ID, err)
	}
	if a.Status != http.StatusOK && a.Status != http.StatusNoContent && a.Status != http.StatusAccepted {
		return fmt.Errorf("session %s: DELETE: %s", s.ID, a)
	}
	return nil
}

// churnRun runs n sessions, at most conc at once, and returns how many failed with up to
// 5 of their errors. progress, when not nil, is called after every 500th session.
func churnRun(url string, n, conc int, progress func(done int64)) (failed int64, samples []string) {
	var next, fails atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				if progress != nil && i%500 == 0 {
					progress(i)
				}
				if err := churnOneSession(url); err != nil {
					fails.Add(1)
					mu.Lock()
					if len(samples) < 5 {
						samples = append(samples, err.Error())
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return fails.Load(), samples
}

// TestChurnSessions: sessions open and close (initialize, one call on a per_session
// stdio server taken from a warm pool, DELETE); afterwards the gateway runs no upstream
// process beyond the pool's ready ones, and its memory and goroutines are back.
func TestChurnSessions(t *testing.T) {
	needGatewayBin(t)
	// Every session costs one node process start (~0.5 s of CPU here): the short form
	// stays under a minute on a shared 2-core machine.
	sessions := churnCount(t, "MCPGW_CHURN_SESSIONS", 60, 10000)
	// The warm-up must reach the plateau: the runtime's own memory (stacks, heap
	// metadata) grows to what the busiest moment needed and stays. Measured by hand in
	// batches of 40 sessions: VmRSS 28.6 MiB idle, 30.3 after the first batch, 30.8-30.9
	// after each of the next four, the live heap flat throughout.
	warmup, conc, warm := min(500, max(50, sessions/10)), 8, 8
	memFile := filepath.Join(t.TempDir(), "memory.jsonl")
	// After each forced collection the gateway's runtime prints how much free heap it
	// keeps (soakHeapFree reads it from the log); the gateway inherits the test's env.
	t.Setenv("GODEBUG", "scavtrace=1")
	g := startGatewayChecked(t, `
log: {level: warn, format: text}
servers:
  mem:
    type: stdio
    command: `+yamlQuote(node(t))+`
    args: [`+yamlQuote(npmServerScript(t, "server-memory"))+`]
    env: {MEMORY_FILE_PATH: `+yamlQuote(memFile)+`}
    pool: {warm: `+fmt.Sprint(warm)+`, max: `+fmt.Sprint(3*warm)+`}
`)
	killPidsAtCleanup(t, func() []int {
		var pids []int
		for _, p := range descendants(g.Pid) {
			pids = append(pids, p.Pid)
		}
		return pids
	})
	settled := func(what string) (churnProcs, bool) {
		var procs churnProcs
		desc, ok := waitFor(churnSettle, func() (bool, string) {
			ready, inUse, err := poolOf(g, "mem")
			procs = countChurnProcs(g.Pid)
			return err == nil && ready == warm && inUse == 0 && len(procs.upstreams) == warm && len(procs.guardians) == warm,
				fmt.Sprintf("pool ready %d, in use %d (%v); %s", ready, inUse, err, procs)
		})
		if !ok {
			t.Errorf("%s: the gateway did not settle to its %d pooled instances within %s: %s%s",
				what, warm, churnSettle, desc, describeProcs(append(procs.upstreams, procs.zombies...)))
		}
		return procs, ok
	}
	if _, ok := settled("start"); !ok {
		t.FailNow()
	}

	// Warm-up: the same load, so that whatever the gateway sizes by its load exists at
	// the baseline and the end compares what churn left, not how high it peaked.
	if failed, samples := churnRun(g.URL, warmup, conc, nil); failed > 0 {
		t.Fatalf("warm-up: %d of %d sessions failed: %v", failed, warmup, samples)
	}
	settled("after the warm-up")
	base := readSettledChurn(t, g, nil)
	t.Logf("after warm-up (%d sessions): %s", warmup, base)

	start := time.Now()
	failed, samples := churnRun(g.URL, sessions, conc, func(done int64) {
		t.Logf("churn: session %d of %d after %s; %s", done, sessions, time.Since(start).Round(time.Second), countChurnProcs(g.Pid))
	})
	took := time.Since(start)
	t.Logf("churn: %d sessions, %d at once, in %s: %.1f sessions/s; %d failed %v",
		sessions, conc, took.Round(time.Millisecond), float64(sessions)/took.Seconds(), failed, samples)
	if failed > 0 {
		t.Errorf("%d of %d sessions failed: %v", failed, sessions, samples)
	}

	procs, _ := settled("after the churn")
	t.Logf("processes under the gateway at the end: %s (pool warm %d)", procs, warm)
	if len(procs.zombies) > 0 {
		t.Errorf("%d zombie processes under the gateway:%s", len(procs.zombies), describeProcs(procs.zombies))
	}
	end := readSettledChurn(t, g, &base)
	t.Logf("warm: %s", base)
	t.Logf("end:  %s", end)
	if end.heldKiB() > base.heldKiB()*(1+churnRSSSlack) {
		t.Errorf("resident memory did not come back: %.1f MiB held after %d sessions, %.1f MiB after the warm-up (+%.0f%%, allowed %.0f%%; plain VmRSS %.1f → %.1f MiB)",
			end.heldKiB()/1024, sessions, base.heldKiB()/1024, 100*(end.heldKiB()/base.heldKiB()-1), 100*churnRSSSlack,
			float64(base.rssKiB)/1024, float64(end.rssKiB)/1024)
	}
	if end.goroutines > base.goroutines+churnGoroutineSlack {
		t.Errorf("goroutines did not come back: %d after %d sessions, %d after the warm-up (allowed +%d)", end.goroutines, sessions, base.goroutines, churnGoroutineSlack)
	}
	if end.sessions > base.sessions {
		t.Errorf("sessions: %d at the end, %d after the warm-up: ended sessions are still held", end.sessions, base.sessions)
	}
}

// readSettledChurn reads the gateway a few times after collections and returns the lowest
// reading (the readings settle after a collection or two). With a baseline, it stops as
// soon as a reading is within the allowed slack of it.
func readSettledChurn(t *testing.T, g *Gateway, base *churnReading) churnReading {
	t.Helper()
	var best churnReading
	deadline := time.Now().Add(churnSettle)
	for i := 0; i < 60; i++ {
		r, err := readChurn(g)
		if err != nil {
			t.Fatalf("reading the gateway: %v", err)
		}
		if i == 0 || r.heldKiB() < best.heldKiB() {
			best.rssKiB, best.soak = r.rssKiB, r.soak
		}
		if i == 0 || r.goroutines < best.goroutines {
			best.goroutines = r.goroutines
		}
		best.sessions = r.sessions
		within := base != nil && best.heldKiB() <= base.heldKiB()*(1+churnRSSSlack) &&
			best.goroutines <= base.goroutines+churnGoroutineSlack
		if (base == nil && i >= 2) || within || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	return best
}

// churnKinds are the npm reference servers the fleet is made of: name prefix and the
// server's YAML body (command, args, env) for a server of that kind named name.
func churnKinds(t *testing.T) map[string]func(name string) string {
	t.Helper()
	nodeBin, dir := yamlQuote(node(t)), t.TempDir()
	everything, memory, filesystem := serverEverythingScript(t), npmServerScript(t, "server-memory"), npmServerScript(t, "server-filesystem")
	return map[string]func(string) string{
		"everything": func(string) string {
			return `command: ` + nodeBin + `
    args: [` + yamlQuote(everything) + `, stdio]`
		},
		"memory": func(name string) string {
			return `command: ` + nodeBin + `
    args: [` + yamlQuote(memory) + `]
    env: {MEMORY_FILE_PATH: ` + yamlQuote(filepath.Join(dir, name+".jsonl")) + `}`
		},
		"filesystem": func(string) string {
			return `command: ` + nodeBin + `
    args: [` + yamlQuote(filesystem) + `, ` + yamlQuote(dir) + `]`
		},
	}
}

// churnFleetConfig is a gateway config with n shared stdio servers, the kinds in turn.
func churnFleetConfig(t *testing.T, n int, upstream string) (cfg string, names []string) {
	t.Helper()
	kinds := churnKinds(t)
	order := []string{"everything", "memory", "filesystem"}
	var b strings.Builder
	b.WriteString("log: {level: warn, format: text}\n" + upstream + "servers:\n")
	for i := 0; i < n; i++ {
		kind := order[i%len(order)]
		name := fmt.Sprintf("%s%03d", kind, i)
		names = append(names, name)
		fmt.Fprintf(&b, "  %s:\n    type: stdio\n    mode: shared\n    stdio_proxy: true\n    %s\n", name, kinds[kind](name))
	}
	return b.String(), names
}

// waitAllUp polls /readyz until every server in names is up; it returns how long that
// took from start, and the servers not up when timeout passed.
func waitAllUp(g *Gateway, names []string, start time.Time, timeout time.Duration) (time.Duration, []string) {
	var down []string
	_, ok := waitFor(timeout, func() (bool, string) {
		r, err := getReadyz(g)
		if err != nil {
			down = []string{err.Error()}
			return false, ""
		}
		down = down[:0]
		for _, n := range names {
			if u := r.upstream(n); u == nil || u.State != "up" {
				state := "missing"
				if u != nil {
					state = u.State + " " + u.Error
				}
				down = append(down, n+": "+state)
			}
		}
		return len(down) == 0, ""
	})
	if !ok {
		return 0, down
	}
	return time.Since(start), nil
}

// restartTimed stops g (SIGTERM), checks that every process it ran went with it, starts
// it again on its config and state dir, and returns the new gateway and how long it took
// from the start of the new process until every server in names was up.
func restartTimed(t *testing.T, g *Gateway, names []string, label string) (*Gateway, time.Duration) {
	t.Helper()
	kids := descendants(g.Pid)
	g.Stop()
	if desc, ok := waitFor(10*time.Second, func() (bool, string) {
		var left []procInfo
		for _, k := range kids {
			if pidAlive(k.Pid) {
				left = append(left, k)
			}
		}
		return len(left) == 0, describeProcs(left)
	}); !ok {
		t.Errorf("%s: 10 s after the gateway stopped, some of its %d processes were still alive:%s", label, len(kids), desc)
	}
	start := time.Now()
	ng := sessRestartGateway(t, g, label)
	killPidsAtCleanup(t, func() []int {
		var pids []int
		for _, p := range descendants(ng.Pid) {
			pids = append(pids, p.Pid)
		}
		return pids
	})
	took, down := waitAllUp(ng, names, start, 10*time.Minute)
	if down != nil {
		t.Fatalf("%s: %d of %d servers not up 10 minutes after the restart: %s", label, len(down), len(names), strings.Join(down, "; "))
	}
	return ng, took
}

// TestChurnFleetRestart: a fleet of shared stdio servers all come back after a gateway
// restart, within twice what the machine allows: a single server's start (the slowest
// kind, measured alone, also across a restart) times the servers per slot the machine can
// run at once (the start concurrency, at most the CPUs: node servers spend their start on
// the CPU).
func TestChurnFleetRestart(t *testing.T) {
	needGatewayBin(t)
	n := churnCount(t, "MCPGW_CHURN_SERVERS", 21, 100)
	kinds := churnKinds(t)
	var slowest time.Duration
	for _, kind := range []string{"everything", "memory", "filesystem"} {
		name := kind + "000"
		g := startGatewayChecked(t, "log: {level: warn, format: text}\nservers:\n  "+name+":\n    type: stdio\n    mode: shared\n    stdio_proxy: true\n    "+kinds[kind](name)+"\n")
		if _, down := waitAllUp(g, []string{name}, time.Now(), 60*time.Second); down != nil {
			t.Fatalf("single %s never came up: %v", kind, down)
		}
		g, took := restartTimed(t, g, []string{name}, "single-"+kind)
		t.Logf("single %s server: up %s after the gateway restarted", kind, took.Round(time.Millisecond))
		slowest = max(slowest, took)
		g.Stop()
	}

	cfg, names := churnFleetConfig(t, n, "")
	g := startGatewayChecked(t, cfg)
	if _, down := waitAllUp(g, names, time.Now(), 10*time.Minute); down != nil {
		t.Fatalf("%d of %d servers never came up at the first start: %s", len(down), n, strings.Join(down, "; "))
	}
	g, took := restartTimed(t, g, names, "fleet")
	slots := min(runtime.NumCPU(), churnStartConcurrency())
	allowed := 2 * slowest * time.Duration((n+slots-1)/slots)
	procs := countChurnProcs(g.Pid)
	t.Logf("fleet of %d servers: all up %s after the gateway restarted; slowest single start %s; %d at once allowed, %d CPUs: allowed %s; %s",
		n, took.Round(time.Millisecond), slowest.Round(time.Millisecond), churnStartConcurrency(), runtime.NumCPU(), allowed.Round(time.Millisecond), procs)
	if took > allowed {
		t.Errorf("the fleet of %d servers took %s to come back, more than %s (2 × the slowest single start %s × %d servers per slot)",
			n, took.Round(time.Millisecond), allowed.Round(time.Millisecond), slowest.Round(time.Millisecond), (n+slots-1)/slots)
	}
	if len(procs.upstreams) != n {
		t.Errorf("%d upstream processes run for %d shared servers:%s", len(procs.upstreams), n, describeProcs(procs.upstreams))
	}
}

// churnStartConcurrency is how many servers the gateway starts at once by default
// (upstream.start_concurrency; the gateway runs on the same CPUs as the test).
func churnStartConcurrency() int { return config.DefaultStartConcurrency() }

// TestChurnStartRetriesWithBackoff: a server whose first starts fail (a shell that exits
// 1 the first two times, then becomes the npm server-everything) comes up on its own,
// having been retried with a growing delay, and its failures are counted in /readyz.
func TestChurnStartRetriesWithBackoff(t *testing.T) {
	needGatewayBin(t)
	const failures = 2
	count := filepath.Join(t.TempDir(), "starts")
	script := `n=$(cat "$1" 2>/dev/null || echo 0); echo $((n+1)) > "$1"; ` +
		`if [ "$n" -lt ` + fmt.Sprint(failures) + ` ]; then echo "flaky start $n fails on purpose" >&2; exit 1; fi; exec "$2" "$3" stdio`
	g := startGatewayChecked(t, `
log: {level: warn, format: text}
servers:
  flaky:
    type: stdio
    mode: shared
    stdio_proxy: true
    command: sh
    args: [`+strings.Join([]string{yamlQuote("-c"), yamlQuote(script), "flaky", yamlQuote(count), yamlQuote(node(t)), yamlQuote(serverEverythingScript(t))}, ", ")+`]
`)
	if desc, ok := waitFor(60*time.Second, func() (bool, string) {
		u, err := upstreamState(g, "flaky")
		return err == nil && u.State == "up", fmt.Sprintf("%+v %v", u, err)
	}); !ok {
		t.Fatalf("the flaky server never came up: %s", desc)
	}
	u, _ := upstreamState(g, "flaky")
	raw, _ := os.ReadFile(count)
	t.Logf("flaky server up after %s starts, %d restarts counted", strings.TrimSpace(string(raw)), u.Restarts)
	if got := strings.TrimSpace(string(raw)); got != fmt.Sprint(failures+1) {
		t.Errorf("the server was started %s times, want %d (%d failures, then up)", got, failures+1, failures)
	}
	if u.Restarts != failures {
		t.Errorf("/readyz counts %d restarts, want %d", u.Restarts, failures)
	}
	// The gateway logs each failure with the delay before the next try: it must grow.
	var delays []time.Duration
	for _, line := range strings.Split(g.Log(), "\n") {
		if !strings.Contains(line, "upstream down") || !strings.Contains(line, "server=flaky") {
			continue
		}
		_, after, _ := strings.Cut(line, "retry_in=")
		d, err := time.ParseDuration(strings.Fields(after + " ")[0])
		if err != nil {
			t.Fatalf("no retry_in in %q: %v", line, err)
		}
		delays = append(delays, d)
	}
	t.Logf("delays before each retry: %v", delays)
	if len(delays) != failures {
		t.Fatalf("%d failures logged with their retry delay, want %d:\n%s", len(delays), failures, g.Tail(4000))
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] <= delays[i-1] {
			t.Errorf("retry delays %v do not grow: no back-off", delays)
		}
	}
}
