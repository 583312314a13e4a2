package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// S14: what a runner costs on tools/call. One mcpgw daemon, one stdio echo server; a
// session of executor "host" gets its instance on the gateway's host (a pipe), a session
// of executor "box" on box's runner (mcpgw-bridge runner, on this machine, connected to the
// daemon over loopback TCP): the same process behind one more hop, the runner link's
// frames and the runner's own pipe.
func s14(ctx context.Context, e *env, r *Result) error {
	r.Title = "stdio server through a runner vs on the gateway's host (tools/call, one client)"
	r.Method = e.methodNote("One mcpgw daemon with the echo server over stdio (`mcpbench echo -stdio`, per-session instances). " +
		"Sessions of executor `host` get their instance on the gateway's host; sessions of executor `box` (with `runner.keys`) on " +
		"box's runner, `mcpgw-bridge runner` started on this machine and connected over loopback TCP (the framed runner link, " +
		"docs/runners.md). One sequential client each, interleaved.")
	e.params(r)
	key := "mcpbench-runner-key"
	sum := sha256.Sum256([]byte(key))
	body := fmt.Sprintf("servers:\n  echo:\n    type: stdio\n    command: %s\n    args: [echo, -stdio]\n"+
		"executors:\n  host: {type: local_pc}\n  box: {type: local_docker, runner: {keys: [%q]}}\n", e.self, hex.EncodeToString(sum[:]))
	local, _, err := e.startMcpgw(ctx, "mcpgw-runner", body, 1)
	if err != nil {
		return err
	}
	local.Name = "stdio on the gateway's host"
	local.Header = map[string]string{"X-Executor-ID": "host"}
	if _, err := startPlain(e.dir, "runner", e.bridge, []string{"runner", "--gateway", local.Base, "--executor", "box"},
		[]string{"MCPGW_RUNNER_TOKEN=" + key}); err != nil {
		return err
	}
	if err := waitRunner(ctx, local.Base, "box", 30*time.Second); err != nil {
		return err
	}
	via := newTarget(nameMcpgw, local.URL, "echo__echo", 1)
	via.Name = "stdio through box's runner"
	via.Header = map[string]string{"X-Executor-ID": "box"}
	ts := []*target{local, via}
	ss, err := openAll(ctx, ts, 1)
	if err != nil {
		return err
	}
	res := e.interleave(ctx, ts, ss, func(t *target, s []*session, d time.Duration) stats {
		return closedLoop(ctx, s, callOp(t.Tool), d, 1<<20)
	})
	tb := r.table("", "target", "calls/s", "p50", "p99", "errors", "p50 − host", "p50 ÷ host")
	for _, t := range ts {
		s := summarize(res[t.Name])
		d := s.data()
		diff, ratio := pairedDiff(res[t.Name], res[local.Name], p50Of), pairedRatio(res[t.Name], res[local.Name], p50Of)
		d["p50_minus_host_us"], d["p50_ratio_host"] = diff, ratio
		tb.add(d, t.Name, fmtRate(s.Rate), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)), errCell(s),
			fmt.Sprintf("%+.0f µs", diff), fmtRatio(ratio))
	}
	diff := pairedDiff(res[via.Name], res[local.Name], p50Of)
	r.check("p50 through a runner over the gateway's host", "≤ +150 µs", fmt.Sprintf("%+.0f µs (%s)", diff,
		fmtRatio(pairedRatio(res[via.Name], res[local.Name], p50Of))), diff <= 150)
	for _, t := range ts {
		if n := summarize(res[t.Name]).Errors; n != 0 {
			r.check("errors: "+t.Name, "0", fmt.Sprint(n), false)
		}
	}
	return nil
}

// waitRunner waits until the daemon at base shows executor's runner connected
// (GET /api/runners; the bench's daemons run auth none on loopback).
func waitRunner(ctx context.Context, base, executor string, bound time.Duration) error {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(bound)
	last := ""
	for time.Now().Before(deadline) {
		if resp, err := c.Get(base + "/api/runners"); err == nil {
			var doc struct {
				Runners []struct {
					Executor, State, Error string
				} `json:"runners"`
			}
			err = json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
			for _, r := range doc.Runners {
				if r.Executor == executor {
					if r.State == "connected" {
						return nil
					}
					last = r.State + " " + r.Error
				}
			}
			if err != nil {
				last = err.Error()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("runner of %s not connected within %s (last: %s)", executor, bound, last)
}
