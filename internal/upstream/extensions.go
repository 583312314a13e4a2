package upstream

// UIExtension is the MCP Apps extension's id (a client's and a server's
// capabilities.extensions key): tools link ui:// resources a host renders.
const UIExtension = "io.modelcontextprotocol/ui"

// UIMimeType is the MIME type of an MCP App's HTML resource, the one the gateway declares
// for the UI extension to upstreams it shares between sessions.
const UIMimeType = "text/html;profile=mcp-app"
