package gateway_test

import (
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// TestUpstreamErrorWithoutCode: a go-sdk server answers an error its handler returned as a
// plain Go error with code 0, which JSON-RPC does not define. The everything-server does
// so when its multi-round-trip tool needs elicitation from a client that declared none (a
// per_session instance is offered its client's own capabilities). The client gets a
// defined code (-32603) and a message naming the upstream.
func TestUpstreamErrorWithoutCode(t *testing.T) {
	g := startGateway(t, strings.Replace(baseConfig, "    url: {{everything}}\n", "    url: {{everything}}\n    mode: per_session\n", 1))
	sid := g.initialize(t, "2025-11-25", "{}")
	r := g.call(t, sid, 2, "tools/call", `{"name":"everything__test_input_required_result_request_state","arguments":{}}`)
	e := r.rpcError(t, wire.CodeInternalError)
	if !strings.Contains(e.Message, `"everything"`) || !strings.Contains(e.Message, "elicitation") {
		t.Errorf("message %q: want the upstream's name and its reason", e.Message)
	}
}
