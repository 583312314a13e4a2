package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func (e *env) methodNote(extra string) string {
	return fmt.Sprintf("%s Every target runs in its own process on this machine, and so does the load client. "+
		"%d interleaved rounds of %s per target after a %s warm-up (the order alternates each round); "+
		"numbers are medians over rounds, ratios and differences are medians of per-round pairs.",
		extra, e.rounds, e.roundDur, e.warmup)
}

func (e *env) params(r *Result) {
	r.Params["rounds"] = e.rounds
	r.Params["round"] = e.roundDur.String()
	r.Params["warmup"] = e.warmup.String()
}

// S1: tools/call, one client, sequential.
func s1(ctx context.Context, e *env, r *Result) error {
	noteNotBaseline(r, "@1mcp/agent")
	r.Title = "tools/call, one client, sequential"
	r.Method = e.methodNote("One session per target, one tools/call at a time (echo tool, 70-byte arguments), keep-alive HTTP/1.1, hand-built bodies.")
	e.params(r)
	ts, err := e.standardTargets(ctx, 1, 1, true)
	if err != nil {
		return err
	}
	legacy, why := e.legacyPair(ctx, ts, 1)
	if why != "" {
		skipBaseline(r, "mcp-hub (aggregation gateway from npm)", why)
	}
	ts = append(ts, legacy...)
	ss, err := openAll(ctx, ts, 1)
	if err != nil {
		return err
	}
	res := e.interleave(ctx, ts, ss, func(t *target, s []*session, d time.Duration) stats {
		return closedLoop(ctx, s, callOp(t.Tool), d, 1<<20)
	})
	tb := r.table("", "target", "calls/s", "p50", "p99", "errors", "p50 / direct", "p50 / ReverseProxy", "p99 − direct p99", "CPU / call")
	for _, t := range ts {
		s := summarize(res[t.Name])
		d := s.data()
		vsD := pairedRatio(res[t.Name], res[nameDirect], p50Of)
		vsRP := pairedRatio(res[t.Name], res[nameRP], p50Of)
		p99d := pairedDiff(res[t.Name], res[nameDirect], p99Of)
		d["p50_vs_direct"], d["p50_vs_reverseproxy"], d["p99_minus_direct_us"] = vsD, vsRP, p99d
		tb.add(d, t.Name, fmtRate(s.Rate), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)), errCell(s),
			fmtRatio(vsD), fmtRatio(vsRP), fmt.Sprintf("%+.0f µs", p99d), fmtCPU(s))
	}
	cpuNote(r, res, "")
	g := res[nameMcpgw]
	vsRP := pairedRatio(g, res[nameRP], p50Of)
	vsD := pairedRatio(g, res[nameDirect], p50Of)
	p99d := pairedDiff(g, res[nameDirect], p99Of)
	r.check("mcpgw p50 vs ReverseProxy", "≤ 1.15×", fmtRatio(vsRP), vsRP <= 1.15)
	r.check("mcpgw p50 vs direct", "≤ 2.5×", fmtRatio(vsD), vsD <= 2.5)
	r.check("mcpgw p99 vs direct p99", "≤ +500 µs", fmt.Sprintf("%+.0f µs", p99d), p99d <= 500)
	r.check("mcpgw errors", "0", fmt.Sprint(summarize(g).Errors), summarize(g).Errors == 0)
	if len(legacy) > 0 {
		r.note("Aggregation gateway from npm, same transport (legacy HTTP+SSE) on both sides: mcpgw /sse p50 %s vs mcp-hub %s (%s), p99 %s vs %s.",
			fmtDur(time.Duration(summarize(res[nameMcpgwLegacy]).P50*1e3)), fmtDur(time.Duration(summarize(res[nameMcpHub]).P50*1e3)),
			fmtRatio(pairedRatio(res[nameMcpgwLegacy], res[nameMcpHub], p50Of)),
			fmtDur(time.Duration(summarize(res[nameMcpgwLegacy]).P99*1e3)), fmtDur(time.Duration(summarize(res[nameMcpHub]).P99*1e3)))
	}
	return nil
}

