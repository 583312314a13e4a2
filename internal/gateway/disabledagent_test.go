package gateway_test

import (
	"net/http"
	"strings"
	"testing"
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
		g := startGateway(t, strings.Replace(disabledAgentYAML, "%s", "refuse", 1))
		r := g.do(t, req{body: initialize, header: map[string]string{"X-Agent-ID": "off"}})
		if r.status != http.StatusForbidden || !strings.Contains(string(r.body), "disabled") {
			t.Errorf("disabled agent: HTTP %d %s, want 403 saying it is disabled", r.status, r.body)
		}
		if names := g.toolNames(t, g.initializeAs(t, "on")); len(names) == 0 {
			t.Error("the enabled agent lists no tools")
		}
	})
	t.Run("empty", func(t *testing.T) {
		g := startGateway(t, strings.Replace(disabledAgentYAML, "%s", "empty", 1))
		sid := g.initializeAs(t, "off")
		if names := g.toolNames(t, sid); len(names) != 0 {
			t.Errorf("disabled agent lists %v, want nothing", names)
		}
		r := g.call(t, sid, 2, "tools/call", `{"name":"everything__echo","arguments":{"message":"x"}}`)
		if !strings.Contains(string(r.body), `"error"`) && !strings.Contains(string(r.body), `"isError":true`) {
			t.Errorf("disabled agent called a tool: HTTP %d %s", r.status, r.body)
		}
		if names := g.toolNames(t, g.initializeAs(t, "on")); len(names) == 0 {
			t.Error("the enabled agent lists no tools")
		}
	})
}
