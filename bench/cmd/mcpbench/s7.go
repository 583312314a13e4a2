package main

// S7: session churn soak. Sessions are opened and closed in a loop (initialize,
// notifications/initialized, one tools/call, DELETE) for a bounded time; the gateway's heap
// must come back to its pre-load baseline once the load stops.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// del ends the session with DELETE and checks that the gateway accepted it.
func (s *session) del(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.t.URL, nil)
	if err != nil {
		return err
	}
	req.Header = s.hdr
	resp, err := s.t.client.Do(req)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("DELETE: HTTP %d: %.200s", resp.StatusCode, buf.Bytes())
	}
	return nil
}

// churn runs workers loops of open → tools/call → DELETE for dur. Lat is the whole cycle.
func churn(ctx context.Context, t *target, workers int, dur time.Duration) stats {
	var wg sync.WaitGroup
	res := make([]stats, workers)
	start := time.Now()
	deadline := start.Add(dur)
	o := callOp(t.Tool)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &res[i]
			var buf bytes.Buffer
			body := make([]byte, 0, 256)
			fail := func(err error) {
				r.Errors++
				if r.FirstErr == "" {
					r.FirstErr = err.Error()
				}
			}
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				r.N++
				s, err := t.open(ctx)
				if err != nil {
					fail(err)
					continue
				}
				if body, err = s.call(ctx, o, idSeq.Add(1), body, &buf); err != nil {
					fail(err)
				}
				if err := s.del(ctx); err != nil {
					fail(err)
					continue
				}
				r.Lat = append(r.Lat, time.Since(t0))
			}
		}()
	}
	wg.Wait()
	return merge(res, time.Since(start))
}

// heapSampler scrapes /metrics every period until stopped and keeps the highest heap and
// session count seen.
type heapSampler struct {
	stop     chan struct{}
	done     chan struct{}
	peakHeap float64
	peakSess float64
	samples  int
}

func sampleHeap(base string, period time.Duration) *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		tk := time.NewTicker(period)
		defer tk.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-tk.C:
			}
			if m, err := scrape(base); err == nil {
				h.samples++
				h.peakHeap = max(h.peakHeap, m["go_memstats_heap_inuse_bytes"])
				h.peakSess = max(h.peakSess, m["mcpgw_sessions_active"])
			}
		}
	}()
	return h
}

func (h *heapSampler) end() { close(h.stop); <-h.done }

// liveHeap estimates a gateway's live heap from outside, since it has no endpoint to force a
// GC: pings on ss in 10 ms chunks until two more GC cycles have finished (so the last cycle
// started after the load before it ended), a pause for the sweeper, then a reading of
// go_memstats_heap_inuse_bytes; then n-1 more readings, each after one more cycle. Garbage
// allocated between a cycle's end and the reading only adds, so the lowest reading is the
// estimate. It returns that reading's metrics and every reading.
func liveHeap(ctx context.Context, t *target, ss []*session, n int) (map[string]float64, []float64, error) {
	const hk = "go_memstats_heap_inuse_bytes"
	bound, pause := 20*time.Second, 300*time.Millisecond
	if smoke {
		bound, pause, n = 100*time.Millisecond, 20*time.Millisecond, 1
	}
	var best map[string]float64
	var reads []float64
	m, err := scrape(t.Base)
	if err != nil {
		return nil, nil, err
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		want := m["go_gc_duration_seconds_count"] + 1
		if i == 0 {
			want++
		}
		deadline := time.Now().Add(bound)
		for time.Now().Before(deadline) && ctx.Err() == nil {
			closedLoop(ctx, ss, pingOp(), 10*time.Millisecond, 1<<20)
			if m, err = scrape(t.Base); err != nil {
				return nil, nil, err
			}
			if m["go_gc_duration_seconds_count"] >= want {
				break
			}
		}
		time.Sleep(pause)
		if m, err = scrape(t.Base); err != nil {
			return nil, nil, err
		}
		reads = append(reads, m[hk])
		if best == nil || m[hk] < best[hk] {
			best = m
		}
	}
	if best == nil {
		return nil, nil, ctx.Err()
	}
	return best, reads, nil
}