// S2: saturation with 16, 64 and 256 concurrent clients.
func s2(ctx context.Context, e *env, r *Result) error {
	noteNotBaseline(r, "@1mcp/agent")
	r.Title = "saturation: 16, 64, 256 concurrent clients"
	r.Method = e.methodNote("Each client is its own session sending tools/call back to back (closed loop).")
	e.params(r)
	levels := []int{16, 64, 256}
	r.Params["clients"] = levels
	ts, err := e.standardTargets(ctx, 1, 256, true)
	if err != nil {
		return err
	}
	legacy, why := e.legacyPair(ctx, ts, 256)
	if why != "" {
		skipBaseline(r, "mcp-hub (aggregation gateway from npm)", why)
	}
	ts = append(ts, legacy...)
	for _, c := range levels {
		ss, err := openAll(ctx, ts, c)
		if err != nil {
			return err
		}
		res := e.interleave(ctx, ts, ss, func(t *target, s []*session, d time.Duration) stats {
			return closedLoop(ctx, s, callOp(t.Tool), d, 1<<20)
		})
		tb := r.table(fmt.Sprintf("%d clients", c), "target", "calls/s", "p50", "p99", "errors", "throughput / ReverseProxy", "throughput / go-sdk gateway", "CPU / call")
		for _, t := range ts {
			s := summarize(res[t.Name])
			d := s.data()
			d["clients"] = c
			vsRP := pairedRatio(res[t.Name], res[nameRP], rateOf)
			vsSDK := pairedRatio(res[t.Name], res[nameSDK], rateOf)
			d["rate_vs_reverseproxy"], d["rate_vs_sdk"] = vsRP, vsSDK
			tb.add(d, t.Name, fmtRate(s.Rate), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)), errCell(s), fmtRatio(vsRP), fmtRatio(vsSDK), fmtCPU(s))
		}
		cpuNote(r, res, fmt.Sprintf("%d clients: ", c))
		g := res[nameMcpgw]
		vsRP := pairedRatio(g, res[nameRP], rateOf)
		vsSDK := pairedRatio(g, res[nameSDK], rateOf)
		r.check(fmt.Sprintf("mcpgw throughput vs ReverseProxy, %d clients", c), "≥ 1.0×", fmtRatio(vsRP), vsRP >= 1.0)
		r.check(fmt.Sprintf("mcpgw throughput vs go-sdk gateway, %d clients", c), "≥ 10×", fmtRatio(vsSDK), vsSDK >= 10)
		r.check(fmt.Sprintf("mcpgw errors, %d clients", c), "0", fmt.Sprint(summarize(g).Errors), summarize(g).Errors == 0)
		if len(legacy) > 0 {
			r.note("%d clients, legacy HTTP+SSE on both sides: mcpgw /sse %s calls/s vs mcp-hub (npm) %s (%s the throughput).", c,
				fmtRate(summarize(res[nameMcpgwLegacy]).Rate), fmtRate(summarize(res[nameMcpHub]).Rate),
				fmtRatio(pairedRatio(res[nameMcpgwLegacy], res[nameMcpHub], rateOf)))
		}
	}
	return nil
}

// S3: fixed rate.
func s3(ctx context.Context, e *env, r *Result) error {
	r.Title = "fixed rate: 1,000 and 3,000 tools/call per second"
	r.Method = e.methodNote("An open-loop dispatcher releases requests at a fixed rate to 32 client sessions per target (a tick that finds them all busy would be dropped and counted). " +
		"p50/p99 are from send to answer; \"p99 from schedule\" counts from the tick's scheduled time, so dispatcher and client delays show there. The go-sdk gateway is left out: it cannot sustain these rates here (S2).")
	e.params(r)
	rates := []int{1000, 3000}
	limits := map[int]float64{1000: 600, 3000: 1000}
	r.Params["rates"] = rates
	up, err := e.startEcho("echo", 1)
	if err != nil {
		return err
	}
	rp, err := e.startRP(up, 32)
	if err != nil {
		return err
	}
	gw, _, err := e.startMcpgw(ctx, "mcpgw", httpServers(map[string]string{"echo": up}), 32)
	if err != nil {
		return err
	}
	ts := []*target{newTarget(nameDirect, up, "echo", 32), rp, gw}
	ss, err := openAll(ctx, ts, 32)
	if err != nil {
		return err
	}
	for _, rate := range rates {
		res := e.interleave(ctx, ts, ss, func(t *target, s []*session, d time.Duration) stats {
			return fixedRate(ctx, s, callOp(t.Tool), rate, d)
		})
		tb := r.table(fmt.Sprintf("%d calls/s", rate), "target", "achieved/s", "p50", "p99", "p99 from schedule", "errors", "dropped", "p99 − direct p99")
		for _, t := range ts {
			s := summarize(res[t.Name])
			d := s.data()
			d["rate_target"], d["p99_from_schedule_us"], d["dropped"] = rate, s.SchedP99, s.Dropped
			p99d := pairedDiff(res[t.Name], res[nameDirect], p99Of)
			tb.add(d, t.Name, fmtRate(s.Rate), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)),
				fmtDur(time.Duration(s.SchedP99*1e3)), errCell(s), fmt.Sprint(s.Dropped), fmt.Sprintf("%+.0f µs", p99d))
		}
		g := summarize(res[nameMcpgw])
		r.check(fmt.Sprintf("mcpgw p99 at %d/s", rate), fmt.Sprintf("≤ %.0f µs", limits[rate]), fmtDur(time.Duration(g.P99*1e3)), g.P99 <= limits[rate])
		r.check(fmt.Sprintf("mcpgw errors at %d/s", rate), "0", fmt.Sprint(g.Errors+g.Dropped), g.Errors+g.Dropped == 0)
	}
	return nil
}

