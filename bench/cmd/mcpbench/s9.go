package main

// S9 runs the in-process benchmarks of the main module (go test -bench) and, outside smoke
// runs, profiles the forwarding path and lists its top allocation and CPU sites.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

type benchLine struct {
	Name    string             `json:"name"`
	N       int                `json:"n"`
	Metrics map[string]float64 `json:"metrics"`
}

func parseBench(out string) []benchLine {
	var ls []benchLine
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		b := benchLine{Name: f[0], N: n, Metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				b.Metrics[f[i+1]] = v
			}
		}
		ls = append(ls, b)
	}
	return ls
}

func (e *env) goTest(ctx context.Context, pkg, bench string, extra ...string) (string, error) {
	args := append([]string{"test", "-run", "^$", "-bench", bench, "-benchmem", "-benchtime", e.benchTime, "-count", "1"}, extra...)
	args = append(args, pkg)
	cmd := exec.CommandContext(ctx, e.goBin, args...)
	cmd.Dir = e.repo
	cmd.Env = os.Environ()
	if e.peers != "" {
		cmd.Env = append(cmd.Env, "MCPGW_PEERS="+e.peers)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, tailStr(string(out), 3000))
	}
	return string(out), nil
}

func tailStr(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func pprofTop(ctx context.Context, e *env, bin, prof string, extra ...string) string {
	args := append([]string{"tool", "pprof", "-top", "-nodecount=15"}, extra...)
	args = append(args, bin, prof)
	out, err := exec.CommandContext(ctx, e.goBin, args...).CombinedOutput()
	if err != nil {
		return "pprof failed: " + err.Error() + "\n" + string(out)
	}
	// Keep the table: drop the header lines before "flat".
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, l := range lines {
		if strings.Contains(l, "flat%") {
			return strings.Join(lines[i:], "\n")
		}
	}
	return strings.Join(lines, "\n")
}

func s9(ctx context.Context, e *env, r *Result) error {
	r.Title = "in-process forwarding path (go test -bench -benchmem)"
	r.Method = "`internal/gateway/bench_test.go` BenchmarkForwardToolCall: a real gateway (registry, memory store, handler behind httptest) forwarding tools/call to an in-process echo upstream behind httptest, one sequential client. " +
		"All of it runs in one process, so allocs/op and B/op include the load client and the upstream; the `direct` sub-benchmark is exactly that part (client → upstream), and " +
		"`gw-allocs/op` / `gw-B/op` are the gateway sub-benchmark's totals less the direct path's, measured in the same process: what the gateway adds per forwarded call " +
		"(its HTTP server side, session and dispatch, the upstream HTTP client, audit and metrics). `internal/wire/bench_test.go` BenchmarkParseEnvelope reads a 104-byte tools/call envelope."
	r.Params["benchtime"] = e.benchTime
	out, err := e.goTest(ctx, "./internal/gateway/", "^BenchmarkForwardToolCall$")
	if err != nil {
		return err
	}
	wout, err := e.goTest(ctx, "./internal/wire/", "^Benchmark(ParseEnvelope|Result)$")
	if err != nil {
		return err
	}
	lines := append(parseBench(out), parseBench(wout)...)
	tb := r.table("", "benchmark", "ns/op", "B/op", "allocs/op", "gw-B/op", "gw-allocs/op")
	var gw *benchLine
	for i, l := range lines {
		m := l.Metrics
		cell := func(k string, prec int) string {
			if v, ok := m[k]; ok {
				return strconv.FormatFloat(v, 'f', prec, 64)
			}
			return "–"
		}
		tb.add(map[string]any{"name": l.Name, "n": l.N, "metrics": m}, "`"+l.Name+"`", cell("ns/op", 0), cell("B/op", 0), cell("allocs/op", 0), cell("gw-B/op", 0), cell("gw-allocs/op", 1))
		if strings.HasPrefix(l.Name, "BenchmarkForwardToolCall/gateway") {
			gw = &lines[i]
		}
		if strings.HasPrefix(l.Name, "BenchmarkParseEnvelope") {
			r.note("Envelope parse of 104 bytes: %.2f µs, %.0f allocs (encoding/json with RawMessage takes about 1.2 µs).", m["ns/op"]/1000, m["allocs/op"])
		}
	}
	if gw == nil {
		return fmt.Errorf("no BenchmarkForwardToolCall/gateway line in:\n%s", tailStr(out, 2000))
	}
	ga, gb := gw.Metrics["gw-allocs/op"], gw.Metrics["gw-B/op"]
	r.check("allocations the gateway adds per forwarded call", "≤ 50", fmt.Sprintf("%.1f", ga), ga <= 50)
	r.check("bytes the gateway adds per forwarded call", "≤ 8 KB", fmtBytes(gb), gb <= 8*1024)
	if e.smoke {
		return nil
	}
	// Profiles of the gateway sub-benchmark alone: allocations with -memprofilerate 1
	// (every allocation recorded, so counts per call are exact), CPU in a separate run.
	bin := filepath.Join(e.dir, "gateway.test")
	mem, cpu := filepath.Join(e.dir, "s9-mem.pprof"), filepath.Join(e.dir, "s9-cpu.pprof")
	mout, err := e.goTest(ctx, "./internal/gateway/", "^BenchmarkForwardToolCall$/^gateway$", "-o", bin, "-memprofile", mem, "-memprofilerate", "1")
	if err != nil {
		return err
	}
	if _, err := e.goTest(ctx, "./internal/gateway/", "^BenchmarkForwardToolCall$/^gateway$", "-o", bin, "-cpuprofile", cpu); err != nil {
		return err
	}
	calls := 0
	for _, l := range parseBench(mout) {
		calls = l.N + 202 // the timed loop, 200 warm-up calls, initialize and initialized
	}
	focus := `-focus=streamable\..*servePost`
	for _, idx := range []struct{ sample, unit string }{{"alloc_objects", "allocs"}, {"alloc_space", "bytes"}} {
		rows := pprofRows(ctx, e, bin, mem, "-sample_index="+idx.sample, focus, "-nodecount=25")
		t := r.table(fmt.Sprintf("top allocation sites in the gateway's request goroutine (servePost and below), %s per forwarded call", idx.unit),
			"flat", "cum", "function")
		for _, row := range rows {
			flat, cum := row.flat/float64(calls), row.cum/float64(calls)
			f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
			if idx.unit == "bytes" {
				f = fmtBytes
			}
			t.add(map[string]any{"flat": flat, "cum": cum, "function": row.name}, f(flat), f(cum), "`"+row.name+"`")
		}
	}
	r.note("Per-call profile figures divide by %d calls (the profiled run's loop plus warm-up). The request goroutine is not all of it: the net/http server's request parsing and the upstream transport's response reading run in other goroutines and make up the rest of gw-allocs/op.", calls)
	r.Appendix = append(r.Appendix, fmt.Sprintf("Top CPU by flat time, whole benchmark process (client, gateway and upstream share it):\n\n```\n%s\n```", pprofTop(ctx, e, bin, cpu)))
	r.Appendix = append(r.Appendix, fmt.Sprintf("Gateway functions by cumulative CPU:\n\n```\n%s\n```", pprofTop(ctx, e, bin, cpu, "-cum", focus, "-show=mcpgw/mcpgw/internal/(gateway|registry|auth|store|upstream|httpclient|wire)[./]|encoding/json|net/http.\\(\\*Client\\)|syscall")))
	return nil
}

type pprofRow struct {
	flat, cum float64
	name      string
}

// pprofRows runs pprof -top -raw-ish and returns (flat, cum, function) rows.
func pprofRows(ctx context.Context, e *env, bin, prof string, extra ...string) []pprofRow {
	args := append([]string{"tool", "pprof", "-top", "-unit=B"}, extra...)
	args = append(args, bin, prof)
	out, err := exec.CommandContext(ctx, e.goBin, args...).CombinedOutput()
	if err != nil {
		return nil
	}
	var rows []pprofRow
	started := false
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "flat%") {
			started = true
			continue
		}
		f := strings.Fields(l)
		if !started || len(f) < 6 {
			continue
		}
		flat, err1 := parseQty(f[0])
		cum, err2 := parseQty(f[3])
		if err1 != nil || err2 != nil {
			continue
		}
		rows = append(rows, pprofRow{flat: flat, cum: cum, name: strings.Join(f[5:], " ")})
	}
	return rows
}

// parseQty reads a pprof quantity: a count, or bytes with a unit suffix.
func parseQty(s string) (float64, error) {
	mult := 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSuffix(s, u.suf), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	return v * mult, err
}
