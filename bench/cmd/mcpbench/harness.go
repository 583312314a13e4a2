package main

// Starting targets, interleaving rounds, and reading the gateways' /metrics and /readyz.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	nameDirect = "direct"
	nameRP     = "ReverseProxy"
	nameSDK    = "go-sdk gateway"
	nameMcpgw  = "mcpgw"
	nameAlt    = "mcpgw (alt)"
)

// startEcho runs the echo server over HTTP with tools tools.
func (e *env) startEcho(name string, tools int) (string, error) {
	_, url, err := startReady(e.dir, name, e.self, []string{"echo", "-http", "127.0.0.1:0", "-tools", strconv.Itoa(tools)}, nil)
	return url, err
}

func (e *env) startRP(upstream string, conns int) (*target, error) {
	idle := conns + 32
	if idle < 1024 {
		idle = 1024
	}
	p, url, err := startReady(e.dir, "rproxy", e.self, []string{"rproxy", "-listen", "127.0.0.1:0", "-target", upstream, "-idle", strconv.Itoa(idle)}, nil)
	if err != nil {
		return nil, err
	}
	t := newTarget(nameRP, url, "echo", conns)
	t.proc = p
	return t, nil
}

func (e *env) startSDK(name, upstream string, conns int) (*target, error) {
	p, url, err := startReady(e.dir, name, e.self, []string{"sdkgw", "-listen", "127.0.0.1:0", "-upstream", upstream}, nil)
	if err != nil {
		return nil, err
	}
	t := newTarget(nameSDK, url, "echo", conns)
	t.proc = p
	return t, nil
}

// httpServers is the servers section for streamable HTTP upstreams by name.
func httpServers(urls map[string]string) string {
	var b strings.Builder
	b.WriteString("servers:\n")
	names := make([]string, 0, len(urls))
	for n := range urls {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %s:\n    type: streamable_http\n    url: %s\n", n, urls[n])
	}
	return b.String()
}

// writeMcpgwConfig writes a config file listening on a free port with its own state dir.
func (e *env) writeMcpgwConfig(name, body string) (path, base, state string, err error) {
	addr, err := freeAddr()
	if err != nil {
		return "", "", "", err
	}
	state = filepath.Join(e.dir, name+"-state")
	cfg := fmt.Sprintf("listen: %s\nstate_dir: %s\n%s", addr, state, body)
	path = filepath.Join(e.dir, name+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", "", "", err
	}
	return path, "http://" + addr, state, nil
}

// startMcpgw runs bin/mcpgw serve with body (everything but listen and state_dir) and waits
// for /healthz, then for its upstreams (/readyz no longer starting).
func (e *env) startMcpgw(ctx context.Context, name, body string, conns int) (*target, string, error) {
	return e.startMcpgwEnv(ctx, name, body, conns, nil)
}

// startMcpgwEnv is startMcpgw with extra environment for the daemon.
func (e *env) startMcpgwEnv(ctx context.Context, name, body string, conns int, env []string) (*target, string, error) {
	path, base, state, err := e.writeMcpgwConfig(name, body)
	if err != nil {
		return nil, "", err
	}
	p, err := startPlain(e.dir, name, e.mcpgw, []string{"serve", "--config", path}, env)
	if err != nil {
		return nil, "", err
	}
	if err := waitHTTP(ctx, base+"/healthz", p, 60*time.Second); err != nil {
		return nil, "", err
	}
	if err := waitStarted(ctx, base, p, 60*time.Second); err != nil {
		return nil, "", err
	}
	t := newTarget(nameMcpgw, base+"/mcp", "echo__echo", conns)
	t.proc = p
	return t, state, nil
}