func s7(ctx context.Context, e *env, r *Result) error {
	const workers = 16
	settle := 5 * time.Second
	if e.smoke {
		settle = 50 * time.Millisecond
	}
	r.Title = "session churn soak: heap back to its baseline after the load stops"
	r.Method = fmt.Sprintf("Each gateway starts fresh in front of the echo upstream (HTTP). %d parallel clients each loop: initialize + notifications/initialized, one tools/call, DELETE, "+
		"for %s (after a %s warm-up of the same loop, so that one-time allocations — pools, caches, metric series — are in the baseline). "+
		"Heap is go_memstats_heap_inuse_bytes from the gateway's /metrics. The gateways have no endpoint to force a GC, so a \"settled\" reading is taken from outside, the same way before and after: pings on 8 long-lived sessions (10 ms at a time) until two more GC cycles have finished, a 300 ms pause for the sweeper, a reading, then two more readings one GC cycle apart; the lowest of the three counts (garbage allocated after a cycle only adds). "+
		"Baseline = settled reading after the warm-up; then the soak, with /metrics sampled every second (a quarter of the soak if shorter) for the peak; the client's idle connections are closed when the load stops; "+
		"%s later the heap is read as it is (\"raw\", garbage included) and then settled (\"after\"). The target compares \"after\" with the baseline.",
		workers, e.soak, e.churnWarm, settle)
	r.Params["workers"] = workers
	r.Params["soak"] = e.soak.String()
	r.Params["warmup"] = e.churnWarm.String()
	r.Params["settle"] = settle.String()
	up, err := e.startEcho("echo", 1)
	if err != nil {
		return err
	}
	tb := r.table("", "gateway", "sessions churned", "sessions/s", "cycle p50", "cycle p99", "errors", "heap cold", "heap baseline", "heap peak (load)",
		"heap raw +"+settle.String(), "heap after", "after / baseline", "goroutines baseline → after", "sessions active after")
	for _, c := range e.idleCases(ctx, up, "s7") {
		if ctx.Err() != nil {
			break
		}
		t, err := c.start()
		if err != nil {
			return err
		}
		logf("%s: started", c.label)
		warm, err := t.openMany(ctx, 8, 8)
		if err != nil {
			return err
		}
		t.client.CloseIdleConnections()
		cold, _, err := liveHeap(ctx, t, warm, 1)
		if err != nil {
			return err
		}
		if w := churn(ctx, t, workers, e.churnWarm); w.Errors > 0 {
			return fmt.Errorf("%s: warm-up churn: %d errors, first: %s", c.label, w.Errors, w.FirstErr)
		}
		t.client.CloseIdleConnections()
		m0, reads0, err := liveHeap(ctx, t, warm, 3)
		if err != nil {
			return err
		}
		logf("%s: baseline heap %s, soak for %s", c.label, fmtBytes(m0["go_memstats_heap_inuse_bytes"]), e.soak)
		hs := sampleHeap(t.Base, min(time.Second, e.soak/4))
		st := churn(ctx, t, workers, e.soak)
		hs.end()
		t.client.CloseIdleConnections()
		stopped := time.Now()
		logf("%s: %d sessions churned (%.0f/s), %d errors; waiting %s", c.label, st.N, st.rate(), st.Errors, settle)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(stopped.Add(settle))):
		}
		raw, err := scrape(t.Base)
		if err != nil {
			return err
		}
		m1, reads1, err := liveHeap(ctx, t, warm, 3)
		if err != nil {
			return err
		}
		const hk = "go_memstats_heap_inuse_bytes"
		base, after := m0[hk], m1[hk]
		ratio := 0.0
		if base > 0 {
			ratio = after / base
		}
		s := summarize([]stats{st})
		active := fmt.Sprint(m1["mcpgw_sessions_active"])
		if c.label == nameSDK {
			active = "–"
		}
		tb.add(map[string]any{"gateway": c.label, "sessions": st.N, "sessions_per_s": st.rate(), "cycle_p50_us": s.P50, "cycle_p99_us": s.P99, "errors": st.Errors,
			"heap_cold": cold[hk], "heap_baseline": base, "heap_baseline_reads": reads0, "heap_after_reads": reads1, "heap_peak": hs.peakHeap, "heap_raw_after_settle": raw[hk], "heap_after": after, "after_vs_baseline": ratio,
			"goroutines_baseline": m0["go_goroutines"], "goroutines_after": m1["go_goroutines"], "sessions_active_baseline": m0["mcpgw_sessions_active"],
			"sessions_active_peak": hs.peakSess, "sessions_active_after": m1["mcpgw_sessions_active"], "gc_cycles": m1["go_gc_duration_seconds_count"] - m0["go_gc_duration_seconds_count"],
			"settle_s": time.Since(stopped).Seconds()},
			c.label, fmt.Sprint(st.N), fmtRate(st.rate()), fmtDur(time.Duration(s.P50*1e3)), fmtDur(time.Duration(s.P99*1e3)), errCell(s),
			fmtBytes(cold[hk]), fmtBytes(base), fmtBytes(hs.peakHeap), fmtBytes(raw[hk]), fmtBytes(after), fmt.Sprintf("%.3f×", ratio),
			fmt.Sprintf("%.0f → %.0f", m0["go_goroutines"], m1["go_goroutines"]), active)
		if c.label != nameSDK {
			r.check(c.label+": heap "+settle.String()+" after churn vs baseline", "≤ 1.10×", fmt.Sprintf("%.3f× (%s → %s)", ratio, fmtBytes(base), fmtBytes(after)), ratio > 0 && ratio <= 1.10)
			r.check(c.label+": sessions active after churn", fmt.Sprint(m0["mcpgw_sessions_active"]), fmt.Sprint(m1["mcpgw_sessions_active"]), m1["mcpgw_sessions_active"] == m0["mcpgw_sessions_active"])
			r.check(c.label+": churn errors", "0", fmt.Sprint(st.Errors), st.Errors == 0)
		}
		t.stop()
	}
	return nil
}
