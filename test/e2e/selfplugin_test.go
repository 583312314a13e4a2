package e2e

// The mcpgw plugin in the real bin/mcpgw, used by go-sdk clients: a trusted agent lists
// the gateway's sessions through it and ends another agent's session with
// "confirm": true; an agent that does not list the plugin sees none of its tools and gets
// an unknown-tool error calling one.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSelfPluginEndsAnotherSession(t *testing.T) {
	g := startGatewayChecked(t, `store: memory
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
plugins:
  mcpgw:
    type: mcpgw
agents:
  ops: {servers: [mcpgw]}
  coder: {servers: [everything]}
`)
	ops := pluginClient(t, g, map[string]string{"X-Agent-ID": "ops"}, nil)
	coder := pluginClient(t, g, map[string]string{"X-Agent-ID": "coder"}, nil)

	// The untrusted agent: no mcpgw_* tools, and calling one is an unknown tool.
	for _, n := range coder.toolNames(t) {
		if strings.HasPrefix(n, "mcpgw_") {
			t.Errorf("coder sees %s", n)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := coder.CallTool(ctx, &mcp.CallToolParams{Name: "mcpgw_mcpgw_v1_Session_list", Arguments: map[string]any{"connectionId": "gateway"}})
	if err == nil || !strings.Contains(err.Error(), "Unknown tool") {
		t.Fatalf("coder calling a mcpgw tool: %v, want an unknown-tool error", err)
	}

	// The trusted agent lists sessions and finds the coder's.
	listed := func() map[string]string {
		res, out := callJSON(t, ops, "mcpgw_mcpgw_v1_Session_list", map[string]any{"connectionId": "gateway"})
		if res.IsError {
			t.Fatalf("list sessions: %s", resultText(res))
		}
		items, _ := out["items"].([]any)
		agents := map[string]string{}
		for _, it := range items {
			m, _ := it.(map[string]any)
			id, _ := m["id"].(string)
			agent, _ := m["agent"].(string)
			agents[id] = agent
			for k := range m {
				if k == "principal" || k == "conversation" || strings.Contains(k, "key") || strings.Contains(k, "token") {
					t.Errorf("a session shows %q: %v", k, m)
				}
			}
		}
		return agents
	}
	sessions := listed()
	coderID := coder.ID()
	if sessions[coderID] != "coder" || sessions[ops.ID()] != "ops" {
		t.Fatalf("sessions listed %v, want the coder's %s and ops's %s", sessions, coderID, ops.ID())
	}

	// Without confirm nothing happens; with it the coder's session ends.
	res, _ := callJSON(t, ops, "mcpgw_mcpgw_v1_Session_end", map[string]any{"connectionId": "gateway", "id": coderID})
	if !res.IsError || !strings.Contains(resultText(res), `"confirm": true`) {
		t.Fatalf("end without confirm: %s", resultText(res))
	}
	if _, ok := listed()[coderID]; !ok {
		t.Fatal("the coder's session ended without confirmation")
	}
	res, out := callJSON(t, ops, "mcpgw_mcpgw_v1_Session_end", map[string]any{"connectionId": "gateway", "id": coderID, "confirm": true})
	if res.IsError || out["ended"] != coderID {
		b, _ := json.Marshal(out)
		t.Fatalf("end: %s %s", resultText(res), b)
	}
	if _, ok := listed()[coderID]; ok {
		t.Error("the ended session is still listed")
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	if _, err := coder.ListTools(ctx2, nil); err == nil {
		t.Error("the ended session's client still lists tools")
	}
	if !strings.Contains(g.Log(), "ended through the mcpgw plugin (agent ops") {
		t.Error("the gateway log does not say who ended the session")
	}
}
