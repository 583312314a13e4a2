package e2e

// An upstream that ends a tool call's event stream before the result and keeps no events
// to resume it from (the go-sdk everything-server in its stateful mode, test_reconnection:
// SSE polling, SEP-1699, without an event store) loses the result. mcpgw passes the close
// on: its client's stream ends after mcpgw's priming event, and the call's failure waits
// in the stream's replay buffer. The TypeScript SDK client, which resumes a stream that
// ended without its response (GET with Last-Event-ID), gets the failure there, and the
// session goes on.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestUpstreamStreamEndPassedOn(t *testing.T) {
	needGatewayBin(t)
	up := startEverythingHTTP(t)
	g := startGatewayChecked(t, `
naming: {prefix: never}
servers:
  everything:
    type: streamable_http
    url: `+up+`
`)
	rep := runAggregateClient(t, g.URL, []Step{
		{"op": "call", "name": "test_reconnection", "args": map[string]any{}, "timeoutMs": 20000},
		{"op": "call", "name": "test_simple_text", "args": map[string]any{}},
	}, ClientOptions{Timeout: 45 * time.Second})
	if !rep.OK || len(rep.Results) != 2 {
		t.Fatalf("client: ok=%v error=%+v results=%d", rep.OK, rep.Error, len(rep.Results))
	}
	first := rep.Results[0]
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(first.Result, &res)
	if !first.OK || !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "ended the response stream without a result") {
		t.Errorf("test_reconnection: want the failure found on the resumed stream (isError naming the upstream's ended stream), got ok=%v result=%s error=%+v", first.OK, first.Result, first.Error)
	}
	if second := rep.Results[1]; !second.OK || !strings.Contains(string(second.Result), "text") {
		t.Errorf("the session does not go on: %+v", second)
	}
	if !strings.Contains(g.Log(), "passed on") {
		t.Errorf("no log line says the upstream's close was passed on")
	}
}
