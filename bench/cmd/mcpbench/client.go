package main

// The load client: raw HTTP POSTs over keep-alive connections with hand-built bodies,
// sessions initialized first (as GOSDK.md §8 measured), so that the client costs as little
// as possible on the shared CPUs.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// target is one endpoint under test (the upstream itself, a baseline proxy, or mcpgw).
type target struct {
	Name   string
	URL    string // the MCP endpoint
	Base   string // scheme://host:port, for /metrics and /readyz
	Tool   string // the echo tool's name as this target exposes it
	Header map[string]string
	client *http.Client
	proc   *proc
	// legacy: the target speaks HTTP+SSE (2024-11-05): URL is its event stream, and
	// stream the client that holds the streams open.
	legacy bool
	stream *http.Client
}

func newTarget(name, url, tool string, conns int) *target {
	base := url
	if i := indexNth(url, '/', 3); i > 0 {
		base = url[:i]
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns*2 + 64,
		MaxIdleConnsPerHost: conns + 32,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	t := &target{Name: name, URL: url, Base: base, Tool: tool, client: &http.Client{Transport: tr, Timeout: 60 * time.Second},
		stream: &http.Client{Transport: tr}}
	procsMu.Lock()
	allTargets = append(allTargets, t)
	procsMu.Unlock()
	return t
}

var allTargets []*target

// stop closes the client's idle connections (a server's graceful shutdown waits up to 5 s
// for connections that never carried a request) and stops the target's process.
func (t *target) stop() {
	t.client.CloseIdleConnections()
	t.proc.stop()
}

func indexNth(s string, c byte, n int) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			if n--; n == 0 {
				return i
			}
		}
	}
	return -1
}

// session is one initialized MCP session on a target.
type session struct {
	t   *target
	id  string
	hdr http.Header
	sse *sseConn // legacy targets
}

const initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpbench","version":"1.0.0"}}}`

func (t *target) baseHeader() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	for k, v := range t.Header {
		h.Set(k, v)
	}
	return h
}

// open initializes a session (initialize, then notifications/initialized).
func (t *target) open(ctx context.Context) (*session, error) {
	if t.legacy {
		return t.openLegacy(ctx)
	}
	s := &session{t: t, hdr: t.baseHeader()}
	var buf bytes.Buffer
	st, hdr, err := s.do(ctx, []byte(initBody), &buf)
	if err != nil {
		return nil, fmt.Errorf("%s: initialize: %w", t.Name, err)
	}
	if st != http.StatusOK || !bytes.Contains(buf.Bytes(), []byte(`"result"`)) {
		return nil, fmt.Errorf("%s: initialize: HTTP %d: %.300s", t.Name, st, buf.Bytes())
	}
	s.id = hdr.Get("Mcp-Session-Id")
	h := s.hdr.Clone()
	if s.id != "" {
		h.Set("Mcp-Session-Id", s.id)
	}
	h.Set("MCP-Protocol-Version", "2025-11-25")
	s.hdr = h
	st, _, err = s.do(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), &buf)
	if err != nil {
		return nil, fmt.Errorf("%s: initialized: %w", t.Name, err)
	}
	if st != http.StatusAccepted && st != http.StatusOK {
		return nil, fmt.Errorf("%s: initialized: HTTP %d: %.300s", t.Name, st, buf.Bytes())
	}
	return s, nil
}

// openMany initializes n sessions with up to par in parallel.
func (t *target) openMany(ctx context.Context, n, par int) ([]*session, error) {
	out := make([]*session, n)
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < par && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				s, err := t.open(ctx)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				out[i] = s
			}
		}()
	}
	wg.Wait()
	return out, firstErr
}

