package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 list through bin/mcpgw depends on the request's own input and the caller's
// authorization only: go-sdk v1.8 clients (which stay on 2026-07-28 with mcpgw) of two
// client names under one agent id get the same lists in either order, and X-Mcp-Handshake
// selects the form of a stateless request.

// statelessNames connects a go-sdk client named client with its default options (it
// probes 2026-07-28 and stays on it), sending hdr on every request, and lists its tools.
func statelessNames(t *testing.T, url, client string, hdr map[string]string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClientWith(hdr)}, nil)
	if err != nil {
		t.Fatalf("%s: connect: %v", client, err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("%s: the go-sdk client is on %s, want the stateless 2026-07-28", client, v)
	}
	gc := &goClient{ClientSession: cs}
	return gc.toolNames(t)
}

// TestStatelessListsByOwnInput: gemini-cli (a client that does not defer tools itself,
// so auto serves it thin) and cursor-vscode (built-in cap of 40 tools)
// under one agent id, in both orders, each get their own list (Cursor the search form);
// X-Mcp-Handshake: full is honoured on a stateless client and leaves the next request
// without it as before.
func TestStatelessListsByOwnInput(t *testing.T) {
	needGatewayBin(t)
	up := startEverythingHTTP(t)
	// Three keys for one server: a view of more tools than Cursor's 40.
	g := startGatewayChecked(t, fmt.Sprintf(`
servers:
  e1: {type: streamable_http, url: %q}
  e2: {type: streamable_http, url: %q}
  e3: {type: streamable_http, url: %q}
`, up, up, up))
	as := func(agent string) map[string]string { return map[string]string{"X-Agent-ID": agent} }

	otherFirst := statelessNames(t, g.URL, "gemini-cli", as("one"))
	cursorAfter := statelessNames(t, g.URL, "cursor-vscode", as("one"))
	cursorFirst := statelessNames(t, g.URL, "cursor-vscode", as("two"))
	otherAfter := statelessNames(t, g.URL, "gemini-cli", as("two"))
	t.Logf("gemini-cli lists %d tools, cursor-vscode %d", len(otherFirst), len(cursorFirst))

	if len(otherFirst) <= 40 {
		t.Fatalf("the view lists %d tools; the test needs more than Cursor's 40", len(otherFirst))
	}
	if len(cursorFirst) > 40 || !slices.Contains(cursorFirst, "mcpgw__search_tools") {
		t.Errorf("cursor-vscode, first under its agent id, lists %d tools %v; want the search form within its cap of 40", len(cursorFirst), cursorFirst)
	}
	if !slices.Equal(cursorAfter, cursorFirst) {
		t.Errorf("cursor-vscode after gemini-cli under one agent id lists %d tools, first %d", len(cursorAfter), len(cursorFirst))
	}
	if !slices.Equal(otherAfter, otherFirst) {
		t.Errorf("gemini-cli after cursor-vscode under one agent id lists %d tools, first %d", len(otherAfter), len(otherFirst))
	}

	// This view is large enough for auto to serve it thin; the header asks for full.
	full := statelessNames(t, g.URL, "gemini-cli", map[string]string{"X-Agent-ID": "one", "X-Mcp-Handshake": "full"})
	if !slices.Contains(otherFirst, "mcpgw__describe_tools") {
		t.Fatalf("auto served the %d tools without describe_tools: the test needs a view auto serves thin", len(otherFirst))
	}
	if slices.Contains(full, "mcpgw__describe_tools") || len(full) != len(otherFirst)-1 {
		t.Errorf("X-Mcp-Handshake: full on a stateless client lists %d tools (describe_tools: %v), want the %d without describe_tools",
			len(full), slices.Contains(full, "mcpgw__describe_tools"), len(otherFirst)-1)
	}
	if again := statelessNames(t, g.URL, "gemini-cli", as("one")); !slices.Equal(again, otherFirst) {
		t.Errorf("gemini-cli without the header after a full request lists %d tools, before %d", len(again), len(otherFirst))
	}
}
