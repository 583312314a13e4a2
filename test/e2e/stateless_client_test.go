package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A client pinned to 2026-07-28 (a small raw client: the TypeScript SDK 1.32 here has no
// stateless revision) through mcpgw to two stdio servers: the go-sdk everything-server,
// which lists 2026-07-28 and is driven on it for this caller, and the npm server-everything
// (TypeScript SDK, session revision only), driven on 2025-11-25: discover, list, call, a
// sampling request of the session-era upstream answered as a multi round-trip, and
// list_changed on a subscriptions/listen stream.

type rawClient struct {
	t   *testing.T
	url string
	id  int
}

const rawMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw-2026","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`

// post sends one request; params get the client's _meta. It returns the HTTP response.
func (c *rawClient) post(ctx context.Context, method, name string, params map[string]any) *http.Response {
	c.t.Helper()
	c.id++
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = json.RawMessage(rawMeta)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	if resp.Header.Get("Mcp-Session-Id") != "" {
		c.t.Errorf("%s: the answer carries Mcp-Session-Id", method)
	}
	return resp
}

// call sends a request and returns its result (the response's last message when the
// answer is an event stream).
func (c *rawClient) call(method, name string, params map[string]any) map[string]json.RawMessage {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp := c.post(ctx, method, name, params)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("%s: HTTP %d %s", method, resp.StatusCode, b)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last string
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				last = d
			}
		}
		b = []byte(last)
	}
	var msg struct {
		Result map[string]json.RawMessage `json:"result"`
		Error  json.RawMessage            `json:"error"`
	}
	if err := json.Unmarshal(b, &msg); err != nil || msg.Error != nil || msg.Result == nil {
		c.t.Fatalf("%s: %s (%v)", method, b, err)
	}
	return msg.Result
}

func TestStateless2026Client(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	tsCmd, tsArgs := serverEverythingStdio(t)
	g := startGatewayChecked(t, `
naming: {prefix: never}
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
    # The list_changed round below adds a tool on an established server, which the
    # default policy (pin) would hold: warn serves it at once and lists it for review.
    integrity: warn
  tseverything:
    type: stdio
    command: `+yamlQuote(tsCmd)+`
    args: [`+yamlQuote(tsArgs[0])+`, stdio]
`)
	c := &rawClient{t: t, url: g.URL}

	res := c.call("server/discover", "", nil)
	if !strings.Contains(string(res["supportedVersions"]), `"2026-07-28"`) || !strings.Contains(string(res["capabilities"]), `"tools"`) {
		t.Fatalf("discover: %v", res)
	}

	res = c.call("tools/list", "", nil)
	if !strings.Contains(string(res["tools"]), `"test_sampling"`) || string(res["cacheScope"]) == "" || string(res["ttlMs"]) == "" {
		t.Fatalf("tools/list: %.300s", res["tools"])
	}

	res = c.call("tools/call", "test_simple_text", map[string]any{"name": "test_simple_text", "arguments": map[string]any{}})
	if !strings.Contains(string(res["content"]), "text") || string(res["resultType"]) != `"complete"` {
		t.Fatalf("tools/call: %v", res)
	}

	// The session-era upstream asks for sampling during the call: the answer is
	// input_required, the gateway naming the input request.
	const sampler = "trigger-sampling-request"
	args := map[string]any{"prompt": "Name a colour"}
	res = c.call("tools/call", sampler, map[string]any{"name": sampler, "arguments": args})
	if string(res["resultType"]) != `"input_required"` {
		t.Fatalf("want input_required, got %v", res)
	}
	var inputs map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	var state string
	_ = json.Unmarshal(res["inputRequests"], &inputs)
	_ = json.Unmarshal(res["requestState"], &state)
	responses := map[string]any{}
	for k, ir := range inputs {
		if ir.Method != "sampling/createMessage" || !strings.Contains(string(ir.Params), "Name a colour") {
			t.Fatalf("input request %s %s", ir.Method, ir.Params)
		}
		responses[k] = map[string]any{"role": "assistant", "model": "raw", "content": map[string]any{"type": "text", "text": "vermilion"}}
	}
	if len(responses) != 1 || state == "" {
		t.Fatalf("inputRequests %s requestState %q", res["inputRequests"], state)
	}
	res = c.call("tools/call", sampler, map[string]any{"name": sampler, "arguments": args,
		"inputResponses": responses, "requestState": state})
	if string(res["resultType"]) != `"complete"` || !strings.Contains(string(res["content"]), "vermilion") {
		t.Fatalf("retry: want the upstream's result with the sampled text, got %v", res)
	}

	// The upstream that speaks 2026-07-28 names its input requests itself: the key and
	// the request state it gave come through unchanged, and its retry completes.
	const elicitor = "test_input_required_result_elicitation"
	res = c.call("tools/call", elicitor, map[string]any{"name": elicitor, "arguments": map[string]any{}})
	if string(res["resultType"]) != `"input_required"` || !strings.Contains(string(res["inputRequests"]), `"user_name"`) {
		t.Fatalf("want input_required with the server's own key user_name, got %v", res)
	}
	retry := map[string]any{"name": elicitor, "arguments": map[string]any{},
		"inputResponses": map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}}}
	if rs, ok := res["requestState"]; ok {
		retry["requestState"] = rs
	}
	res = c.call("tools/call", elicitor, retry)
	if string(res["resultType"]) != `"complete"` || !strings.Contains(string(res["content"]), "Hello, Alice") {
		t.Fatalf("retry with the server's key: want its greeting, got %v", res)
	}

	// list_changed on a listen stream.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	listen := c.post(ctx, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	defer listen.Body.Close()
	if listen.StatusCode != http.StatusOK || !strings.HasPrefix(listen.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("listen: HTTP %d %s", listen.StatusCode, listen.Header.Get("Content-Type"))
	}
	listenID := c.id
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(listen.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- d
			}
		}
	}()
	next := func(what string) string {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatalf("listen stream ended before %s", what)
			}
			return e
		case <-ctx.Done():
			t.Fatalf("no %s on the listen stream", what)
		}
		return ""
	}
	if ack := next("acknowledgement"); !strings.Contains(ack, "notifications/subscriptions/acknowledged") || !strings.Contains(ack, `"toolsListChanged":true`) {
		t.Fatalf("first listen event %s", ack)
	}
	c.call("tools/call", "test_trigger_tool_change", map[string]any{"name": "test_trigger_tool_change", "arguments": map[string]any{}})
	ev := next("list_changed")
	var n struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal([]byte(ev), &n)
	if n.Method != "notifications/tools/list_changed" || string(n.Params.Meta["io.modelcontextprotocol/subscriptionId"]) != strconv.Itoa(listenID) {
		t.Fatalf("listen event %s, want tools/list_changed tagged with subscription id %d", ev, listenID)
	}
	res = c.call("tools/list", "", nil)
	if !strings.Contains(string(res["tools"]), "__transient_tool_for_list_changed") {
		t.Errorf("the changed list lacks the tool the upstream added")
	}
}