// S4: tools/list of 1,000 aggregated tools, and cold aggregation.
func s4(ctx context.Context, e *env, r *Result) error {
	r.Title = "tools/list with 1,000 tools; cold aggregation"
	r.Method = e.methodNote("The echo upstream lists 1,000 tools (about 270 KB). p50/p99 from one sequential client; req/s from 8 concurrent clients. " +
		"Cold aggregation: time from starting the gateway process until its /readyz shows every upstream up with all tools (polled every 1 ms); mcpgw uses its default bolt store in a fresh state dir.")
	e.params(r)
	ts, err := e.standardTargets(ctx, 1000, 8, true)
	if err != nil {
		return err
	}
	ss, err := openAll(ctx, ts, 8)
	if err != nil {
		return err
	}
	one := map[string][]*session{}
	for k, v := range ss {
		one[k] = v[:1]
	}
	seq := e.interleave(ctx, ts, one, func(t *target, s []*session, d time.Duration) stats {
		return closedLoop(ctx, s, listOp(), d, 1<<20)
	})
	par := e.interleave(ctx, ts, ss, func(t *target, s []*session, d time.Duration) stats {
		return closedLoop(ctx, s, listOp(), d, 1<<20)
	})
	tb := r.table("tools/list", "target", "p50 (1 client)", "p99 (1 client)", "lists/s (8 clients)", "errors", "p50 / direct", "lists/s / ReverseProxy")
	for _, t := range ts {
		s1, s8 := summarize(seq[t.Name]), summarize(par[t.Name])
		vsD := pairedRatio(seq[t.Name], seq[nameDirect], p50Of)
		vsRP := pairedRatio(par[t.Name], par[nameRP], rateOf)
		d := map[string]any{"p50_us": s1.P50, "p99_us": s1.P99, "rate_8_clients": s8.Rate, "errors": s1.Errors + s8.Errors, "p50_vs_direct": vsD, "rate_vs_reverseproxy": vsRP}
		s1.Errors += s8.Errors
		tb.add(d, t.Name, fmtDur(time.Duration(s1.P50*1e3)), fmtDur(time.Duration(s1.P99*1e3)), fmtRate(s8.Rate), errCell(s1), fmtRatio(vsD), fmtRatio(vsRP))
	}
	g1, g8 := summarize(seq[nameMcpgw]), summarize(par[nameMcpgw])
	r.check("mcpgw tools/list p50", "≤ 1 ms", fmtDur(time.Duration(g1.P50*1e3)), g1.P50 <= 1000)
	r.check("mcpgw tools/list with 8 clients", "≥ 2,500/s", fmtRate(g8.Rate)+"/s", g8.Rate >= 2500)
	for _, t := range ts {
		if t.proc != nil {
			t.stop()
		}
	}

	// Cold aggregation: one upstream with 1,000 tools, and four with 250 each.
	one1000, err := e.startEcho("echo-1000", 1000)
	if err != nil {
		return err
	}
	four := map[string]string{}
	for i := 1; i <= 4; i++ {
		u, err := e.startEcho(fmt.Sprintf("echo-250-%d", i), 250)
		if err != nil {
			return err
		}
		four[fmt.Sprintf("e%d", i)] = u
	}
	r.Params["cold_runs"] = e.coldRuns
	cold := r.table("cold aggregation (process start → /readyz shows all tools)", "gateway", "upstreams", "median", "min", "max")
	type coldCase struct {
		name, label string
		servers     map[string]string
		sdk         bool
	}
	cases := []coldCase{
		{"mcpgw", "1 × 1,000 tools", map[string]string{"echo": one1000}, false},
		{"mcpgw", "4 × 250 tools", four, false},
		{nameSDK, "1 × 1,000 tools", nil, true},
	}
	for ci, c := range cases {
		var xs []float64
		for i := 0; i < e.coldRuns && ctx.Err() == nil; i++ {
			var p *proc
			var base string
			if c.sdk {
				addr, err := freeAddr()
				if err != nil {
					return err
				}
				p, err = startPlain(e.dir, fmt.Sprintf("cold-sdk-%d", i), e.self, []string{"sdkgw", "-listen", addr, "-upstream", one1000}, nil)
				if err != nil {
					return err
				}
				base = "http://" + addr
			} else {
				path, b, _, err := e.writeMcpgwConfig(fmt.Sprintf("cold-%d-%d", ci, i), httpServers(c.servers))
				if err != nil {
					return err
				}
				base = b
				if p, err = startPlain(e.dir, fmt.Sprintf("cold-%d-%d", ci, i), e.mcpgw, []string{"serve", "--config", path}, nil); err != nil {
					return err
				}
			}
			d, err := waitAggregated(ctx, p, base, 1000, 30*time.Second)
			p.stop()
			if err != nil {
				return err
			}
			xs = append(xs, float64(d)/1e6)
		}
		lo, hi := xs[0], xs[0]
		for _, x := range xs {
			lo, hi = min(lo, x), max(hi, x)
		}
		m := median(xs)
		cold.add(map[string]any{"gateway": c.name, "upstreams": c.label, "median_ms": m, "min_ms": lo, "max_ms": hi, "runs_ms": xs},
			c.name, c.label, fmt.Sprintf("%.1f ms", m), fmt.Sprintf("%.1f ms", lo), fmt.Sprintf("%.1f ms", hi))
		if !c.sdk {
			r.check("mcpgw cold aggregation, "+c.label, "≤ 50 ms", fmt.Sprintf("%.1f ms", m), m <= 50)
		}
	}
	return nil
}

