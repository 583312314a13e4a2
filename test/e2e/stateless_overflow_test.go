package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Overflow instances (docs/config.md, "Concurrency and queue"): a 2026-07-28 caller's
// requests share one gateway-side session and so its stdio instance, which takes one
// request at a time by default; a request that finds it busy is served by an instance
// started for it alone, so that a long call does not hold a quick one. A session client's
// requests still take their turns on their one instance. The upstream is the npm
// server-everything over stdio with the default config (no mode, no max_concurrency),
// started through a shell that writes each instance's pid.

// overflowGateway is a gateway over server-everything as ev (per_session by default for
// stdio), whose instances append their pids to the returned file.
func overflowGateway(t *testing.T) (*Gateway, string) {
	t.Helper()
	needGatewayBin(t)
	script := serverEverythingScript(t)
	pidFile := filepath.Join(t.TempDir(), "pids")
	killPidsAtCleanup(t, func() []int { return pidsIn(t, pidFile) })
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
servers:
  ev:
    type: stdio
    command: sh
    args: ["-c", "echo $$ >> `+pidFile+`; exec \"$0\" \"$1\" stdio", "{{node}}", `+yamlQuote(script)+`]
`)
	// The catalogue probe started one instance at load and stops it once listed.
	if desc, ok := waitFor(15*time.Second, func() (bool, string) {
		live := alivePidsIn(t, pidFile)
		return len(live) == 0, fmt.Sprintf("live instances %v", live)
	}); !ok {
		t.Fatalf("the catalogue probe did not stop: %s", desc)
	}
	return g, pidFile
}

// alivePidsIn are the pids of the file that still run.
func alivePidsIn(t *testing.T, file string) []int {
	t.Helper()
	var out []int
	for _, p := range pidsIn(t, file) {
		if pidAlive(p) {
			out = append(out, p)
		}
	}
	return out
}

// streamEvent is one JSON-RPC message of an answer (an event of its stream, or the whole
// body), or the error that ended reading it.
type streamEvent struct {
	data string
	err  error
}

// final reports whether the event is the answer's response (or its end by error).
func (e streamEvent) final() bool {
	if e.err != nil {
		return true
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	return json.Unmarshal([]byte(e.data), &m) == nil && len(m.ID) > 0 && (m.Result != nil || m.Error != nil)
}

// streamPost POSTs body with hdr and sends each message of the answer on the returned
// channel as it comes, closing it at the answer's end. ctx bounds it all.
func streamPost(ctx context.Context, url string, hdr map[string]string, body []byte) <-chan streamEvent {
	out := make(chan streamEvent, 64)
	go func() {
		defer close(out)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- streamEvent{err: err}
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			out <- streamEvent{err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)}
			return
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, err := io.ReadAll(resp.Body)
			out <- streamEvent{data: string(b), err: err}
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- streamEvent{data: d}
			}
		}
		if err := sc.Err(); err != nil {
			out <- streamEvent{err: err}
		}
	}()
	return out
}

// next is the next event of an answer (bounded by ctx).
func next(t *testing.T, ctx context.Context, what string, ev <-chan streamEvent) streamEvent {
	t.Helper()
	select {
	case e, ok := <-ev:
		if !ok {
			t.Fatalf("%s: the answer ended without a response", what)
		}
		if e.err != nil {
			t.Fatalf("%s: %v", what, e.err)
		}
		return e
	case <-ctx.Done():
		t.Fatalf("%s: nothing within the test's deadline", what)
	}
	return streamEvent{}
}

// finalOf sends the answer's response, tagged with what, on answers.
func finalOf(what string, ev <-chan streamEvent, answers chan<- string) {
	for e := range ev {
		if e.final() {
			answers <- what + " " + e.data + errText(e.err)
			return
		}
	}
	answers <- what + " ended without a response"
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return " error: " + err.Error()
}

// statelessCall is a 2026-07-28 tools/call: its body (with progress, a progress token)
// and headers.
func statelessCall(t *testing.T, id int, tool string, args map[string]any, progress string) (map[string]string, []byte) {
	t.Helper()
	var meta map[string]json.RawMessage
	if err := json.Unmarshal([]byte(rawMeta), &meta); err != nil {
		t.Fatal(err)
	}
	if progress != "" {
		meta["progressToken"] = json.RawMessage(fmt.Sprintf("%q", progress))
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": meta}})
	return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}, body
}

// sessionCall is tools/call on a session client's session.
func sessionCall(s *rawSession, id int, tool string, args map[string]any, progress string) (map[string]string, []byte) {
	params := map[string]any{"name": tool, "arguments": args}
	if progress != "" {
		params["_meta"] = map[string]any{"progressToken": progress}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
	return s.headers(nil), body
}

const longTool = "ev__trigger-long-running-operation"

// startLong starts the long call (duration seconds) and waits for its first progress
// notification: from then on it runs on the upstream. It returns the rest of its answer.
func startLong(t *testing.T, ctx context.Context, url string, hdr map[string]string, body []byte) <-chan streamEvent {
	t.Helper()
	long := streamPost(ctx, url, hdr, body)
	if e := next(t, ctx, "the long call's first progress", long); !strings.Contains(e.data, "notifications/progress") {
		t.Fatalf("the long call's first message is not progress: %s", e.data)
	}
	return long
}

// twoAnswers collects the two final answers in the order they came, within ctx.
func twoAnswers(t *testing.T, ctx context.Context, answers <-chan string) []string {
	t.Helper()
	var order []string
	for len(order) < 2 {
		select {
		case a := <-answers:
			order = append(order, a)
		case <-ctx.Done():
			t.Fatalf("answers within the deadline: %q", order)
		}
	}
	return order
}

// TestStatelessOverflow: while a stateless caller's long call runs on its instance, its
// echo is answered first, by an instance started for it and stopped after; the long call
// still completes with its result.
func TestStatelessOverflow(t *testing.T) {
	g, pidFile := overflowGateway(t)
	c := &rawClient{t: t, url: g.URL}
	c.call("tools/call", "ev__echo", map[string]any{"name": "ev__echo", "arguments": map[string]any{"message": "warm"}})
	own := alivePidsIn(t, pidFile)
	if len(own) != 1 {
		t.Fatalf("after the first call: live instances %v, want the session's own", own)
	}
	started := len(pidsIn(t, pidFile))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hdr, body := statelessCall(t, 101, longTool, map[string]any{"duration": 6, "steps": 6}, "long-1")
	long := startLong(t, ctx, g.URL, hdr, body)
	answers := make(chan string, 2)
	go finalOf("long", long, answers)
	hdr, body = statelessCall(t, 102, "ev__echo", map[string]any{"message": "while long"}, "")
	go finalOf("echo", streamPost(ctx, g.URL, hdr, body), answers)

	order := twoAnswers(t, ctx, answers)
	if !strings.HasPrefix(order[0], "echo ") || !strings.Contains(order[0], "Echo: while long") {
		t.Fatalf("first answer %.300s, want echo's (the long call held it)", order[0])
	}
	if !strings.HasPrefix(order[1], "long ") || !strings.Contains(order[1], "Long running operation completed") {
		t.Fatalf("second answer %.300s, want the long call's result", order[1])
	}
	// One instance started for the echo, and it stopped; the session's own runs on.
	all := pidsIn(t, pidFile)
	if len(all) != started+1 {
		t.Fatalf("%d instances started during the two calls, want 1 (the overflow instance)", len(all)-started)
	}
	if desc, ok := waitFor(10*time.Second, func() (bool, string) {
		live := alivePidsIn(t, pidFile)
		return len(live) == 1 && live[0] == own[0], fmt.Sprintf("live %v, own %d", live, own[0])
	}); !ok {
		t.Fatalf("the overflow instance did not stop after its call: %s", desc)
	}
}

// TestStatelessOverflowNotForSessions: a session client's echo still waits for its long
// call on the session's one instance (its server may keep state across calls): while the
// long call runs, the echo is seen waiting in the instance's queue; both are answered; no
// other instance starts.
//
// The queue orders the calls on the instance, not their answers at the client, so the test
// does not take the order in which the two answers arrive as its proof. The long call's
// slot goes to the echo as soon as the upstream's result is in, while the long call's
// answer, the last event of an event stream, leaves the gateway with the end of its
// response when its handler returns (internal/gateway/internal/reply: one write); the
// echo, answered at once by the idle upstream on a response of its own, can come out of
// the gateway first by microseconds (it did, about 1 run in 8 to 25 on a loaded machine,
// with the echo's queue wait at 2 s: it had waited its turn). What the gateway promises is
// seen in its queue: mcpgw_upstream_queue_depth is 1 while the echo waits there.
func TestStatelessOverflowNotForSessions(t *testing.T) {
	g, pidFile := overflowGateway(t)
	s := openRawSession(t, g.URL, nil)
	if text, isErr := echoAs(t, s, "warm"); isErr || !strings.Contains(text, "Echo: warm") {
		t.Fatalf("first echo: %q", text)
	}
	started := len(pidsIn(t, pidFile))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hdr, body := sessionCall(s, 101, longTool, map[string]any{"duration": 3, "steps": 3}, "long-1")
	long := startLong(t, ctx, g.URL, hdr, body)
	answers := make(chan string, 2)
	go finalOf("long", long, answers)
	hdr, body = sessionCall(s, 102, "ev__echo", map[string]any{"message": "after long"}, "")
	go finalOf("echo", streamPost(ctx, g.URL, hdr, body), answers)
	// The long call has two of its three seconds to run: the echo must be seen in the
	// queue before either answer comes (an echo run beside the long call, or on another
	// instance, would be answered without ever waiting there).
	seen := false
	desc, _ := waitFor(10*time.Second, func() (bool, string) {
		if n := len(answers); n > 0 {
			return true, fmt.Sprintf("%d answer(s) came first", n)
		}
		text, err := getMetrics(g)
		if err != nil {
			return false, err.Error()
		}
		d, _ := metricValue(text, "mcpgw_upstream_queue_depth", map[string]string{"server": "ev"})
		seen = d == 1
		return seen, fmt.Sprintf("mcpgw_upstream_queue_depth{server=\"ev\"} %v", d)
	})
	if !seen {
		t.Fatalf("the echo was not seen waiting in the instance's queue while the long call ran: %s", desc)
	}
	order := twoAnswers(t, ctx, answers)
	var gotLong, gotEcho bool
	for _, a := range order {
		gotLong = gotLong || strings.HasPrefix(a, "long ") && strings.Contains(a, "Long running operation completed")
		gotEcho = gotEcho || strings.HasPrefix(a, "echo ") && strings.Contains(a, "Echo: after long")
	}
	if !gotLong || !gotEcho {
		t.Fatalf("answers %.300q: want the long call's result and the echo's", order)
	}
	if n := len(pidsIn(t, pidFile)) - started; n != 0 {
		t.Fatalf("%d instances started for a session client's calls, want none", n)
	}
}

// TestStatelessOverflowBurst: thirty echo calls at once while the caller's long call runs
// start at most four overflow instances at a time; each is answered (or refused busy),
// and the gateway answers afterwards.
func TestStatelessOverflowBurst(t *testing.T) {
	const burst, bound = 30, 4
	g, pidFile := overflowGateway(t)
	c := &rawClient{t: t, url: g.URL}
	c.call("tools/call", "ev__echo", map[string]any{"name": "ev__echo", "arguments": map[string]any{"message": "warm"}})
	started := len(pidsIn(t, pidFile))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	hdr, body := statelessCall(t, 101, longTool, map[string]any{"duration": 3, "steps": 3}, "long-1")
	long := startLong(t, ctx, g.URL, hdr, body)
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if n := int64(len(alivePidsIn(t, pidFile))); n > peak.Load() {
				peak.Store(n) // one writer
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	answers := make(chan string, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hdr, body := statelessCall(t, 200+i, "ev__echo", map[string]any{"message": fmt.Sprint("burst ", i)}, "")
			finalOf("echo", streamPost(ctx, g.URL, hdr, body), answers)
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	close(answers)
	busy := 0
	for a := range answers {
		var msg struct {
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal([]byte(strings.TrimPrefix(a, "echo ")), &msg)
		text, isErr := toolResultText(msg.Result)
		switch {
		case !isErr && strings.Contains(text, "Echo: burst "):
		case isErr && strings.Contains(text, "server busy"):
			busy++
		default:
			t.Errorf("burst answer %.300s: want the echo or a busy refusal", a)
		}
	}
	if p := peak.Load(); p > 1+bound {
		t.Errorf("%d instances ran at once during the burst, want at most %d (the own and %d overflow)", p, 1+bound, bound)
	}
	n := len(pidsIn(t, pidFile)) - started
	if n < 1 || n > burst {
		t.Errorf("%d instances started for the burst, want 1 to %d", n, burst)
	}
	t.Logf("burst of %d: %d overflow instances started, at most %d instances at once, %d refused busy", burst, n, peak.Load(), busy)
	answers2 := make(chan string, 1)
	finalOf("long", long, answers2)
	if a := <-answers2; !strings.Contains(a, "Long running operation completed") {
		t.Errorf("the long call: %.300s", a)
	}
	c.call("tools/call", "ev__echo", map[string]any{"name": "ev__echo", "arguments": map[string]any{"message": "after"}})
	if g.Exited() {
		t.Fatal("the gateway exited")
	}
}
