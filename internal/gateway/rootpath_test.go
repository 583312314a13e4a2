package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMCPAtRoot: an agent pointed at the gateway's base URL without /mcp (the URL people
// copy from the address bar) is served MCP there: POST / opens and uses a session, GET /
// asking for an event stream opens the session's stream, DELETE / ends it; a GET / asking
// for an event stream without a session is a legacy SSE client (2024-11-05), whose stream
// opens there as at /sse. A browser's GET / is still not found, and its answer names /mcp
// and /ui.
func TestMCPAtRoot(t *testing.T) {
	g := startGateway(t, baseConfig)
	r := g.do(t, req{path: "/", body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"root","version":"1"}}}`})
	if r.status != http.StatusOK {
		t.Fatalf("POST / initialize: HTTP %d %s", r.status, r.body)
	}
	sid := r.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("POST / initialize: no session id; %s", r.body)
	}
	h := sessionHeaders(sid, "2025-11-25")
	if n := g.do(t, req{path: "/", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header: h}); n.status != http.StatusAccepted {
		t.Fatalf("POST / notification: HTTP %d %s", n.status, n.body)
	}
	l := g.do(t, req{path: "/", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: h})
	if m := l.message(t); m.Error != nil || !strings.Contains(string(m.Result), "everything__") {
		t.Fatalf("POST / tools/list: HTTP %d %s", l.status, l.body)
	}

	// The session's GET stream at /: the headers say it is open.
	hr, _ := http.NewRequest(http.MethodGet, g.base+"/", nil)
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Mcp-Session-Id", sid)
	hr.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := client.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Errorf("GET / with Accept: text/event-stream: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp.Body.Close()

	// A legacy SSE client: the endpoint event, then its initialize answered on the stream.
	ls := openLegacyAt(t, g, "/")
	defer ls.close()
	if ls.endpoint != "/message" {
		t.Errorf("GET / as a legacy SSE client: endpoint %q, want /message", ls.endpoint)
	}
	if r := g.do(t, req{path: ls.endpoint + "?sessionId=" + ls.id,
		body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{}}}`}); r.status != http.StatusAccepted {
		t.Errorf("POST %s initialize: HTTP %d %s", ls.endpoint, r.status, r.body)
	}
	select {
	case ev := <-ls.events:
		if !strings.Contains(string(ev.Data), `"serverInfo"`) {
			t.Errorf("legacy stream at /: want the initialize result, got %s", ev.Data)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("legacy stream at /: no initialize result")
	}

	// A browser.
	b := g.do(t, req{method: http.MethodGet, path: "/", header: map[string]string{"Accept": "text/html"}})
	if b.status != http.StatusNotFound || !strings.Contains(string(b.body), "/mcp") || !strings.Contains(string(b.body), "/ui") {
		t.Errorf("a browser's GET /: HTTP %d %q, want 404 naming /mcp and /ui", b.status, b.body)
	}
	// A POST that is not JSON is not taken for MCP.
	f := g.do(t, req{path: "/", body: "a=1", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	if f.status != http.StatusNotFound {
		t.Errorf("a form POST /: HTTP %d %s, want 404", f.status, f.body)
	}
	// Other paths stay unknown.
	if o := g.do(t, req{path: "/mcpx", body: `{}`}); o.status != http.StatusNotFound {
		t.Errorf("POST /mcpx: HTTP %d, want 404", o.status)
	}

	if d := g.do(t, req{method: http.MethodDelete, path: "/", header: h}); d.status != http.StatusOK && d.status != http.StatusNoContent {
		t.Fatalf("DELETE /: HTTP %d %s", d.status, d.body)
	}
	if a := g.do(t, req{path: "/", body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, header: h}); a.status != http.StatusNotFound {
		t.Errorf("POST / after DELETE /: HTTP %d %s, want 404 (session ended)", a.status, a.body)
	}
}
