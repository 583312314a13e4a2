package e2e

// Sessions are isolated from each other: what one session's own upstream instance does
// must not change what another session sees.

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPerSessionCatalogIsolation: the npm server-everything registers some tools only
// for clients with the matching capability (get-roots-list, trigger-sampling-request,
// trigger-elicitation-request, ...) and says tools/list_changed right after initialize.
// A per-session instance started for a client without those capabilities must not take
// the tools away from another session, nor send that session list_changed.
func TestPerSessionCatalogIsolation(t *testing.T) {
	needGatewayBin(t)
	script := serverEverythingScript(t)
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
servers:
  ev:
    type: stdio
    command: {{node}}
    args: [`+yamlQuote(script)+`]
`)
	// B declares sampling and elicitation; it lists first and starts no instance.
	b := connectGoClientOpts(t, &mcp.StreamableClientTransport{Endpoint: g.URL}, func(o *mcp.ClientOptions) {
		// The gateway still relays sampling (deprecated, not removed: clients use it during
		// the deprecation window), and this handler is what makes the client declare it.
		//lint:ignore SA1019 sampling is deprecated, but the gateway must still relay it
		o.CreateMessageHandler = func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			//lint:ignore SA1019 as above: the deprecated result type of a sampling reply
			return &mcp.CreateMessageResult{Model: "e2e", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
		}
		o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	})
	before := b.toolNames(t)
	const capTool = "ev__trigger-sampling-request"
	if !slices.Contains(before, capTool) {
		t.Fatalf("session B (with sampling) does not see %s: %v", capTool, before)
	}

	// A declares neither; its first call starts its own instance, which lists fewer tools.
	a := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL})
	a.toolNames(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "ev__echo", Arguments: map[string]any{"message": "A"}})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "Echo: A") {
		t.Fatalf("A's call: %v %q", err, resultText(res))
	}

	// Watch B for a bounded while: its list must stay as it was.
	var after []string
	desc, changed := waitFor(3*time.Second, func() (bool, string) {
		names, err := b.tryToolNames()
		if err != nil {
			return true, "B's tools/list failed: " + err.Error()
		}
		after = names
		return b.listChanged.Load() > 0 || !slices.Equal(names, before), ""
	})
	if changed {
		var lost []string
		for _, n := range before {
			if !slices.Contains(after, n) {
				lost = append(lost, n)
			}
		}
		t.Errorf("session A's own instance changed session B's view: B got %d tools/list_changed, lost %v %s",
			b.listChanged.Load(), lost, desc)
	}
}
