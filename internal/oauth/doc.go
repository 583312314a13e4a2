// Package oauth is the OAuth 2.1 client side of the MCP authorization spec: it discovers an
// upstream's authorization server, registers, authorizes with PKCE and keeps tokens fresh.
package oauth