// close ends the session (DELETE), best effort.
func (s *session) close() {
	if s.sse != nil {
		s.sse.cancel()
		return
	}
	if s.id == "" {
		return
	}
	req, err := http.NewRequest(http.MethodDelete, s.t.URL, nil)
	if err != nil {
		return
	}
	req.Header = s.hdr
	if resp, err := s.t.client.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// do POSTs body and reads the whole answer into buf.
func (s *session) do(ctx context.Context, body []byte, buf *bytes.Buffer) (int, http.Header, error) {
	if s.sse != nil {
		return s.doLegacy(ctx, body, buf)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.t.URL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = s.hdr
	resp, err := s.t.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header, err
}

// op builds the body of request number id.
type op func(dst []byte, id int64) []byte

func callOp(tool string) op {
	pre := []byte(`{"jsonrpc":"2.0","id":`)
	post := []byte(`,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"hello from mcpbench"}}}`)
	return func(dst []byte, id int64) []byte {
		dst = append(dst[:0], pre...)
		dst = strconv.AppendInt(dst, id, 10)
		return append(dst, post...)
	}
}

func listOp() op {
	return func(dst []byte, id int64) []byte {
		dst = append(dst[:0], `{"jsonrpc":"2.0","id":`...)
		dst = strconv.AppendInt(dst, id, 10)
		return append(dst, `,"method":"tools/list","params":{}}`...)
	}
}

func pingOp() op {
	return func(dst []byte, id int64) []byte {
		dst = append(dst[:0], `{"jsonrpc":"2.0","id":`...)
		dst = strconv.AppendInt(dst, id, 10)
		return append(dst, `,"method":"ping"}`...)
	}
}

var (
	okMark    = []byte(`"result"`)
	errorMark = []byte(`"isError":true`)
)

// call sends one request and checks its answer: HTTP 200, a result, no isError.
func (s *session) call(ctx context.Context, o op, id int64, body []byte, buf *bytes.Buffer) ([]byte, error) {
	body = o(body, id)
	st, _, err := s.do(ctx, body, buf)
	if err != nil {
		return body, err
	}
	b := buf.Bytes()
	if st != http.StatusOK || !bytes.Contains(b, okMark) || bytes.Contains(b, errorMark) {
		return body, fmt.Errorf("HTTP %d: %.200s", st, b)
	}
	return body, nil
}

// stats is the outcome of one load run.
type stats struct {
	N        int
	Errors   int
	Dropped  int // fixed rate: ticks no worker could take
	Elapsed  time.Duration
	Lat      []time.Duration // service time, from send
	Sched    []time.Duration // fixed rate: from the scheduled send time
	FirstErr string
	// CPU is the user+system CPU time the target's own process used during the round
	// (CPUMeasured: it was read; not for targets without a process here).
	CPU         time.Duration
	CPUMeasured bool
}

func (s *stats) rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.N) / s.Elapsed.Seconds()
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

var idSeq atomic.Int64

// closedLoop runs one worker per session, each sending the next request when the last
// one is answered, for dur or maxPer requests per worker, whichever comes first.
func closedLoop(ctx context.Context, sess []*session, o op, dur time.Duration, maxPer int) stats {
	var wg sync.WaitGroup
	res := make([]stats, len(sess))
	start := time.Now()
	deadline := start.Add(dur)
	for i, s := range sess {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &res[i]
			r.Lat = make([]time.Duration, 0, 1024)
			var buf bytes.Buffer
			body := make([]byte, 0, 256)
			for n := 0; n < maxPer && ctx.Err() == nil; n++ {
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				var err error
				body, err = s.call(ctx, o, idSeq.Add(1), body, &buf)
				d := time.Since(t0)
				r.N++
				if err != nil {
					r.Errors++
					if r.FirstErr == "" {
						r.FirstErr = err.Error()
					}
					continue
				}
				r.Lat = append(r.Lat, d)
			}
		}()
	}
	wg.Wait()
	return merge(res, time.Since(start))
}

func merge(res []stats, elapsed time.Duration) stats {
	var out stats
	out.Elapsed = elapsed
	for _, r := range res {
		out.N += r.N
		out.Errors += r.Errors
		out.Dropped += r.Dropped
		out.Lat = append(out.Lat, r.Lat...)
		out.Sched = append(out.Sched, r.Sched...)
		if out.FirstErr == "" {
			out.FirstErr = r.FirstErr
		}
	}
	return out
}

// fixedRate sends rate requests per second for dur, spread over the sessions' workers. A
// tick that finds every worker busy and the queue full is dropped and counted.
func fixedRate(ctx context.Context, sess []*session, o op, rate int, dur time.Duration) stats {
	type tick struct{ due time.Time }
	ch := make(chan tick, len(sess)*4)
	var wg sync.WaitGroup
	res := make([]stats, len(sess))
	for i, s := range sess {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &res[i]
			var buf bytes.Buffer
			body := make([]byte, 0, 256)
			for tk := range ch {
				t0 := time.Now()
				var err error
				body, err = s.call(ctx, o, idSeq.Add(1), body, &buf)
				done := time.Now()
				r.N++
				if err != nil {
					r.Errors++
					if r.FirstErr == "" {
						r.FirstErr = err.Error()
					}
					continue
				}
				r.Lat = append(r.Lat, done.Sub(t0))
				r.Sched = append(r.Sched, done.Sub(tk.due))
			}
		}()
	}
	total := int(float64(rate) * dur.Seconds())
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	dropped := 0
	for i := 0; i < total && ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		select {
		case ch <- tick{due}:
		default:
			dropped++
		}
	}
	close(ch)
	wg.Wait()
	out := merge(res, time.Since(start))
	out.Dropped = dropped
	return out
}

var errTimeout = errors.New("timed out")
