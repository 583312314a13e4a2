package dispatch_test

// A streamable HTTP upstream that answers every POST as one JSON body, as many servers do:
// the call's timeout and the client's cancellation must reach a request still waiting for
// that body, and the upstream must be told with notifications/cancelled.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// jsonUpstream answers initialize, tools/list and tools/call as JSON. Tool "hang" answers
// only when its request is dropped (it records that); tool "echo" answers at once.
type jsonUpstream struct {
	mu        sync.Mutex
	cancelled []string // "id:reason" of each notifications/cancelled
	dropped   int      // hang requests whose connection went away
	hanging   chan struct{}
}

func (u *jsonUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	reply := func(result string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "json-up-1")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
	}
	switch m.Method {
	case "initialize":
		reply(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"json-up","version":"1"}}`)
	case "tools/list":
		reply(`{"tools":[{"name":"hang","inputSchema":{"type":"object"}},{"name":"echo","inputSchema":{"type":"object"}},{"name":"slow","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Name == "slow" {
			time.Sleep(150 * time.Millisecond)
			reply(`{"content":[{"type":"text","text":"slow"}]}`)
			return
		}
		if p.Name == "hang" {
			select {
			case u.hanging <- struct{}{}:
			default:
			}
			select {
			case <-r.Context().Done():
				u.mu.Lock()
				u.dropped++
				u.mu.Unlock()
			case <-time.After(20 * time.Second):
				reply(`{"content":[{"type":"text","text":"too late"}]}`)
			}
			return
		}
		reply(`{"content":[{"type":"text","text":"echoed"}]}`)
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		_ = json.Unmarshal(m.Params, &p)
		u.mu.Lock()
		u.cancelled = append(u.cancelled, string(p.RequestID)+":"+p.Reason)
		u.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	default:
		if len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		reply(`{}`)
	}
}

func startJSONUpstream(t *testing.T) (*jsonUpstream, string) {
	t.Helper()
	u := &jsonUpstream{hanging: make(chan struct{}, 1)}
	srv := httptest.NewServer(u)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return u, srv.URL + "/mcp"
}

func TestCallTimeoutJSONUpstream(t *testing.T) {
	u, url := startJSONUpstream(t)
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.JSONUpstreamConfig, "URL", url, 1))
	sid := g.Initialize(t, "2025-11-25", "")
	start := time.Now()
	r := g.Call(t, sid, 7, "tools/call", `{"name":"j__hang","arguments":{}}`)
	took := time.Since(start)
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d %s", r.Status, r.Body)
	}
	m := r.Message(t)
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || !res.IsError || len(res.Content) == 0 ||
		!strings.Contains(res.Content[0].Text, "did not answer within") {
		t.Fatalf("want a timeout tool error, got %s", r.Body)
	}
	if took < 400*time.Millisecond || took > 3*time.Second {
		t.Errorf("answered after %v, want about the 400ms call timeout", took)
	}
	if !gatewaytest.WaitFor(3*time.Second, func() bool {
		u.mu.Lock()
		defer u.mu.Unlock()
		return len(u.cancelled) == 1 && strings.HasSuffix(u.cancelled[0], ":timeout") && u.dropped == 1
	}) {
		u.mu.Lock()
		t.Errorf("upstream saw cancellations %v and %d dropped requests; want one timeout notice and the request dropped", u.cancelled, u.dropped)
		u.mu.Unlock()
	}
	// The connection pool is not poisoned: the next call on the same upstream works.
	if r := g.Call(t, sid, 8, "tools/call", `{"name":"j__echo","arguments":{}}`); r.Status != http.StatusOK ||
		!strings.Contains(string(r.Message(t).Result), "echoed") {
		t.Fatalf("call after a timeout: HTTP %d %s", r.Status, r.Body)
	}
}