// idleCase is one gateway measured for idle sessions (S5) or open streams (S6).
type idleCase struct {
	label string
	start func() (*target, error)
}

func (e *env) idleCases(ctx context.Context, up string, prefix string) []idleCase {
	return []idleCase{
		// GOGC=100 (mcpgw's default is 400) only so that the pings of settleGC drive
		// collections within its bound with 10,000 sessions' worth of live heap; the live
		// heap per session, which S5 and S6 measure, does not depend on it.
		{"mcpgw (bolt store, default)", func() (*target, error) {
			t, _, err := e.startMcpgwEnv(ctx, prefix+"-mcpgw-bolt", httpServers(map[string]string{"echo": up}), 64, []string{"GOGC=100"})
			return t, err
		}},
		{"mcpgw (memory store)", func() (*target, error) {
			t, _, err := e.startMcpgwEnv(ctx, prefix+"-mcpgw-mem", "store: memory\n"+httpServers(map[string]string{"echo": up}), 64, []string{"GOGC=100"})
			return t, err
		}},
		{nameSDK, func() (*target, error) { return e.startSDK(prefix+"-sdkgw", up, 64) }},
	}
}

// startSettled starts the gateway with 8 long-lived sessions (they drive settleGC) and
// takes its settled baseline reading.
func (c idleCase) startSettled(ctx context.Context) (*target, []*session, map[string]float64, error) {
	t, err := c.start()
	if err != nil {
		return nil, nil, nil, err
	}
	warm, err := t.openMany(ctx, 8, 8)
	if err != nil {
		return nil, nil, nil, err
	}
	t.client.CloseIdleConnections()
	m0, err := settleGC(ctx, t, warm)
	if err != nil {
		return nil, nil, nil, err
	}
	return t, warm, m0, nil
}

