package gateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

const disabledAgentYAML = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
auth: {disabled_agent: %s}
servers:
  everything:
    type: streamable_http
    url: {{everything}}
agents:
  on: {servers: [everything]}
  off: {enabled: false, servers: [everything]}
`

// TestDisabledAgent: an agent with enabled: false is refused with 403 by default; with
// auth.disabled_agent: empty its session opens and lists nothing, and a call by a tool's
// name finds nothing either. An enabled agent is unaffected either way.
func TestDisabledAgent(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	t.Run("refuse", func(t *testing.T) {
		g := gatewaytest.Start(t, strings.Replace(disabledAgentYAML, "%s", "refuse", 1))
		r := g.Do(t, gatewaytest.Req{Body: initialize, Header: map[string]string{"X-Agent-ID": "off"}})
		if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "disabled") {
			t.Errorf("disabled agent: HTTP %d %s, want 403 saying it is disabled", r.Status, r.Body)
		}
		if names := g.ToolNames(t, g.InitializeAs(t, "on")); len(names) == 0 {
			t.Error("the enabled agent lists no tools")
		}
	})
	t.Run("empty", func(t *testing.T) {
		g := gatewaytest.Start(t, strings.Replace(disabledAgentYAML, "%s", "empty", 1))
		sid := g.InitializeAs(t, "off")
		if names := g.ToolNames(t, sid); len(names) != 0 {
			t.Errorf("disabled agent lists %v, want nothing", names)
		}
		r := g.Call(t, sid, 2, "tools/call", `{"name":"everything__echo","arguments":{"message":"x"}}`)
		if !strings.Contains(string(r.Body), `"error"`) && !strings.Contains(string(r.Body), `"isError":true`) {
			t.Errorf("disabled agent called a tool: HTTP %d %s", r.Status, r.Body)
		}
		if names := g.ToolNames(t, g.InitializeAs(t, "on")); len(names) == 0 {
			t.Error("the enabled agent lists no tools")
		}
	})
}
