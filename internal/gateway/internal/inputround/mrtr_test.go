package inputround

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/wire"
)

type sess struct{ id string }

// host is a fake gateway whose one tool asks the client for input once (elicitation),
// then answers with what the client said; "plain" answers at once.
type host struct {
	mu        sync.Mutex
	responses []string
	answers   map[string]chan *wire.Msg // by the request key the "upstream" asked under
	cancelled chan struct{}             // closed when the "block" tool's call is cancelled
	started   chan struct{}             // closed when the "block" tool's call starts
}

func newHost() *host {
	return &host{answers: map[string]chan *wire.Msg{}, cancelled: make(chan struct{}), started: make(chan struct{})}
}

func (h *host) SessionID(s *sess) string { return s.id }

func (h *host) Dispatch(ctx context.Context, s *sess, m *wire.Msg, out Out) {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if p.Name == "block" {
		close(h.started)
		<-ctx.Done()
		close(h.cancelled)
		return
	}
	if p.Name == "plain" {
		_ = out.Reply(wire.Result(m.ID, json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)))
		return
	}
	key := "k-" + s.id
	ch := make(chan *wire.Msg, 1)
	h.mu.Lock()
	h.answers[key] = ch
	h.mu.Unlock()
	_ = out.Related([]byte(`{"jsonrpc":"2.0","id":"` + key + `","method":"elicitation/create","params":{"message":"ok?"}}`))
	select {
	case a := <-ch:
		if a.Error != nil {
			_ = out.Reply(wire.Error(m.ID, -1, "client said no: "+string(a.Error), nil))
			return
		}
		_ = out.Reply(wire.Result(m.ID, json.RawMessage(`{"content":[{"type":"text","text":`+string(a.Result)+`}]}`)))
	case <-ctx.Done():
	}
}

func (h *host) Respond(s *sess, m *wire.Msg) {
	var key string
	_ = json.Unmarshal(m.ID, &key)
	h.mu.Lock()
	h.responses = append(h.responses, key)
	ch := h.answers[key]
	h.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

func (h *host) Reply(method string, id json.RawMessage, msg []byte) ([]byte, int) {
	return stateless.Reply(method, id, msg, json.RawMessage(`{"name":"t"}`), "public")
}

func (h *host) Result(method string, res json.RawMessage) json.RawMessage {
	return stateless.Result(method, res, json.RawMessage(`{"name":"t"}`), "public")
}

const caps = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

func request(t *testing.T, params string) *stateless.Request {
	t.Helper()
	m, err := wire.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`))
	if err != nil {
		t.Fatal(err)
	}
	req, _, fail := stateless.Read(m, stateless.Version)
	if fail != nil {
		t.Fatalf("%s", fail)
	}
	return req
}

func serve(e *Engine[*sess], s *sess, req *stateless.Request) map[string]json.RawMessage {
	w := httptest.NewRecorder()
	e.Serve(w, httptest.NewRequest("POST", "/mcp", nil), s, req)
	var resp struct {
		Result map[string]json.RawMessage `json:"result"`
		Error  json.RawMessage            `json:"error"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &resp)
	if resp.Result == nil {
		return map[string]json.RawMessage{"error": resp.Error, "status": json.RawMessage(w.Result().Status[:3])}
	}
	return resp.Result
}

func TestRounds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHost()
	e := New[*sess](ctx, h)
	a, b := &sess{id: "a"}, &sess{id: "b"}
	if res := serve(e, a, request(t, `{"name":"plain",`+caps+`}`)); string(res["resultType"]) != `"complete"` {
		t.Fatalf("a call without input: %v", res)
	}
	res := serve(e, a, request(t, `{"name":"ask",`+caps+`}`))
	if string(res["resultType"]) != `"input_required"` || !strings.Contains(string(res["inputRequests"]), `"k-a"`) {
		t.Fatalf("a call that needs input: %v", res)
	}
	var state string
	_ = json.Unmarshal(res["requestState"], &state)
	// Another caller's retry with a's state finds nothing.
	if res := serve(e, b, request(t, `{"name":"ask","requestState":"`+state+`","inputResponses":{"k-a":"stolen"},`+caps+`}`)); !strings.Contains(string(res["error"]), "unknown, expired or not this caller's") {
		t.Errorf("b resumed a's call: %v", res)
	}
	res = serve(e, a, request(t, `{"name":"ask","requestState":"`+state+`","inputResponses":{"k-a":"yes"},`+caps+`}`))
	if string(res["resultType"]) != `"complete"` || !strings.Contains(string(res["content"]), `"yes"`) {
		t.Fatalf("the retry: %v", res)
	}
	// The state is spent.
	if res := serve(e, a, request(t, `{"name":"ask","requestState":"`+state+`","inputResponses":{"k-a":"again"},`+caps+`}`)); res["error"] == nil {
		t.Errorf("a spent state resumed a call: %v", res)
	}
}

// TestMissingCapability: a caller that did not declare elicitation is refused with -32021,
// and the upstream's request is answered so that it does not wait.
func TestMissingCapability(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHost()
	e := New[*sess](ctx, h)
	noCaps := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	res := serve(e, &sess{id: "c"}, request(t, `{"name":"ask",`+noCaps+`}`))
	if !strings.Contains(string(res["error"]), "-32021") || string(res["status"]) != "400" {
		t.Errorf("missing capability: %v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		n := len(h.responses)
		h.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			if n == 0 {
				t.Error("the upstream's input request was never answered")
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestClosedStreamCancels: a client that goes while its call runs cancels the call.
func TestClosedStreamCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHost()
	e := New[*sess](ctx, h)
	rctx, rcancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := httptest.NewRequest("POST", "/mcp", nil).WithContext(rctx)
		e.Serve(httptest.NewRecorder(), r, &sess{id: "d"}, request(t, `{"name":"block",`+caps+`}`))
	}()
	select { // the call runs: its cancellation can only come from what follows
	case <-h.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not start within 5s")
	}
	select {
	case <-h.cancelled:
		t.Fatal("the call was cancelled before its client went")
	default:
	}
	rcancel()
	for _, ch := range []chan struct{}{done, h.cancelled} {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal("the client went, and the call was not cancelled or Serve did not return")
		}
	}
}
