package main

// S13: plugin tool calls. What the gateway adds to a call of an in-process plugin over
// calling the provider directly, and what running the same provider out of process adds
// over in process: in-process with go test (the plugin dispatcher, interleaved per call),
// and through bin/mcpgw over HTTP (interleaved rounds against a ping on the same gateway).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	nameS13Ping  = "mcpgw ping"
	nameS13In    = "in-process plugin"
	nameS13Out   = "out-of-process plugin"
	s13Tool      = "bench_bench_v1_items_get"
	s13Arguments = `{"connectionId":"db","id":"1"}`
	s13Seed      = `CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, stock INTEGER NOT NULL DEFAULT 0);
INSERT INTO items (name, price, stock) VALUES ('keyboard', 49.5, 12), ('mouse', 19.9, 40), ('monitor', 189, 3);
`
)

// callArgsOp is a tools/call of tool with fixed JSON arguments.
func callArgsOp(tool, args string) op {
	pre := []byte(`{"jsonrpc":"2.0","id":`)
	post := []byte(`,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`)
	return func(dst []byte, id int64) []byte {
		dst = append(dst[:0], pre...)
		dst = strconv.AppendInt(dst, id, 10)
		return append(dst, post...)
	}
}

// s13Plugin is the plugins section of one gateway: the sql plugin over a seeded SQLite
// file, in process (type sql) or as bin/mcpgw-plugin-sql (command).
func s13Plugin(dir, pluginBin string, outOfProcess bool) string {
	db := filepath.Join(dir, "bench.db")
	seed := filepath.Join(dir, "bench.sql")
	conn := fmt.Sprintf("db: {driver: sqlite, dsn: %q, seed: %q}", db, seed)
	if outOfProcess {
		return fmt.Sprintf("plugins:\n  bench:\n    command: %q\n    config:\n      connections:\n        %s\n", pluginBin, conn)
	}
	return fmt.Sprintf("plugins:\n  bench:\n    type: sql\n    connections:\n      %s\n", conn)
}

