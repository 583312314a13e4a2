package gateway

import (
	"io"
	"mime"
	"net/http"
	"strings"
)

// rootNotFound is the base URL's answer to what is not an MCP request: a browser's GET
// learns where things are.
const rootNotFound = "404 not found: mcpgw serves MCP at /mcp (an MCP request to / is served there too), " +
	"the legacy SSE transport at /sse, and the web UI at /ui\n"

// mcpAtRoot serves the base URL. Agents are pointed at http://127.0.0.1:8080 as often as
// at /mcp, so an MCP request there (a JSON POST, a GET asking for an event stream, a
// DELETE naming a session) is served by the streamable transport as at /mcp, except a GET
// for an event stream without a session id: the streamable transport has no such request
// (its GET stream belongs to a session), so it is a legacy SSE client (2024-11-05), and
// serveSSE opens its session as at /sse. Anything else, a browser's GET first, is not
// found, and told where to go.
func mcpAtRoot(serveMCP, serveSSE http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && isMCPRequest(r) && r.Header.Get("Mcp-Session-Id") == "":
			serveSSE(w, r)
			return
		case isMCPRequest(r):
			serveMCP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, rootNotFound)
	}
}

// isMCPRequest reports whether r is one the streamable transport takes (docs/protocol.md):
// a POST of JSON, a GET that accepts an event stream, a DELETE with a session id.
func isMCPRequest(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost:
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		return err == nil && mt == "application/json"
	case http.MethodGet:
		return strings.Contains(strings.ToLower(strings.Join(r.Header.Values("Accept"), ",")), "text/event-stream")
	case http.MethodDelete:
		return r.Header.Get("Mcp-Session-Id") != ""
	}
	return false
}
