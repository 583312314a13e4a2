package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestAbandonedInputRoundFreesTheInstance: a stateless caller's call to a stdio upstream
// on the session revision (max_concurrency 1, the default) asks for input, and the caller never retries (the
// round is abandoned). The parked call waits on the client, not on the upstream: the
// caller's next request, on the same gateway-side session and instance, must not wait
// for the park to expire (here it would be refused as busy after the queue's 2 s).
func TestAbandonedInputRoundFreesTheInstance(t *testing.T) {
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
servers:
  one:
    type: stdio
    command: `+gatewaytest.EverythingBin()+`
    queue: {timeout: 2s}
    protocol_version: "2025-11-25"
`)
	params := `{"name":"one__test_sampling","arguments":{"prompt":"capital of France?"},` + gatewaytest.StatelessMeta + `}`
	res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", params, map[string]string{"Mcp-Name": "one__test_sampling"})))
	if string(res["resultType"]) != `"input_required"` {
		t.Fatalf("want an input_required result, got %v", res)
	}
	// The round is abandoned: no retry. The same caller calls another tool.
	start := time.Now()
	res = gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"one__test_simple_text",`+gatewaytest.StatelessMeta+`}`, map[string]string{"Mcp-Name": "one__test_simple_text"})))
	var isErr bool
	_ = json.Unmarshal(res["isError"], &isErr)
	if string(res["resultType"]) != `"complete"` || isErr || strings.Contains(string(res["content"]), "busy") {
		t.Fatalf("the call after an abandoned round: %s (after %s)", res["content"], time.Since(start).Round(time.Millisecond))
	}
}