// standardTargets starts the echo upstream with tools tools and, in front of it, the
// ReverseProxy, optionally the go-sdk gateway, and mcpgw (auth none, defaults otherwise).
func (e *env) standardTargets(ctx context.Context, tools, conns int, withSDK bool) ([]*target, error) {
	up, err := e.startEcho("echo", tools)
	if err != nil {
		return nil, err
	}
	ts := []*target{newTarget(nameDirect, up, "echo", conns)}
	rp, err := e.startRP(up, conns)
	if err != nil {
		return nil, err
	}
	ts = append(ts, rp)
	if withSDK {
		sdk, err := e.startSDK("sdkgw", up, conns)
		if err != nil {
			return nil, err
		}
		ts = append(ts, sdk)
	}
	gw, _, err := e.startMcpgw(ctx, "mcpgw", httpServers(map[string]string{"echo": up}), conns)
	if err != nil {
		return nil, err
	}
	ts = append(ts, gw)
	if e.alt != "" {
		bin := e.mcpgw
		e.mcpgw = e.alt
		alt, _, err := e.startMcpgw(ctx, "mcpgw-alt", httpServers(map[string]string{"echo": up}), conns)
		e.mcpgw = bin
		if err != nil {
			return nil, err
		}
		alt.Name = nameAlt
		ts = append(ts, alt)
	}
	return ts, nil
}

var (
	logStart = time.Now()
	smoke    bool // set by run -smoke: settleGC does not wait for GC cycles
)

// logOut is where logf writes (tests capture it).
var logOut io.Writer = os.Stderr

// logf prints progress on stderr with the time since the scenario started.
func logf(format string, a ...any) {
	fmt.Fprintf(logOut, "  [%6.2fs] %s\n", time.Since(logStart).Seconds(), fmt.Sprintf(format, a...))
}

func openAll(ctx context.Context, ts []*target, n int) (map[string][]*session, error) {
	out := map[string][]*session{}
	for _, t := range ts {
		ss, err := t.openMany(ctx, n, 16)
		if err != nil {
			return nil, err
		}
		out[t.Name] = ss
	}
	logf("opened %d sessions on each target", n)
	return out, nil
}

type runFn func(t *target, ss []*session, dur time.Duration) stats

// interleave warms every target up, then runs rounds; each round gives every target one
// turn, in an order that alternates so no target always runs right after another.
func (e *env) interleave(ctx context.Context, ts []*target, ss map[string][]*session, f runFn) map[string][]stats {
	for _, t := range ts {
		f(t, ss[t.Name], e.warmup)
	}
	logf("warm-up done")
	out := map[string][]stats{}
	for r := 0; r < e.rounds && ctx.Err() == nil; r++ {
		order := slices.Clone(ts)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, t := range order {
			meter := t.cpuMeter()
			st := f(t, ss[t.Name], e.roundDur)
			st.CPU, st.CPUMeasured = meter()
			out[t.Name] = append(out[t.Name], st)
		}
		logf("round %d done", r+1)
	}
	return out
}

// summary is one target's rounds reduced to medians.
type summary struct {
	Rate, P50, P99, SchedP99 float64 // per second; µs
	// CPUPerCall is the median over rounds of the target process's CPU time per request,
	// in µs (0: not measured).
	CPUPerCall         float64
	N, Errors, Dropped int
	FirstErr           string
}

func summarize(sts []stats) summary {
	var rate, p50, p99, sp99, cpu []float64
	var s summary
	for _, st := range sts {
		rate = append(rate, st.rate())
		if c := cpuPerCallOf(st); c > 0 {
			cpu = append(cpu, c)
		}
		p50 = append(p50, us(pct(st.Lat, 0.50)))
		p99 = append(p99, us(pct(st.Lat, 0.99)))
		if len(st.Sched) > 0 {
			sp99 = append(sp99, us(pct(st.Sched, 0.99)))
		}
		s.N += st.N
		s.Errors += st.Errors
		s.Dropped += st.Dropped
		if s.FirstErr == "" {
			s.FirstErr = st.FirstErr
		}
	}
	s.Rate, s.P50, s.P99, s.SchedP99, s.CPUPerCall = median(rate), median(p50), median(p99), median(sp99), median(cpu)
	return s
}

