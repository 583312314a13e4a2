package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestMCPAtRoot: an agent pointed at the gateway's base URL without /mcp (the URL people
// copy from the address bar) is served MCP there: POST / opens and uses a session, GET /
// asking for an event stream opens the session's stream, DELETE / ends it; a GET / asking
// for an event stream without a session is a legacy SSE client (2024-11-05), whose stream
// opens there as at /sse. A browser's GET / is still not found, and its answer names /mcp
// and /ui.
func TestMCPAtRoot(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	r := g.Do(t, gatewaytest.Req{Path: "/", Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"root","version":"1"}}}`})
	if r.Status != http.StatusOK {
		t.Fatalf("POST / initialize: HTTP %d %s", r.Status, r.Body)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("POST / initialize: no session id; %s", r.Body)
	}
	h := gatewaytest.SessionHeaders(sid, "2025-11-25")
	if n := g.Do(t, gatewaytest.Req{Path: "/", Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Header: h}); n.Status != http.StatusAccepted {
		t.Fatalf("POST / notification: HTTP %d %s", n.Status, n.Body)
	}
	l := g.Do(t, gatewaytest.Req{Path: "/", Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, Header: h})
	if m := l.Message(t); m.Error != nil || !strings.Contains(string(m.Result), "everything__") {
		t.Fatalf("POST / tools/list: HTTP %d %s", l.Status, l.Body)
	}

	// The session's GET stream at /: the headers say it is open.
	hr, _ := http.NewRequest(http.MethodGet, g.Base+"/", nil)
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Mcp-Session-Id", sid)
	hr.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := gatewaytest.Client().Do(hr)
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
	if r := g.Do(t, gatewaytest.Req{Path: ls.endpoint + "?sessionId=" + ls.id,
		Body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{}}}`}); r.Status != http.StatusAccepted {
		t.Errorf("POST %s initialize: HTTP %d %s", ls.endpoint, r.Status, r.Body)
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
	b := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/", Header: map[string]string{"Accept": "text/html"}})
	if b.Status != http.StatusNotFound || !strings.Contains(string(b.Body), "/mcp") || !strings.Contains(string(b.Body), "/ui") {
		t.Errorf("a browser's GET /: HTTP %d %q, want 404 naming /mcp and /ui", b.Status, b.Body)
	}
	// A POST that is not JSON is not taken for MCP.
	f := g.Do(t, gatewaytest.Req{Path: "/", Body: "a=1", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	if f.Status != http.StatusNotFound {
		t.Errorf("a form POST /: HTTP %d %s, want 404", f.Status, f.Body)
	}
	// Other paths stay unknown.
	if o := g.Do(t, gatewaytest.Req{Path: "/mcpx", Body: `{}`}); o.Status != http.StatusNotFound {
		t.Errorf("POST /mcpx: HTTP %d, want 404", o.Status)
	}

	if d := g.Do(t, gatewaytest.Req{Method: http.MethodDelete, Path: "/", Header: h}); d.Status != http.StatusOK && d.Status != http.StatusNoContent {
		t.Fatalf("DELETE /: HTTP %d %s", d.Status, d.Body)
	}
	if a := g.Do(t, gatewaytest.Req{Path: "/", Body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, Header: h}); a.Status != http.StatusNotFound {
		t.Errorf("POST / after DELETE /: HTTP %d %s, want 404 (session ended)", a.Status, a.Body)
	}
}
