package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// S12: what OpenTelemetry tracing costs on tools/call. Tracing off must cost nothing
// measurable (one nil check in dispatch and one in forward); with -alt, the pre-change
// binary runs as one more target so that "off" is compared with "never had it". On, every
// call makes a server span and an upstream span, exported in batches over OTLP/HTTP to a
// sink in this process; at sample_ratio 0 the spans are made but not recorded or exported.
func s12(ctx context.Context, e *env, r *Result) error {
	r.Title = "tracing off vs on (tools/call, one client)"
	r.Method = e.methodNote("mcpgw daemons in front of the same echo upstream: tracing off; tracing on with sample_ratio 1 " +
		"(every call: a server span and an upstream span, batched to an OTLP/HTTP sink in the bench process); tracing on with " +
		"sample_ratio 0 (spans started, not sampled, nothing exported); with -alt, the given binary with its default config " +
		"(the build before tracing). One sequential client each.")
	e.params(r)
	up, err := e.startEcho("echo", 1)
	if err != nil {
		return err
	}
	var exports, spanBytes atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	sink := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		exports.Add(1)
		spanBytes.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = sink.Serve(ln) }()
	defer sink.Close()
	servers := httpServers(map[string]string{"echo": up})
	tracingOn := func(ratio string) string {
		return "tracing: {otlp_endpoint: \"http://" + ln.Addr().String() + "\", sample_ratio: " + ratio + "}\n"
	}
	off, _, err := e.startMcpgw(ctx, "mcpgw-tracing-off", servers, 1)
	if err != nil {
		return err
	}
	off.Name = "mcpgw, tracing off"
	on, _, err := e.startMcpgw(ctx, "mcpgw-tracing-on", tracingOn("1")+servers, 1)
	if err != nil {
		return err
	}
	on.Name = "mcpgw, tracing on (ratio 1)"
	unsampled, _, err := e.startMcpgw(ctx, "mcpgw-tracing-ratio0", tracingOn("0")+servers, 1)
	if err != nil {
		return err
	}
	unsampled.Name = "mcpgw, tracing on (ratio 0)"
	ts := []*target{newTarget(nameDirect, up, "echo", 1), off, on, unsampled}
	var before *target
	if e.alt != "" {
		bin := e.mcpgw
		e.mcpgw = e.alt
		before, _, err = e.startMcpgw(ctx, "mcpgw-before", servers, 1)
		e.mcpgw = bin
		if err != nil {
			return err
		}
		before.Name = "mcpgw before tracing (-alt)"
		ts = append(ts, before)
	} else {
		r.note("No -alt binary: tracing off is compared with tracing on only; pass the build before tracing as -alt to compare with it.")
	}
	ss, err := openAll(ctx, ts, 1)
	if err != nil {
		return err
	}
	res := e.interleave(ctx, ts, ss, func(t *target, s []*session, d time.Duration) stats {
		return closedLoop(ctx, s, callOp(t.Tool), d, 1<<20)
	})
	tb := r.table("", "target", "calls/s", "p50", "p99", "errors", "p50 − tracing off", "p99 − tracing off")
	for _, t := range ts {
		s := summarize(res[t.Name])
		d := s.data()
		p50d, p99d := pairedDiff(res[t.Name], res[off.Name], p50Of), pairedDiff(res[t.Name], res[off.Name], p99Of)
		d["p50_minus_tracing_off_us"], d["p99_minus_tracing_off_us"] = p50d, p99d
		tb.add(d, t.Name, fmtRate(s.Rate), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)), errCell(s),
			fmt.Sprintf("%+.0f µs", p50d), fmt.Sprintf("%+.0f µs", p99d))
	}
	if before != nil {
		diff := pairedDiff(res[off.Name], res[before.Name], p50Of)
		ratio := pairedRatio(res[off.Name], res[before.Name], p50Of)
		r.check("p50 tracing off vs the build before tracing", "≤ 1.03×", fmt.Sprintf("%s (%+.1f µs)", fmtRatio(ratio), diff), ratio <= 1.03)
	}
	onDiff := pairedDiff(res[on.Name], res[off.Name], p50Of)
	r.check("p50 tracing on (ratio 1) over off", "≤ +50 µs", fmt.Sprintf("%+.0f µs", onDiff), onDiff <= 50)
	r.check("spans exported with tracing on", "> 0 exports", fmt.Sprintf("%d exports, %d bytes", exports.Load(), spanBytes.Load()), exports.Load() > 0 || e.smoke)
	for _, t := range ts {
		if n := summarize(res[t.Name]).Errors; n != 0 {
			r.check("errors: "+t.Name, "0", fmt.Sprint(n), false)
		}
	}
	return nil
}