// S5: 10,000 idle sessions.
func s5(ctx context.Context, e *env, r *Result) error {
	n := e.sessionsN
	r.Title = fmt.Sprintf("%d idle sessions", n)
	r.Method = fmt.Sprintf("Each gateway starts fresh. Sessions are set up (initialize + notifications/initialized) by 16 parallel clients; set-up rate is sessions per second of that phase. "+
		"Heap and goroutines come from the gateway's /metrics (go_memstats_heap_inuse_bytes, go_goroutines), read before and after, each time after pings on 8 other sessions drove two more GC cycles, so little garbage is counted (mcpgw runs with GOGC=100 here, not its default 400, so that pings drive collections within 20 s; the live heap per session does not depend on it; a reading that did not settle fails the scenario instead of counting garbage). "+
		"Heap per session = (after − before) / %d.", n)
	r.Params["sessions"] = n
	up, err := e.startEcho("echo", 1)
	if err != nil {
		return err
	}
	tb := r.table("", "gateway", "set-up/s", "heap before", "heap after", "heap per session", "goroutines per session", "sessions active")
	for _, c := range e.idleCases(ctx, up, "s5") {
		t, warm, m0, err := c.startSettled(ctx)
		if err != nil {
			return err
		}
		start := time.Now()
		ss, err := t.openMany(ctx, n, 16)
		setup := time.Since(start)
		if err != nil {
			return err
		}
		t.client.CloseIdleConnections() // the set-up connections' server goroutines are not sessions'
		m1, err := settleGC(ctx, t, warm)
		if err != nil {
			return err
		}
		rate := float64(len(ss)) / setup.Seconds()
		heap := (m1["go_memstats_heap_inuse_bytes"] - m0["go_memstats_heap_inuse_bytes"]) / float64(n)
		gor := (m1["go_goroutines"] - m0["go_goroutines"]) / float64(n)
		active := fmt.Sprint(m1["mcpgw_sessions_active"])
		if c.label == nameSDK {
			active = "–"
		}
		tb.add(map[string]any{"gateway": c.label, "setup_per_s": rate, "heap_before": m0["go_memstats_heap_inuse_bytes"], "heap_after": m1["go_memstats_heap_inuse_bytes"],
			"heap_per_session": heap, "goroutines_per_session": gor, "goroutines_before": m0["go_goroutines"], "goroutines_after": m1["go_goroutines"]},
			c.label, fmtRate(rate), fmtBytes(m0["go_memstats_heap_inuse_bytes"]), fmtBytes(m1["go_memstats_heap_inuse_bytes"]), fmtBytes(heap), fmt.Sprintf("%.3f", gor), active)
		if c.label != nameSDK {
			r.check(c.label+": heap per idle session", "≤ 6 KB", fmtBytes(heap), heap <= 6*1024)
			r.check(c.label+": goroutines per idle session", "0 (< 0.01)", fmt.Sprintf("%.3f", gor), gor < 0.01)
			r.check(c.label+": session set-up rate", "≥ 2,000/s", fmtRate(rate)+"/s", rate >= 2000)
		}
		t.stop()
	}
	return nil
}

// S6: sessions with an open GET stream.
func s6(ctx context.Context, e *env, r *Result) error {
	n := e.sessionsN
	r.Title = fmt.Sprintf("%d sessions with an open GET stream", n)
	r.Method = fmt.Sprintf("Like S5, then every session opens its GET stream (one raw TCP connection each, held open without a client goroutine). "+
		"Heap and goroutines per session = (after streams − before sessions) / %d, both read after two GC cycles driven by pings.", n)
	r.Params["sessions"] = n
	up, err := e.startEcho("echo", 1)
	if err != nil {
		return err
	}
	tb := r.table("", "gateway", "heap per session", "goroutines per session", "streams open", "stream open/s")
	for _, c := range e.idleCases(ctx, up, "s6") {
		if c.label == "mcpgw (memory store)" {
			continue
		}
		t, warm, m0, err := c.startSettled(ctx)
		if err != nil {
			return err
		}
		ss, err := t.openMany(ctx, n, 16)
		if err != nil {
			return err
		}
		start := time.Now()
		streams, err := openStreams(ctx, ss, 16)
		elapsed := time.Since(start)
		if err != nil {
			closeStreams(streams)
			return err
		}
		t.client.CloseIdleConnections()
		m1, err := settleGC(ctx, t, warm)
		if err != nil {
			closeStreams(streams)
			return err
		}
		heap := (m1["go_memstats_heap_inuse_bytes"] - m0["go_memstats_heap_inuse_bytes"]) / float64(n)
		gor := (m1["go_goroutines"] - m0["go_goroutines"]) / float64(n)
		open := countOpen(streams)
		tb.add(map[string]any{"gateway": c.label, "heap_per_session": heap, "goroutines_per_session": gor, "streams": open},
			c.label, fmtBytes(heap), fmt.Sprintf("%.3f", gor), fmt.Sprint(open), fmtRate(float64(len(streams))/elapsed.Seconds()))
		if c.label != nameSDK {
			r.check(c.label+": heap per session with GET stream", "≤ 25 KB", fmtBytes(heap), heap <= 25*1024)
			r.check(c.label+": goroutines per session with GET stream", "≤ 2", fmt.Sprintf("%.3f", gor), gor <= 2.005)
			r.check(c.label+": streams still open", fmt.Sprint(n), fmt.Sprint(open), open == n)
		}
		closeStreams(streams)
		t.stop()
	}
	return nil
}

