package e2e

// Resumable streams with the real bin/mcpgw and the go-sdk everything-server over stdio:
// a tool call with progress whose POST connection is cut after the first progress event
// is resumed with GET + Last-Event-ID, which replays the remaining progress and the
// result; an unknown id, and another session's, get 400.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

var rsClient = &http.Client{Timeout: 20 * time.Second}

type rsEvent struct {
	id  string
	msg *wire.Msg
}

func rsRequest(t *testing.T, g *Gateway, method, sid, body string, hdr map[string]string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	hr, err := http.NewRequest(method, g.URL, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		hr.Header.Set("Accept", "text/event-stream")
	}
	if sid != "" {
		hr.Header.Set("Mcp-Session-Id", sid)
		hr.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for k, v := range hdr {
		hr.Header.Set(k, v)
	}
	resp, err := rsClient.Do(hr)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return resp
}

func rsInitialize(t *testing.T, g *Gateway) string {
	t.Helper()
	resp := rsRequest(t, g, http.MethodPost, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcpgw-e2e-resume","version":"1"}}}`, nil)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: HTTP %d, session %q", resp.StatusCode, sid)
	}
	n := rsRequest(t, g, http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	n.Body.Close()
	if n.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d", n.StatusCode)
	}
	return sid
}

func rsEvents(t *testing.T, body io.Reader, stop func(rsEvent) bool) []rsEvent {
	t.Helper()
	sr := wire.NewSSEReader(bufio.NewReader(body), 1<<20)
	var out []rsEvent
	for {
		ev, err := sr.Next()
		if err != nil {
			return out
		}
		e := rsEvent{id: ev.ID}
		if len(bytes.TrimSpace(ev.Data)) > 0 {
			if e.msg, err = wire.Parse(ev.Data); err != nil {
				t.Fatalf("event data is not JSON-RPC: %v: %s", err, ev.Data)
			}
		}
		out = append(out, e)
		if stop != nil && stop(e) {
			return out
		}
	}
}

// rsCutCall starts test_tool_with_progress, reads to its first progress event, cuts the
// connection and returns that event's id.
func rsCutCall(t *testing.T, g *Gateway, sid string, id int) string {
	t.Helper()
	resp := rsRequest(t, g, http.MethodPost, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"everything__test_tool_with_progress","arguments":{},"_meta":{"progressToken":"e2e-tok"}}}`, id), nil)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("tools/call with progress: HTTP %d %s, want an event stream", resp.StatusCode, b)
	}
	evs := rsEvents(t, resp.Body, func(e rsEvent) bool { return e.msg != nil && e.msg.Method == "notifications/progress" })
	resp.Body.Close() // the body is unread: the connection is closed under the call
	last := evs[len(evs)-1]
	if last.msg == nil || last.msg.Method != "notifications/progress" || last.id == "" {
		t.Fatalf("the stream ended before a progress event with an id: %+v", evs)
	}
	return last.id
}

func TestResumeStreamAfterCut(t *testing.T) {
	needPeers(t)
	g := startGateway(t, `
log: {level: debug, format: text}
servers:
  everything: {type: stdio, command: {{everything_server}}}
`)
	sid := rsInitialize(t, g)
	last := rsCutCall(t, g, sid, 41)
	stream := last[:strings.LastIndexByte(last, '-')]

	// The gateway saw the connection drop and kept the call (~150 ms long) running: the
	// replay below then proves the call went on without its client.
	if why, ok := waitFor(5*time.Second, func() (bool, string) {
		return strings.Contains(g.Log(), "the call goes on for a resume"), "no 'call goes on' log line"
	}); !ok {
		t.Fatalf("the gateway did not notice the cut connection: %s\n%s", why, g.Tail(30))
	}
	resp := rsRequest(t, g, http.MethodGet, sid, "", map[string]string{"Last-Event-ID": last})
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("GET with Last-Event-ID %s: HTTP %d %s", last, resp.StatusCode, b)
	}
	evs := rsEvents(t, resp.Body, nil) // the replay ends with the call
	resp.Body.Close()
	var progress []float64
	var result *wire.Msg
	for _, e := range evs {
		if !strings.HasPrefix(e.id, stream+"-") {
			t.Errorf("event id %q is not of the resumed stream %s", e.id, stream)
		}
		if e.msg == nil {
			continue
		}
		switch {
		case e.msg.Method == "notifications/progress":
			var p struct {
				Token    string  `json:"progressToken"`
				Progress float64 `json:"progress"`
			}
			_ = json.Unmarshal(e.msg.Params, &p)
			if p.Token != "e2e-tok" {
				t.Errorf("progress token %q, want the client's e2e-tok", p.Token)
			}
			progress = append(progress, p.Progress)
		case e.msg.IsResponse():
			result = e.msg
		}
	}
	if len(progress) != 2 || progress[0] != 50 || progress[1] != 100 {
		t.Errorf("replayed progress %v, want the remaining [50 100]", progress)
	}
	if result == nil || string(result.ID) != "41" || result.Error != nil || len(result.Result) == 0 {
		t.Fatalf("replay has no result for call 41: %+v\ngateway log:\n%s", evs, g.Tail(40))
	}

	// Wrong ids: another session's, an unknown stream, something that is no id of ours.
	other := rsInitialize(t, g)
	for _, tc := range []struct{ name, sid, last string }{
		{"another session's id", other, last},
		{"unknown stream", sid, "s987654321-1"},
		{"not an event id", sid, "bogus"},
	} {
		r := rsRequest(t, g, http.MethodGet, tc.sid, "", map[string]string{"Last-Event-ID": tc.last})
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		var m struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if r.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &m) != nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, "Last-Event-ID") {
			t.Errorf("%s: HTTP %d %s, want 400 with -32600 naming Last-Event-ID", tc.name, r.StatusCode, b)
		}
	}

	text, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := metricValue(text, "mcpgw_resume_events_replayed_total", nil); !ok || v < 3 {
		t.Errorf("mcpgw_resume_events_replayed_total = %v (found %v), want at least 3", v, ok)
	}
}
