package gateway_test

// Resumable POST event streams, through the real handler: a call whose connection is cut
// after its first progress event is resumed by GET with Last-Event-ID; unknown, foreign
// and malformed ids are refused with 400.

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

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

type sseEvent struct {
	id  string
	msg *wire.Msg // nil for the priming event
}

// readEvents reads events from an event stream until stop says so or it ends.
func readEvents(t *testing.T, body io.Reader, stop func(sseEvent) bool) []sseEvent {
	t.Helper()
	sr := wire.NewSSEReader(bufio.NewReader(body), 1<<20)
	var out []sseEvent
	for {
		ev, err := sr.Next()
		if err != nil {
			return out
		}
		e := sseEvent{id: ev.ID}
		if len(bytes.TrimSpace(ev.Data)) > 0 {
			m, err := wire.Parse(ev.Data)
			if err != nil {
				t.Fatalf("event data is not JSON-RPC: %v: %s", err, ev.Data)
			}
			e.msg = m
		}
		out = append(out, e)
		if stop != nil && stop(e) {
			return out
		}
	}
}

// startProgressCall POSTs test_tool_with_progress and returns the open response.
func startProgressCall(t *testing.T, g *gatewaytest.GW, sid string, id int) *http.Response {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"everything__test_tool_with_progress","arguments":{},"_meta":{"progressToken":"tok-r"}}}`, id)
	hr, _ := http.NewRequest(http.MethodPost, g.Base+"/mcp", strings.NewReader(body))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	hr.Header.Set("Mcp-Session-Id", sid)
	hr.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := gatewaytest.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		resp.Body.Close()
		t.Fatalf("progress call: HTTP %d %s, want an event stream", resp.StatusCode, ct)
	}
	return resp
}

// resumeGET sends GET with Last-Event-ID on a session.
func resumeGET(t *testing.T, g *gatewaytest.GW, sid, last string) *http.Response {
	t.Helper()
	hr, _ := http.NewRequest(http.MethodGet, g.Base+"/mcp", nil)
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Mcp-Session-Id", sid)
	hr.Header.Set("MCP-Protocol-Version", "2025-11-25")
	hr.Header.Set("Last-Event-ID", last)
	resp, err := gatewaytest.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// cutAfterFirstProgress starts a progress call, reads up to its first progress event and
// cuts the connection; it returns that event's id.
func cutAfterFirstProgress(t *testing.T, g *gatewaytest.GW, sid string, id int) string {
	t.Helper()
	resp := startProgressCall(t, g, sid, id)
	evs := readEvents(t, resp.Body, func(e sseEvent) bool { return e.msg != nil && e.msg.Method == "notifications/progress" })
	resp.Body.Close() // an unread HTTP/1.1 body: the connection is closed
	last := evs[len(evs)-1]
	if last.msg == nil || last.msg.Method != "notifications/progress" || last.id == "" {
		t.Fatalf("no progress event with an id before the stream ended: %+v", evs)
	}
	return last.id
}

func TestResumeAfterDroppedConnection(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	sid := g.Initialize(t, "2025-11-25", "")
	last := cutAfterFirstProgress(t, g, sid, 7)
	stream := last[:strings.LastIndexByte(last, '-')]
	// Synchronisation point: the gateway saw the connection drop and kept the call going
	// (the tool takes ~150 ms, the drop is seen within a few).
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(g.Log.String(), "the call goes on for a resume") {
		if time.Now().After(deadline) {
			t.Fatal("the gateway did not notice the dropped connection within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp := resumeGET(t, g, sid, last)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("resume: HTTP %d %s", resp.StatusCode, b)
	}
	evs := readEvents(t, resp.Body, nil) // ends with the call
	var progress []float64
	var result *wire.Msg
	for _, e := range evs {
		if !strings.HasPrefix(e.id, stream+"-") {
			t.Errorf("replayed event id %q is not of stream %s", e.id, stream)
		}
		switch {
		case e.msg == nil:
			t.Errorf("priming event replayed")
		case e.msg.Method == "notifications/progress":
			var p struct {
				Token    string  `json:"progressToken"`
				Progress float64 `json:"progress"`
			}
			_ = json.Unmarshal(e.msg.Params, &p)
			if p.Token != "tok-r" {
				t.Errorf("replayed progress token %q, want tok-r", p.Token)
			}
			progress = append(progress, p.Progress)
		case e.msg.IsResponse():
			result = e.msg
		}
	}
	if len(progress) != 2 || progress[0] != 50 || progress[1] != 100 {
		t.Errorf("replayed progress %v, want the remaining [50 100] (events %d)", progress, len(evs))
	}
	if result == nil || string(result.ID) != "7" || result.Error != nil {
		t.Fatalf("replayed result %+v, want the call's result", result)
	}
	if evs[len(evs)-1].msg != result {
		t.Errorf("the result is not the last event")
	}
	// The same id again replays the same events: the buffer stays until http.resume_for.
	again := resumeGET(t, g, sid, last)
	evs2 := readEvents(t, again.Body, nil)
	again.Body.Close()
	if len(evs2) != len(evs) {
		t.Errorf("second resume replayed %d events, first %d", len(evs2), len(evs))
	}
	// The last id: nothing follows it, the stream ends empty.
	end := resumeGET(t, g, sid, evs[len(evs)-1].id)
	if evs3 := readEvents(t, end.Body, nil); end.StatusCode != http.StatusOK || len(evs3) != 0 {
		t.Errorf("resume after the last event: HTTP %d, %d events", end.StatusCode, len(evs3))
	}
	end.Body.Close()
	m := metricsText(t, g)
	if !strings.Contains(m, "mcpgw_resume_events_replayed_total ") || strings.Contains(m, "mcpgw_resume_events_replayed_total 0\n") {
		t.Errorf("replayed events not counted:\n%s", gatewaytest.GrepLines([]byte(m), "mcpgw_resume"))
	}
}

func TestResumeRefused(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	a := g.Initialize(t, "2025-11-25", "")
	b := g.Initialize(t, "2025-11-25", "")
	lastA := cutAfterFirstProgress(t, g, a, 3)
	stream := lastA[:strings.LastIndexByte(lastA, '-')]
	for _, tc := range []struct{ name, sid, last string }{
		{"another session's id", b, lastA},
		{"unknown stream", a, "s999999999-1"},
		{"beyond the stream's events", a, stream + "-999"},
		{"not an id of the gateway", a, "xyz"},
		{"malformed", a, "s-1"},
	} {
		resp := resumeGET(t, g, tc.sid, tc.last)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: HTTP %d %s, want 400", tc.name, resp.StatusCode, body)
			continue
		}
		r := resp2(resp, body)
		if e := r.RPCError(t, -32600); !strings.Contains(e.Message, "Last-Event-ID") {
			t.Errorf("%s: error %q does not name Last-Event-ID", tc.name, e.Message)
		}
	}
	// The owner can still resume it; the refusals changed nothing.
	resp := resumeGET(t, g, a, lastA)
	evs := readEvents(t, resp.Body, nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(evs) == 0 || !evs[len(evs)-1].msg.IsResponse() {
		t.Errorf("owner's resume: HTTP %d, %d events", resp.StatusCode, len(evs))
	}
	// A GET stream's own id ("g-…") reopens the GET stream as before.
	code, closeGET := openGETWithLast(g, t, a, "g-3")
	closeGET()
	if code != http.StatusOK {
		t.Errorf("GET with a GET stream's Last-Event-ID: HTTP %d, want 200", code)
	}
	// A session's buffers end with it: after DELETE the id is unknown (404: no session).
	if r := g.Do(t, gatewaytest.Req{Method: http.MethodDelete, Header: gatewaytest.SessionHeaders(a, "2025-11-25")}); r.Status != http.StatusOK {
		t.Fatalf("DELETE: HTTP %d", r.Status)
	}
	if r := resumeGET(t, g, a, lastA); r.StatusCode != http.StatusNotFound {
		t.Errorf("resume on an ended session: HTTP %d, want 404", r.StatusCode)
	}
}

func resp2(r *http.Response, body []byte) gatewaytest.Resp {
	return gatewaytest.Resp{Status: r.StatusCode, Header: r.Header, Body: body}
}

func openGETWithLast(g *gatewaytest.GW, t *testing.T, sid, last string) (int, func()) {
	t.Helper()
	resp := resumeGET(t, g, sid, last)
	return resp.StatusCode, func() { resp.Body.Close() }
}

func metricsText(t *testing.T, g *gatewaytest.GW) string {
	t.Helper()
	r := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/metrics"})
	return string(r.Body)
}