// S8: the stdio bridge.
func s8(ctx context.Context, e *env, r *Result) error {
	r.Title = "stdio bridge: mcpgw-bridge → daemon socket → stdio upstream, vs direct stdio"
	r.Method = e.methodNote("Sequential tools/call over newline-delimited stdio: directly to the echo server (`mcpbench echo -stdio`), and through `bin/mcpgw-bridge` to the daemon's Unix socket, whose upstream is the same echo server over stdio (a per-session instance behind the guardian process). The bridge speaks the socket's line mode (one JSON-RPC message per line, the default); the `--socket-http` row is the same bridge with one HTTP exchange per message on the same socket. " +
		"Where installed (make bench), supergateway from npm is a baseline too: the same echo server over stdio behind `supergateway --stdio … --outputTransport streamableHttp --stateful` (one child per session, logging off), compared with the mcpgw daemon over HTTP, sequentially and with 16 concurrent clients. " +
		fmt.Sprintf("Then %d tools/call written at once without waiting (in flight together), on each stdio path.", e.burstN))
	e.params(r)
	r.Params["burst"] = e.burstN
	body := fmt.Sprintf("servers:\n  echo:\n    type: stdio\n    command: %s\n    args: [echo, -stdio]\n", e.self)
	_, base, state, err := e.startMcpgwRaw(ctx, "mcpgw-daemon", body)
	if err != nil {
		return err
	}
	sock := filepath.Join(state, "mcpgw.sock")
	dp, err := startStdio(e.dir, "echo-stdio", e.self, []string{"echo", "-stdio"}, nil)
	if err != nil {
		return err
	}
	bp, err := startStdio(e.dir, "bridge", e.bridge, []string{"--socket", sock}, nil)
	if err != nil {
		return err
	}
	const nameBridgeHTTP = "mcpgw-bridge --socket-http"
	bh, err := startStdio(e.dir, "bridge-http", e.bridge, []string{"--socket", sock, "--socket-http"}, nil)
	if err != nil {
		return err
	}
	peers := []*stdioPeer{newStdioPeer("direct stdio", dp), newStdioPeer("mcpgw-bridge", bp), newStdioPeer(nameBridgeHTTP, bh)}
	tools := map[string]string{"direct stdio": "echo", "mcpgw-bridge": "echo__echo", nameBridgeHTTP: "echo__echo"}
	for _, p := range peers {
		if err := p.init(30 * time.Second); err != nil {
			return err
		}
	}
	// The same daemon over TCP without the bridge, to tell the bridge's share from the
	// daemon's.
	const nameHTTP = "mcpgw over HTTP, no bridge"
	ht := newTarget(nameHTTP, base+"/mcp", "echo__echo", 1)
	hs, err := ht.open(ctx)
	if err != nil {
		return err
	}
	var paths []benchPath
	for _, p := range peers {
		paths = append(paths, benchPath{p.name, func(d time.Duration) stats { return p.sequential(callOp(tools[p.name]), d, 1<<20) }})
	}
	paths = append(paths, benchPath{nameHTTP, func(d time.Duration) stats {
		return closedLoop(ctx, []*session{hs}, callOp(ht.Tool), d, 1<<20)
	}})
	// supergateway from npm: the same echo server over stdio behind a stdio → streamable
	// HTTP gateway, what a user would pick instead of mcpgw for "my stdio server over HTTP".
	sgWhy := e.npmSkip("supergateway")
	var sg *target
	if sgWhy == "" {
		if sg, err = e.startSupergateway(ctx, "supergateway", 1); err != nil {
			return err
		}
		ss, err := sg.open(ctx)
		if err != nil {
			return err
		}
		paths = append(paths, benchPath{sg.Name, func(d time.Duration) stats {
			return closedLoop(ctx, []*session{ss}, callOp(sg.Tool), d, 1<<20)
		}})
		r.Params["node"] = e.nodeVersion()
	} else {
		skipBaseline(r, "supergateway", sgWhy)
	}
	res, err := e.runPaths(ctx, paths)
	if err != nil {
		return err
	}
	tb := r.table("sequential", "path", "calls/s", "p50", "p99", "errors", "p50 added over direct")
	for _, p := range paths {
		s := summarize(res[p.name])
		add := pairedDiff(res[p.name], res["direct stdio"], p50Of)
		d := s.data()
		d["p50_added_us"] = add
		tb.add(d, p.name, fmtRate(s.Rate), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)), errCell(s), fmt.Sprintf("%+.0f µs", add))
	}
	r.note("The socket's line mode against one HTTP exchange per message on the same socket (`--socket-http`): %+.0f µs at p50; against a client speaking HTTP to the daemon directly (no bridge): %+.0f µs.",
		pairedDiff(res["mcpgw-bridge"], res[nameBridgeHTTP], p50Of), pairedDiff(res["mcpgw-bridge"], res[nameHTTP], p50Of))
	add := pairedDiff(res["mcpgw-bridge"], res["direct stdio"], p50Of)
	r.check("bridge p50 over direct stdio", "≤ +150 µs", fmt.Sprintf("%+.0f µs", add), add <= 150)
	if sg != nil {
		r.note("stdio server behind an HTTP gateway, one sequential client: mcpgw p50 %s vs supergateway %s (%s), p99 %s vs %s.",
			fmtDur(time.Duration(summarize(res[nameHTTP]).P50*1e3)), fmtDur(time.Duration(summarize(res[sg.Name]).P50*1e3)),
			fmtRatio(pairedRatio(res[nameHTTP], res[sg.Name], p50Of)),
			fmtDur(time.Duration(summarize(res[nameHTTP]).P99*1e3)), fmtDur(time.Duration(summarize(res[sg.Name]).P99*1e3)))
		if err := e.s8Concurrent(ctx, r, base, nameHTTP, sg.URL); err != nil {
			return err
		}
	}
	bt := r.table(fmt.Sprintf("%d in flight", e.burstN), "path", "answered", "errors", "time for all")
	for _, p := range peers {
		st := p.burst(callOp(tools[p.name]), e.burstN, 60*time.Second)
		s := summarize([]stats{st})
		bt.add(map[string]any{"path": p.name, "answered": st.N, "errors": st.Errors, "elapsed_ms": float64(st.Elapsed) / 1e6},
			p.name, fmt.Sprint(st.N), errCell(s), fmtDur(st.Elapsed))
		if p.name == "mcpgw-bridge" {
			r.check(fmt.Sprintf("bridge: %d in flight", e.burstN), "0 errors", fmt.Sprintf("%d errors, %d answered", st.Errors, st.N), st.Errors == 0 && st.N == e.burstN)
		}
	}
	return nil
}

