package e2e

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestClientConfigGeminiSSE: `mcpgw client-config --client gemini --via sse` prints the
// entry Gemini CLI reads as SSE ("type": "sse"; since 0.61 a url without type is read as
// streamable HTTP), and an SSE client given that entry's url and headers reaches the
// running gateway as that agent and lists its tools.
func TestClientConfigGeminiSSE(t *testing.T) {
	bin := needGatewayBin(t)
	everythingServer(t)
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
`)
	var stdout, stderr bytes.Buffer
	cc := exec.Command(bin, "client-config", "--config", g.Config, "--agent", "gem", "--client", "gemini", "--via", "sse")
	cc.Stdout, cc.Stderr = &stdout, &stderr
	if err := cc.Run(); err != nil {
		t.Fatalf("client-config --via sse: %v\n%s", err, stderr.String())
	}
	var doc struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			HTTPURL string            `json:"httpUrl"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("client-config output: %v\n%s", err, stdout.String())
	}
	e, ok := doc.MCPServers["mcpgw"]
	if !ok || e.Type != "sse" || e.URL != g.Base+"/sse" || e.HTTPURL != "" {
		t.Fatalf("entry %+v, want type sse and url %s/sse\n%s", e, g.Base, stdout.String())
	}
	gc := connectGoClient(t, &mcp.SSEClientTransport{Endpoint: e.URL, HTTPClient: httpClientWith(e.Headers)})
	if names := gc.toolNames(t); !slices.Contains(names, "everything__test_simple_text") {
		t.Fatalf("tools over the entry: %v", names)
	}
	if log := g.Log(); !strings.Contains(log, "agent=gem ") {
		t.Errorf("no session of agent gem in the gateway's log:\n%s", g.Tail(3000))
	}
}