func (s summary) data() map[string]any {
	d := map[string]any{"rate_per_s": s.Rate, "p50_us": s.P50, "p99_us": s.P99, "requests": s.N, "errors": s.Errors}
	if s.CPUPerCall > 0 {
		d["cpu_per_call_us"] = s.CPUPerCall
	}
	return d
}

func p50Of(st stats) float64  { return us(pct(st.Lat, 0.50)) }
func p99Of(st stats) float64  { return us(pct(st.Lat, 0.99)) }
func rateOf(st stats) float64 { return st.rate() }

// pairedRatio is the median over rounds of f(a)/f(b): both ran in the same round, close in
// time, so machine noise mostly cancels.
func pairedRatio(a, b []stats, f func(stats) float64) float64 {
	var xs []float64
	for i := 0; i < len(a) && i < len(b); i++ {
		if d := f(b[i]); d > 0 {
			xs = append(xs, f(a[i])/d)
		}
	}
	return median(xs)
}

// pairedDiff is the median over rounds of f(a)-f(b).
func pairedDiff(a, b []stats, f func(stats) float64) float64 {
	var xs []float64
	for i := 0; i < len(a) && i < len(b); i++ {
		xs = append(xs, f(a[i])-f(b[i]))
	}
	return median(xs)
}

func errCell(s summary) string {
	if s.Errors == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%.80s)", s.Errors, strings.ReplaceAll(s.FirstErr, "|", "/"))
}

// scrape reads a Prometheus text page and sums every series of each metric name.
func scrape(base string) (map[string]float64, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/metrics: HTTP %d", base, resp.StatusCode)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out, sc.Err()
}

// settleGC drives cheap pings until the process has finished two more GC cycles, then
// reads its metrics: the heap then holds what is live plus little garbage.
func settleGC(ctx context.Context, t *target, ss []*session) (map[string]float64, error) {
	m, err := scrape(t.Base)
	if err != nil {
		return nil, err
	}
	c0 := m["go_gc_duration_seconds_count"]
	bound := 20 * time.Second
	if smoke {
		bound = 300 * time.Millisecond
	}
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		closedLoop(ctx, ss, pingOp(), 100*time.Millisecond, 1<<20)
		if m, err = scrape(t.Base); err != nil {
			return nil, err
		}
		if m["go_gc_duration_seconds_count"] >= c0+2 {
			break
		}
	}
	if !smoke && m["go_gc_duration_seconds_count"] < c0+2 {
		// Reading now would count garbage as sessions' memory: say so instead.
		return nil, fmt.Errorf("%s: pings did not drive two GC cycles within %s (heap readings would include garbage)", t.Name, bound)
	}
	time.Sleep(300 * time.Millisecond)
	return scrape(t.Base)
}

// readyState is the part of /readyz the cold-start measurement reads.
type readyState struct {
	Upstreams []struct {
		Name  string `json:"name"`
		State string `json:"state"`
		Tools int    `json:"tools"`
	} `json:"upstreams"`
}

// waitAggregated polls /readyz every millisecond until every upstream is up and their
// tools add up to want; it returns the time since the process was started.
func waitAggregated(ctx context.Context, p *proc, base string, want int, bound time.Duration) (time.Duration, error) {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if resp, err := c.Get(base + "/readyz"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			at := time.Now()
			var rs readyState
			if json.Unmarshal(b, &rs) == nil && len(rs.Upstreams) > 0 {
				n, up := 0, true
				for _, u := range rs.Upstreams {
					n += u.Tools
					up = up && u.State == "up"
				}
				if up && n >= want {
					return at.Sub(p.started), nil
				}
			}
		}
		select {
		case <-p.exited:
			return 0, fmt.Errorf("%s exited:\n%s", p.name, tail(p.logPath))
		case <-time.After(time.Millisecond):
		}
	}
	return 0, fmt.Errorf("%s: upstreams not aggregated within %s", p.name, bound)
}