// benchPath is one way S8 reaches the echo server; run measures it for d.
type benchPath struct {
	name string
	run  func(d time.Duration) stats
}

// runPaths warms every path up (one with errors fails the scenario), then runs them in
// e.rounds interleaved rounds, every other round in reverse order.
func (e *env) runPaths(ctx context.Context, paths []benchPath) (map[string][]stats, error) {
	res := map[string][]stats{}
	for _, p := range paths {
		var st stats
		if err := withTimeout(e.warmup+30*time.Second, p.name+" warm-up", func() error {
			st = p.run(e.warmup)
			return nil
		}); err != nil {
			return nil, err
		}
		if st.Errors > 0 {
			return nil, fmt.Errorf("%s: warm-up: %s", p.name, st.FirstErr)
		}
	}
	logf("warm-up done")
	for round := 0; round < e.rounds && ctx.Err() == nil; round++ {
		order := append([]benchPath(nil), paths...)
		if round%2 == 1 {
			for i, j := 0, len(order)-1; i < j; i, j = i+1, j-1 {
				order[i], order[j] = order[j], order[i]
			}
		}
		for _, p := range order {
			res[p.name] = append(res[p.name], p.run(e.roundDur))
		}
		logf("round %d done", round+1)
	}
	return res, nil
}

// s8Concurrent compares mcpgw and supergateway, each in front of the echo server over stdio
// with one instance per session, under concurrent clients (one session each): throughput and
// latency, interleaved rounds.
func (e *env) s8Concurrent(ctx context.Context, r *Result, base, nameHTTP, sgURL string) error {
	const clients = 16
	r.Params["concurrent_clients"] = clients
	gw := newTarget(nameHTTP, base+"/mcp", "echo__echo", clients)
	sg := newTarget(nameSupergateway, sgURL, "echo", clients)
	ts := []*target{gw, sg}
	ss, err := openAll(ctx, ts, clients)
	if err != nil {
		return err
	}
	res := e.interleave(ctx, ts, ss, func(t *target, s []*session, d time.Duration) stats {
		return closedLoop(ctx, s, callOp(t.Tool), d, 1<<20)
	})
	tb := r.table(fmt.Sprintf("stdio server behind an HTTP gateway, %d clients (one session and one stdio instance each)", clients),
		"gateway", "calls/s", "p50", "p99", "errors", "throughput / supergateway", "p50 / supergateway")
	for _, t := range ts {
		s := summarize(res[t.Name])
		d := s.data()
		d["clients"] = clients
		vsT := pairedRatio(res[t.Name], res[sg.Name], rateOf)
		vsL := pairedRatio(res[t.Name], res[sg.Name], p50Of)
		d["rate_vs_supergateway"], d["p50_vs_supergateway"] = vsT, vsL
		tb.add(d, t.Name, fmtRate(s.Rate), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)), errCell(s), fmtRatio(vsT), fmtRatio(vsL))
	}
	for _, t := range ts {
		for _, s := range ss[t.Name] {
			s.close()
		}
	}
	return nil
}