func TestCancelledCallJSONUpstream(t *testing.T) {
	u, url := startJSONUpstream(t)
	g := gatewaytest.Start(t, strings.Replace(strings.Replace(gatewaytest.JSONUpstreamConfig, "URL", url, 1), "call_timeout: 400ms", "call_timeout: 30s", 1))
	sid := g.Initialize(t, "2025-11-25", "")
	done := make(chan gatewaytest.Resp, 1)
	start := time.Now()
	go func() { done <- g.Call(t, sid, 9, "tools/call", `{"name":"j__hang","arguments":{}}`) }()
	select {
	case <-u.hanging:
	case <-time.After(5 * time.Second):
		t.Fatal("the call never reached the upstream")
	}
	c := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")})
	if c.Status != http.StatusAccepted {
		t.Fatalf("cancellation: HTTP %d %s", c.Status, c.Body)
	}
	var r gatewaytest.Resp
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not end within 5s")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("call ended %v after start", took)
	}
	if strings.Contains(string(r.Body), `"result"`) || strings.Contains(string(r.Body), `"error"`) {
		t.Errorf("a cancelled request got a response: %s", r.Body)
	}
	if !gatewaytest.WaitFor(3*time.Second, func() bool {
		u.mu.Lock()
		defer u.mu.Unlock()
		return len(u.cancelled) == 1 && strings.HasSuffix(u.cancelled[0], ":cancelled by client") && u.dropped == 1
	}) {
		u.mu.Lock()
		t.Errorf("upstream saw cancellations %v and %d dropped requests; want one notice and the request dropped", u.cancelled, u.dropped)
		u.mu.Unlock()
	}
	if r := g.Call(t, sid, 10, "tools/call", `{"name":"j__echo","arguments":{}}`); r.Status != http.StatusOK ||
		!strings.Contains(string(r.Message(t).Result), "echoed") {
		t.Fatalf("call after a cancellation: HTTP %d %s", r.Status, r.Body)
	}
}

// TestPrimingOnlyForSlowAnswers: on 2025-11-25 a call answered within 20 ms leaves as one
// JSON body; a slower one becomes an event stream whose first event is the priming event
// (an id, a retry hint, empty data), followed by the answer. Repeated, so that reused
// priming timers are exercised both ways.
func TestPrimingOnlyForSlowAnswers(t *testing.T) {
	_, url := startJSONUpstream(t)
	g := gatewaytest.Start(t, strings.Replace(strings.Replace(gatewaytest.JSONUpstreamConfig, "URL", url, 1), "call_timeout: 400ms", "call_timeout: 10s", 1))
	sid := g.Initialize(t, "2025-11-25", "")
	for i := 0; i < 3; i++ {
		fast := g.Call(t, sid, 20+2*i, "tools/call", `{"name":"j__echo","arguments":{}}`)
		if ct := fast.Header.Get("Content-Type"); fast.Status != http.StatusOK || ct != "application/json" {
			t.Fatalf("fast call: HTTP %d, Content-Type %q, want application/json: %s", fast.Status, ct, fast.Body)
		}
		if !strings.Contains(string(fast.Message(t).Result), "echoed") {
			t.Fatalf("fast call result: %s", fast.Body)
		}
		slow := g.Call(t, sid, 21+2*i, "tools/call", `{"name":"j__slow","arguments":{}}`)
		if ct := slow.Header.Get("Content-Type"); slow.Status != http.StatusOK || ct != "text/event-stream" {
			t.Fatalf("slow call: HTTP %d, Content-Type %q, want text/event-stream: %s", slow.Status, ct, slow.Body)
		}
		body := string(slow.Body)
		first, _, _ := strings.Cut(body, "\n\n")
		if !strings.HasPrefix(first, "id: s") || !strings.Contains(first, "\nretry: ") || !strings.HasSuffix(first, "\ndata: ") {
			t.Fatalf("slow call: first event %q is not a priming event; body %s", first, body)
		}
		if !strings.Contains(string(slow.Message(t).Result), `"slow"`) {
			t.Fatalf("slow call result: %s", body)
		}
	}
}