// waitPluginTool calls the plugin tool until it answers (the gateway serves before a
// plugin is up), bounded.
func waitPluginTool(ctx context.Context, t *target, bound time.Duration) error {
	s, err := t.open(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	deadline := time.Now().Add(bound)
	var last error
	var buf bytes.Buffer
	for i := int64(1); time.Now().Before(deadline) && ctx.Err() == nil; i++ {
		if _, last = s.call(ctx, callArgsOp(s13Tool, s13Arguments), i, nil, &buf); last == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s: the plugin tool did not answer within %s: %v", t.Name, bound, last)
}

func s13(ctx context.Context, e *env, r *Result) error {
	r.Title = "plugin tool calls: in process and out of process"
	r.Method = e.methodNote("Two parts. (1) `internal/pluginproc/bench_test.go` BenchmarkPluginCall (go test, one process plus the plugin's): a sql plugin `get` by primary key on SQLite, " +
		"each with a context of its own that can be cancelled (as the gateway gives every call), made as the provider's Get plus json.Marshal (direct), through the gateway's plugin dispatcher on the provider in the same process (in-process: decode, scope check, schema validation, the call, the result), " +
		"and through the same dispatcher on the provider in a plugin process over go-plugin's gRPC on a Unix socket (out-of-process), and the transport alone (roundtrip: the plugin's Capabilities, a map lookup over one gRPC round trip); its `interleaved` sub-benchmark makes one call of each kind per iteration and " +
		"reports their p50s and the median per-iteration differences; `internal/gateway/plugin_bench_test.go` BenchmarkPluginToolCall does the same through the whole gateway (its HTTP handler behind httptest, in one process) with a ping as the transport reference. Both run bin/mcpgw-plugin-sql as the plugin executable. (2) bin/mcpgw over HTTP, one session each, sequential calls: the same tool on a gateway running the plugin in process (`type: sql`) and on one running " +
		"bin/mcpgw-plugin-sql (`command:`), with a `ping` on the in-process gateway as the transport-and-session reference.")
	e.params(r)
	r.Params["benchtime"] = e.benchTime

	pluginBin := filepath.Join(filepath.Dir(e.mcpgw), "mcpgw-plugin-sql")
	if _, err := os.Stat(pluginBin); err != nil {
		return fmt.Errorf("%s is missing: run make build first", pluginBin)
	}
	// The go test benchmarks run the real plugin executable, as the gateway does.
	os.Setenv("MCPGW_PLUGIN_SQL_BIN", pluginBin)
	defer os.Unsetenv("MCPGW_PLUGIN_SQL_BIN")

	// (1) go test.
	out, err := e.goTest(ctx, "./internal/pluginproc/", "^BenchmarkPluginCall$")
	if err != nil {
		return err
	}
	gout, err := e.goTest(ctx, "./internal/gateway/", "^BenchmarkPluginToolCall$")
	if err != nil {
		return err
	}
	lines := parseBench(out)
	tb := r.table("go test -bench (µs)", "benchmark", "ns/op", "p50", "p90", "B/op", "allocs/op")
	var il *benchLine
	for i, l := range lines {
		m := l.Metrics
		cell := func(k string, div float64, prec int) string {
			if v, ok := m[k]; ok {
				return strconv.FormatFloat(v/div, 'f', prec, 64)
			}
			return "–"
		}
		if strings.Contains(l.Name, "/interleaved") {
			il = &lines[i]
			continue
		}
		tb.add(map[string]any{"name": l.Name, "n": l.N, "metrics": m}, "`"+l.Name+"`", cell("ns/op", 1, 0), cell("p50-ns", 1e3, 1), cell("p90-ns", 1e3, 1), cell("B/op", 1, 0), cell("allocs/op", 1, 0))
	}
	if il == nil {
		return fmt.Errorf("no BenchmarkPluginCall/interleaved line in:\n%s", tailStr(out, 2000))
	}
	m := il.Metrics
	it := r.table("interleaved, one call of each kind per iteration", "direct p50", "in-process p50", "out-of-process p50", "in-process − direct", "out-of-process − in-process")
	usCell := func(k string) string { return fmt.Sprintf("%.1f µs", m[k]/1e3) }
	it.add(map[string]any{"name": il.Name, "n": il.N, "metrics": m}, usCell("direct-p50-ns"), usCell("inprocess-p50-ns"), usCell("outofprocess-p50-ns"),
		usCell("inprocess-over-direct-ns"), usCell("outofprocess-over-inprocess-ns"))
	inOver, outOver := m["inprocess-over-direct-ns"]/1e3, m["outofprocess-over-inprocess-ns"]/1e3
	r.check("in-process plugin call: the gateway's dispatcher over calling the provider directly (p50, go test)", "≤ 40 µs", fmt.Sprintf("%.1f µs", inOver), inOver <= 40)
	r.check("out-of-process over in-process, the same call through the dispatcher (p50, go test)", "≤ 150 µs", fmt.Sprintf("%.1f µs", outOver), outOver <= 150)

	var gl *benchLine
	glines := parseBench(gout)
	for i, l := range glines {
		if strings.HasPrefix(l.Name, "BenchmarkPluginToolCall") {
			gl = &glines[i]
		}
	}
	if gl == nil {
		return fmt.Errorf("no BenchmarkPluginToolCall line in:\n%s", tailStr(gout, 2000))
	}
	g := gl.Metrics
	gcell := func(k string) string { return fmt.Sprintf("%.1f µs", g[k]/1e3) }
	gt := r.table("the whole gateway in one process (`internal/gateway/plugin_bench_test.go`), one call of each kind per iteration",
		"ping p50", "direct p50", "in-process plugin p50", "out-of-process plugin p50", "in-process − ping − direct", "out-of-process − in-process")
	gt.add(map[string]any{"name": gl.Name, "n": gl.N, "metrics": g}, gcell("ping-p50-ns"), gcell("direct-p50-ns"), gcell("inprocess-p50-ns"),
		gcell("outofprocess-p50-ns"), gcell("inprocess-over-ping-and-direct-ns"), gcell("outofprocess-over-inprocess-ns"))
	gwIn := g["inprocess-over-ping-and-direct-ns"] / 1e3
	r.check("in-process plugin call: the whole gateway over a ping and the provider's own call (p50, go test)", "≤ 40 µs", fmt.Sprintf("%.1f µs", gwIn), gwIn <= 40)

	// (2) bin/mcpgw over HTTP.
	var ts []*target
	for _, side := range []struct {
		name string
		oop  bool
	}{{nameS13In, false}, {nameS13Out, true}} {
		dir := filepath.Join(e.dir, "s13-"+strings.ReplaceAll(side.name, " ", "-"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "bench.sql"), []byte(s13Seed), 0o644); err != nil {
			return err
		}
		gw, _, err := e.startMcpgw(ctx, "s13-"+strings.ReplaceAll(side.name, " ", "-"), s13Plugin(dir, pluginBin, side.oop), 1)
		if err != nil {
			return err
		}
		gw.Name, gw.Tool = side.name, s13Tool
		if err := waitPluginTool(ctx, gw, 60*time.Second); err != nil {
			return err
		}
		ts = append(ts, gw)
		if !side.oop {
			ping := newTarget(nameS13Ping, gw.URL, "", 1)
			ts = append(ts, ping)
		}
	}
	ss, err := openAll(ctx, ts, 1)
	if err != nil {
		return err
	}
	res := e.interleave(ctx, ts, ss, func(t *target, s []*session, d time.Duration) stats {
		o := callArgsOp(s13Tool, s13Arguments)
		if t.Name == nameS13Ping {
			o = pingOp()
		}
		return closedLoop(ctx, s, o, d, 1<<20)
	})
	ht := r.table("bin/mcpgw over HTTP", "target", "calls/s", "p50", "p99", "errors", "p50 − ping p50", "p50 − in-process p50")
	for _, t := range ts {
		s := summarize(res[t.Name])
		d := s.data()
		vsPing := pairedDiff(res[t.Name], res[nameS13Ping], p50Of)
		vsIn := pairedDiff(res[t.Name], res[nameS13In], p50Of)
		d["p50_minus_ping_us"], d["p50_minus_inprocess_us"] = vsPing, vsIn
		ht.add(d, t.Name, fmtRate(s.Rate), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)), errCell(s),
			fmt.Sprintf("%+.0f µs", vsPing), fmt.Sprintf("%+.0f µs", vsIn))
	}
	httpOver := pairedDiff(res[nameS13Out], res[nameS13In], p50Of)
	r.check("out-of-process over in-process through bin/mcpgw (p50, HTTP, paired rounds)", "≤ 150 µs", fmt.Sprintf("%+.0f µs", httpOver), httpOver <= 150)
	errs := summarize(res[nameS13In]).Errors + summarize(res[nameS13Out]).Errors
	r.check("plugin call errors", "0", fmt.Sprint(errs), errs == 0)
	inCall := pairedDiff(res[nameS13In], res[nameS13Ping], p50Of)
	gwOver := inCall - m["direct-p50-ns"]/1e3
	r.note("Through bin/mcpgw, an in-process plugin call's p50 is %.0f µs above a ping's on the same gateway and session (HTTP, session and envelope costs alike cancel); "+
		"of that, the provider's own work (direct, go test) is about %.0f µs, so the gateway's plugin path (dispatch, permission view, dispatcher, result, metrics, audit) adds about %.0f µs.",
		inCall, m["direct-p50-ns"]/1e3, gwOver)
	if errs > 0 {
		return errors.New("plugin calls failed: " + summarize(res[nameS13In]).FirstErr + summarize(res[nameS13Out]).FirstErr)
	}
	return nil
}
