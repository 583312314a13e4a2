package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoSDKClientAtBaseURL: a go-sdk client given the gateway's base URL without /mcp (the
// design's and many READMEs' example, http://127.0.0.1:8080) connects, lists and calls,
// on a 2025-11-25 session (POST, the GET stream, DELETE at close), on the stateless
// revision it probes first by default, and as a legacy SSE (2024-11-05) client.
func TestGoSDKClientAtBaseURL(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
`)
	for _, tc := range []struct {
		name      string
		connect   func(testing.TB, mcp.Transport) *goClient
		transport mcp.Transport
	}{
		{"session", connectGoClient, &mcp.StreamableClientTransport{Endpoint: g.Base}},
		{"probing", connectGoClientProbing, &mcp.StreamableClientTransport{Endpoint: g.Base}},
		{"legacy-sse", connectGoClientProbing, &mcp.SSEClientTransport{Endpoint: g.Base}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gc := tc.connect(t, tc.transport)
			if names := gc.toolNames(t); !slices.Contains(names, "everything__test_simple_text") {
				t.Fatalf("tools at the base URL: %v", names)
			}
			res, err := gc.CallTool(t.Context(), &mcp.CallToolParams{Name: "everything__test_simple_text", Arguments: map[string]any{}})
			if err != nil || res.IsError || len(res.Content) == 0 {
				t.Fatalf("call at the base URL: %v %+v", err, res)
			}
			if txt, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(txt.Text, "simple text") {
				t.Errorf("call result %+v", res.Content[0])
			}
		})
	}
}
