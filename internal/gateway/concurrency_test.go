package gateway_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// post sends one request on a session; unlike GW.Do it may run on any goroutine.
func post(g *gatewaytest.GW, sid, body string) (gatewaytest.Resp, error) {
	hr, err := http.NewRequest(http.MethodPost, g.Base+"/mcp", strings.NewReader(body))
	if err != nil {
		return gatewaytest.Resp{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range gatewaytest.SessionHeaders(sid, "2025-11-25") {
		hr.Header.Set(k, v)
	}
	hresp, err := gatewaytest.Client().Do(hr)
	if err != nil {
		return gatewaytest.Resp{}, err
	}
	defer hresp.Body.Close()
	b, err := io.ReadAll(hresp.Body)
	return gatewaytest.Resp{Status: hresp.StatusCode, Header: hresp.Header, Body: b}, err
}

// TestConcurrencyLimitSerializes: with max_concurrency 1 (the stdio default), 10 parallel
// calls of a slow tool all complete, the upstream never has two of them at once, and the
// queue wait shows in the metrics.
func TestConcurrencyLimitSerializes(t *testing.T) {
	yaml, dir := gatewaytest.LimitedConfig(t, "")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", "")
	const n = 10
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow__test_tool_with_progress","_meta":{"progressToken":"p%d"}}}`, i, i)
			r, err := post(g, sid, body)
			if err != nil {
				errs <- fmt.Errorf("call %d: %v", i, err)
				return
			}
			var final *wire.Msg
			for _, m := range messagesOrNil(r) {
				if m.IsResponse() {
					final = m
				}
			}
			if final == nil || final.Error != nil || isErrorResult(final.Result) {
				errs <- fmt.Errorf("call %d: HTTP %d %s", i, r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// From the upstream's output: once a call's progress starts, no other call's progress
	// appears until a response ends it.
	calls, current := 0, ""
	for _, l := range gatewaytest.UpstreamLines(t, dir, "out") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Params struct {
				ProgressToken any `json:"progressToken"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch {
		case m.Method == "notifications/progress":
			tok := fmt.Sprint(m.Params.ProgressToken)
			if current == "" {
				current = tok
				calls++
			} else if current != tok {
				t.Fatalf("the upstream ran two calls at once: progress of %s during %s", tok, current)
			}
		case len(m.ID) > 0 && len(m.Result) > 0:
			current = ""
		}
	}
	if calls != n {
		t.Errorf("the upstream reported progress of %d calls, want %d", calls, n)
	}
	if c := g.MetricValue(t, `mcpgw_upstream_queue_wait_seconds_count{server="slow"}`); c != n {
		t.Errorf("queue wait observed %v times, want %d", c, n)
	}
	// Nine calls waited behind at least one slow call (~150 ms each).
	if s := g.MetricValue(t, `mcpgw_upstream_queue_wait_seconds_sum{server="slow"}`); s < 0.1 {
		t.Errorf("queue wait sum %v s, want the waits behind the slow calls", s)
	}
	if d := g.MetricValue(t, `mcpgw_upstream_queue_depth{server="slow"}`); d != 0 {
		t.Errorf("queue depth %v after every call ended, want 0", d)
	}
}

// isErrorResult reports a result's "isError": true.
func isErrorResult(res json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(res, &r) == nil && r.IsError
}

// messagesOrNil is messages without a test to fail (for goroutines).
func messagesOrNil(r gatewaytest.Resp) []*wire.Msg {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		m, err := wire.Parse(r.Body)
		if err != nil {
			return nil
		}
		return []*wire.Msg{m}
	}
	var out []*wire.Msg
	for _, part := range strings.Split(string(r.Body), "\n") {
		if d, ok := strings.CutPrefix(part, "data: "); ok && strings.TrimSpace(d) != "" {
			if m, err := wire.Parse([]byte(d)); err == nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// holdSlot starts a call that holds the server's only slot until call_timeout (the client
// never answers test_sampling's request) and waits until it is in flight.
func holdSlot(t *testing.T, g *gatewaytest.GW, sid string) <-chan gatewaytest.Resp {
	t.Helper()
	held := make(chan gatewaytest.Resp, 1)
	go func() {
		r, _ := post(g, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow__test_sampling","arguments":{"prompt":"hi"}}}`)
		held <- r
	}()
	deadline := time.Now().Add(10 * time.Second)
	for g.MetricValue(t, `mcpgw_upstream_queue_wait_seconds_count{server="slow"}`) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the first call never took the slot")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return held
}

// TestConcurrencyQueueTimeoutIsBusy: a call that waits queue.timeout for a slot fails as
// a tool result with isError saying the server is busy, and never reaches the upstream.
func TestConcurrencyQueueTimeoutIsBusy(t *testing.T) {
	yaml, dir := gatewaytest.LimitedConfig(t, "    queue: {timeout: 200ms}\n    timeouts: {call: 3s}\n")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", `{"sampling":{}}`)
	held := holdSlot(t, g, sid)
	start := time.Now()
	r := g.Call(t, sid, 2, "tools/call", `{"name":"slow__test_simple_text"}`)
	took := time.Since(start)
	m := r.Message(t)
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || !res.IsError || len(res.Content) == 0 {
		t.Fatalf("result %s %s, want isError", m.Result, m.Error)
	}
	if !regexp.MustCompile(`^server busy: 1 calls ahead, waited 0\.[2-9]s$`).MatchString(res.Content[0].Text) {
		t.Errorf("busy text %q", res.Content[0].Text)
	}
	if took < 200*time.Millisecond || took > 3*time.Second {
		t.Errorf("busy after %v, want about the 200ms queue timeout", took)
	}
	if c := g.MetricValue(t, `mcpgw_tool_calls_total{agent="default",outcome="busy",server="slow",tool="test_simple_text"}`); c != 1 {
		t.Errorf("busy outcome counted %v times, want 1", c)
	}
	<-held
	for _, l := range gatewaytest.UpstreamLines(t, dir, "in") {
		if strings.Contains(l, "test_simple_text") {
			t.Errorf("the busy call reached the upstream: %s", l)
		}
	}
}

// TestConcurrencyCancelWhileQueued: notifications/cancelled for a queued call takes it
// out of the queue; it gets no response and never reaches the upstream.
func TestConcurrencyCancelWhileQueued(t *testing.T) {
	yaml, dir := gatewaytest.LimitedConfig(t, "    timeouts: {call: 2s}\n")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", `{"sampling":{}}`)
	held := holdSlot(t, g, sid)
	queued := make(chan gatewaytest.Resp, 1)
	go func() {
		r, _ := post(g, sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow__test_simple_text"}}`)
		queued <- r
	}()
	deadline := time.Now().Add(10 * time.Second)
	for g.MetricValue(t, `mcpgw_upstream_queue_depth{server="slow"}`) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the second call never queued")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")})
	if c.Status != http.StatusAccepted {
		t.Fatalf("cancellation: HTTP %d %s", c.Status, c.Body)
	}
	select {
	case r := <-queued:
		for _, m := range messagesOrNil(r) {
			if m.IsResponse() {
				t.Errorf("a call cancelled in the queue got a response: %s %s", m.Result, m.Error)
			}
		}
	case <-time.After(1500 * time.Millisecond):
		// Well before the held call's 2s timeout would have freed the slot.
		t.Fatal("the cancelled call did not leave the queue")
	}
	if d := g.MetricValue(t, `mcpgw_upstream_queue_depth{server="slow"}`); d != 0 {
		t.Errorf("queue depth %v after the cancellation, want 0", d)
	}
	<-held
	for _, l := range gatewaytest.UpstreamLines(t, dir, "in") {
		if strings.Contains(l, "test_simple_text") {
			t.Errorf("the cancelled call reached the upstream: %s", l)
		}
	}
}