// startMcpgwRaw is startMcpgw without a target (S8 talks to it over its socket).
func (e *env) startMcpgwRaw(ctx context.Context, name, body string) (*proc, string, string, error) {
	t, state, err := e.startMcpgw(ctx, name, body, 1)
	if err != nil {
		return nil, "", "", err
	}
	return t.proc, t.Base, state, nil
}

// S10: auth and view filtering on vs off.
func s10(ctx context.Context, e *env, r *Result) error {
	r.Title = "auth and view filtering on vs off"
	r.Method = e.methodNote("Two mcpgw daemons in front of the same echo upstream: auth mode none, and auth mode api_key (Bearer key, SHA-256 lookup) with 20 agents, the caller's agent restricted by tools.allow/deny globs. One sequential client each.")
	e.params(r)
	up, err := e.startEcho("echo", 10)
	if err != nil {
		return err
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	key := "mcpgw_" + hex.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(key))
	servers := httpServers(map[string]string{"echo": up})
	on := "auth:\n  mode: api_key\n  api_keys:\n    - {agent: bench, sha256: " + hex.EncodeToString(sum[:]) + "}\nagents:\n" +
		"  bench:\n    servers: [echo]\n    tools: {allow: [\"echo__ec*\", \"echo__tool_000*\"], deny: [\"echo__tool_0009\"]}\n"
	for i := 1; i < 20; i++ {
		on += fmt.Sprintf("  agent-%02d:\n    servers: [echo]\n    tools: {deny: [\"echo__tool_*\"]}\n", i)
	}
	off, _, err := e.startMcpgw(ctx, "mcpgw-auth-off", servers, 1)
	if err != nil {
		return err
	}
	off.Name = "mcpgw, auth none"
	onT, _, err := e.startMcpgw(ctx, "mcpgw-auth-on", on+servers, 1)
	if err != nil {
		return err
	}
	onT.Name = "mcpgw, api_key + tools.allow"
	onT.Header = map[string]string{"Authorization": "Bearer " + key}
	ts := []*target{newTarget(nameDirect, up, "echo", 1), off, onT}
	ss, err := openAll(ctx, ts, 1)
	if err != nil {
		return err
	}
	res := e.interleave(ctx, ts, ss, func(t *target, s []*session, d time.Duration) stats {
		return closedLoop(ctx, s, callOp(t.Tool), d, 1<<20)
	})
	tb := r.table("", "target", "calls/s", "p50", "p99", "errors", "p50 − auth none")
	for _, t := range ts {
		s := summarize(res[t.Name])
		diff := pairedDiff(res[t.Name], res[off.Name], p50Of)
		d := s.data()
		d["p50_minus_auth_off_us"] = diff
		tb.add(d, t.Name, fmtRate(s.Rate), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)), errCell(s), fmt.Sprintf("%+.0f µs", diff))
	}
	diff := pairedDiff(res[onT.Name], res[off.Name], p50Of)
	r.check("p50 with auth and filtering on, over off", "≤ +30 µs", fmt.Sprintf("%+.0f µs", diff), diff <= 30)
	r.check("errors with auth on", "0", fmt.Sprint(summarize(res[onT.Name]).Errors), summarize(res[onT.Name]).Errors == 0)
	return nil
}

var _ = os.Getenv
