// Package e2e runs bin/mcpgw against real MCP clients, servers, Redis and Chromium (make
// test-e2e); internal/peers decides what a missing peer means.
package e2e
