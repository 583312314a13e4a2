package main

// S11: a new session's first tool call on a per-session stdio server, cold vs warm pool.
// Two mcpgw daemons front the same stdio server (the npm reference server-everything,
// run by node, in a full run; the bench echo server over stdio in a smoke run): one
// starts each session's instance on its first call (cold), the other keeps a warm pool
// (servers.<name>.pool). Each sample is a fresh session: initialize, notifications/
// initialized, one tools/call, timed from the initialize request to the call's result,
// then DELETE. Samples alternate between the two gateways.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	nameCold = "mcpgw, per_session, no pool (cold)"
	nameWarm = "mcpgw, per_session, pool warm 4 (warm)"
	s11Warm  = 4
)

func s11(ctx context.Context, e *env, r *Result) error {
	r.Title = "first tool call of a new session on a per-session stdio server: cold vs warm pool"
	r.Method = "Two mcpgw daemons on this machine front the same stdio server as a per_session server: one without a pool, " +
		"one with pool {warm: 4}. Each sample opens a new session (initialize, notifications/initialized), makes one tools/call " +
		"and ends the session (DELETE); the time is from sending initialize to reading the call's result. Samples alternate " +
		"between the two gateways; before a warm sample the pool is given up to 30 s to be full again (its refill is not timed)."
	command, args, tool, argsJSON, label := e.s11Server()
	r.Params["server"] = label
	n := 15
	if e.smoke {
		n = 2
	}
	r.Params["samples_per_gateway"] = n
	server := func(pool string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "store: memory\nservers:\n  everything:\n    type: stdio\n    command: %s\n    args: [", strconv.Quote(command))
		for i, a := range args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(a))
		}
		b.WriteString("]\n    mode: per_session\n    timeouts: {connect: 60s}\n")
		b.WriteString(pool)
		return b.String()
	}
	cold, _, err := e.startMcpgw(ctx, "mcpgw-cold", server(""), 4)
	if err != nil {
		return err
	}
	warm, _, err := e.startMcpgw(ctx, "mcpgw-warm", server(fmt.Sprintf("    pool: {warm: %d, max: 64}\n", s11Warm)), 4)
	if err != nil {
		return err
	}
	cold.Name, warm.Name = nameCold, nameWarm
	for _, t := range []*target{cold, warm} {
		t.Tool = tool
		// The daemon lists the server's tools from a probe instance in the background:
		// a sample before that would find no tool.
		if err := waitTool(ctx, t, argsJSON); err != nil {
			return err
		}
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + argsJSON + `}}`)
	lat := map[string][]time.Duration{}
	var errs []string
	poolWaits := 0
	for i := 0; i < 2*n && ctx.Err() == nil; i++ {
		t := cold
		if i%2 == 1 {
			t = warm
		}
		if t == warm {
			if full := waitPoolReady(ctx, warm.Base, s11Warm, 30*time.Second); !full {
				poolWaits++
			}
		}
		d, err := firstCall(ctx, t, body)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", t.Name, err))
			continue
		}
		lat[t.Name] = append(lat[t.Name], d)
	}
	tb := r.table("", "gateway", "samples", "p50", "min", "max", "errors")
	for _, t := range []*target{cold, warm} {
		l := lat[t.Name]
		st := stats{N: len(l), Lat: l}
		tb.add(map[string]any{"samples": len(l), "p50_ms": ms(pct(l, 0.5)), "min_ms": ms(pct(l, 0)), "max_ms": ms(pct(l, 1))},
			t.Name, strconv.Itoa(len(l)), fmtDur(pct(st.Lat, 0.5)), fmtDur(pct(l, 0)), fmtDur(pct(l, 1)), strconv.Itoa(countPrefix(errs, t.Name)))
	}
	if m, err := scrape(cold.Base); err == nil && m["mcpgw_upstream_instance_start_seconds_count"] > 0 {
		avg := m["mcpgw_upstream_instance_start_seconds_sum"] / m["mcpgw_upstream_instance_start_seconds_count"]
		r.note("The cold gateway's instances took %s on average from start to their initialize answer (mcpgw_upstream_instance_start_seconds).", fmtDur(time.Duration(avg*1e9)))
	}
	if poolWaits > 0 {
		r.note("%d warm sample(s) found the pool not full after 30 s and ran anyway.", poolWaits)
	}
	for i, e := range errs {
		if i == 3 {
			break
		}
		r.note("error: %.300s", e)
	}
	wp := pct(lat[nameWarm], 0.5)
	cp := pct(lat[nameCold], 0.5)
	r.check("warm pool: first call of a new session p50", "≤ 20 ms", fmtDur(wp), len(lat[nameWarm]) > 0 && wp <= 20*time.Millisecond)
	r.check("cold vs warm p50 (same run)", "warm < cold", fmt.Sprintf("%s vs %s", fmtDur(wp), fmtDur(cp)), len(lat[nameWarm]) > 0 && wp < cp)
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func countPrefix(ss []string, p string) int {
	n := 0
	for _, s := range ss {
		if strings.HasPrefix(s, p+":") {
			n++
		}
	}
	return n
}

// s11Server is the stdio server S11 runs: server-everything under node when both are
// installed (make peers) and this is not a smoke run, else the bench echo server.
func (e *env) s11Server() (command string, args []string, tool, argsJSON, label string) {
	script := filepath.Join(e.repo, "test/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	if _, err := os.Stat(script); err == nil && e.nodeBin != "" && !e.smoke {
		return e.nodeBin, []string{script}, "everything__echo", `{"message":"hello from mcpbench"}`,
			"npm @modelcontextprotocol/server-everything over stdio (node " + e.nodeVersion() + ")"
	}
	why := "smoke run"
	if !e.smoke {
		why = "server-everything or node missing (make peers installs both)"
	}
	logf("S11: using the bench echo server over stdio (%s)", why)
	return e.self, []string{"echo", "-stdio"}, "everything__echo", `{"text":"hello from mcpbench"}`, "bench echo server over stdio (" + why + ")"
}

// firstCall times one new session from initialize to its first tools/call result.
func firstCall(ctx context.Context, t *target, body []byte) (time.Duration, error) {
	start := time.Now()
	s, err := t.open(ctx)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	st, _, err := s.do(ctx, body, &buf)
	d := time.Since(start)
	derr := s.del(ctx)
	if err != nil {
		return 0, err
	}
	if st != http.StatusOK || !bytes.Contains(buf.Bytes(), okMark) || bytes.Contains(buf.Bytes(), errorMark) {
		return 0, fmt.Errorf("HTTP %d: %.200s", st, buf.Bytes())
	}
	return d, derr
}

// waitTool waits (60 s at most) until a session of t can call its tool.
func waitTool(ctx context.Context, t *target, argsJSON string) error {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + t.Tool + `","arguments":` + argsJSON + `}}`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := firstCall(ctx, t, body)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: tool %s not callable after 60 s: %v", t.Name, t.Tool, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitPoolReady waits until the gateway's pool has want ready instances.
func waitPoolReady(ctx context.Context, base string, want int, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	series := `mcpgw_pool_instances{server="everything",state="ready"} `
	for ctx.Err() == nil && time.Now().Before(deadline) {
		resp, err := http.Get(base + "/metrics")
		if err == nil {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if v, ok := strings.CutPrefix(sc.Text(), series); ok {
					if f, _ := strconv.ParseFloat(v, 64); int(f) >= want {
						resp.Body.Close()
						return true
					}
				}
			}
			resp.Body.Close()
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
