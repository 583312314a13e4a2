package streamable

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/wire"
)

type sess struct {
	id, version string
	stream      *clientstream.Stream
}

// host is a fake gateway that records what the transport handed it.
type host struct {
	mu       sync.Mutex
	sessions map[string]*sess
	log      []string
}

func (h *host) note(s string) {
	h.mu.Lock()
	h.log = append(h.log, s)
	h.mu.Unlock()
}

// Admit is the gateway's admission without origins or credentials: the caller is its
// X-Agent-ID, and "intruder" may use no session.
func (h *host) Admit(w http.ResponseWriter, r *http.Request, rd intake.Reading) (intake.Admission[*sess], bool) {
	var a intake.Admission[*sess]
	if !rd.Head(w, r) {
		return a, false
	}
	a.ID = &auth.Identity{Agent: r.Header.Get("X-Agent-ID")}
	want, ok := rd.Read(w, r, a.ID)
	if !ok || want.Session == "" {
		return a, ok
	}
	s := h.sessions[want.Session]
	if s == nil {
		reply.JSON(w, http.StatusNotFound, wire.Error(want.MsgID, wire.CodeSessionNotFound, "Session not found", nil))
		return a, false
	}
	if a.ID.Agent == "intruder" {
		w.WriteHeader(http.StatusForbidden)
		return a, false
	}
	if !rd.Accepts(w, r, s.version) {
		return a, false
	}
	a.Session, a.Has, a.Version = s, true, s.version
	return a, true
}
func (h *host) Stateless(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg) {
	h.note("stateless:" + m.Method)
	w.WriteHeader(299)
}
func (h *host) Initialize(w http.ResponseWriter, r *http.Request, id *auth.Identity, m *wire.Msg) {
	h.note("initialize")
	w.WriteHeader(http.StatusOK)
}
func (h *host) Deliver(s *sess, m *wire.Msg) { h.note("deliver:" + m.Method) }
func (h *host) Call(w http.ResponseWriter, r *http.Request, s *sess, m *wire.Msg) {
	h.note("call:" + m.Method)
	reply.JSON(w, http.StatusOK, wire.Result(m.ID, json.RawMessage(`{}`)))
}
func (h *host) Collect(ctx context.Context, s *sess, m *wire.Msg) []byte {
	h.note("collect:" + m.Method)
	return wire.Result(m.ID, json.RawMessage(`{}`))
}
func (h *host) Attach(s *sess, st *clientstream.Stream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.stream != nil {
		return false
	}
	s.stream = st
	return true
}
func (h *host) Detach(s *sess, st *clientstream.Stream) {
	h.mu.Lock()
	s.stream = nil
	h.mu.Unlock()
}
func (h *host) Resume(w http.ResponseWriter, r *http.Request, s *sess, last string) {
	h.note("resume:" + last)
}
func (h *host) End(s *sess, why string) { h.note("end:" + s.id) }

func newServer() (*Server[*sess], *host) {
	h := &host{sessions: map[string]*sess{
		"new": {id: "new", version: "2025-11-25"},
		"old": {id: "old", version: "2025-03-26"},
	}}
	return &Server[*sess]{Host: h, Body: intake.BodyLimit{Max: 1 << 20}, Queue: 4, Versions: []string{"2025-11-25", "2025-06-18", "2025-03-26"},
		AllVersions: []string{"2026-07-28", "2025-11-25"}, StatelessVersion: "2026-07-28"}, h
}

func do(sv *Server[*sess], method, body string, hdr map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "/mcp", strings.NewReader(body))
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	sv.ServeHTTP(w, r)
	return w
}

func TestPost(t *testing.T) {
	sv, h := newServer()
	cases := []struct {
		name, body string
		hdr        map[string]string
		status     int
		want       string // part of the body, or ""
	}{
		{"call", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "new"}, 200, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": "new"}, 202, ""},
		{"no session id", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 400, "Mcp-Session-Id header is required"},
		{"unknown session", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "gone"}, 404, "Session not found"},
		{"another's session", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "new", "X-Agent-ID": "intruder"}, 403, ""},
		{"switched version", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": "new", "Mcp-Protocol-Version": "2025-06-18"}, 400, "differs from the session's negotiated version"},
		{"2025-03-26 header", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Session-Id": "new", "Mcp-Protocol-Version": "2025-03-26"}, 200, ""},
		{"initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, nil, 200, ""},
		{"initialize notification", `{"jsonrpc":"2.0","method":"initialize"}`, nil, 400, "initialize must be a request"},
		{"stateless", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, 299, ""},
		{"discover without header", `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, nil, 400, `"code":-32022`},
		{"malformed", `{"jsonrpc":"2.0","id":1,"method":`, nil, 400, `"code":-32700`},
		{"not JSON-RPC 2.0", `{"jsonrpc":"1.0","id":1,"method":"x"}`, nil, 400, `"code":-32600`},
	}
	for _, c := range cases {
		w := do(sv, "POST", c.body, c.hdr)
		if w.Code != c.status || !strings.Contains(w.Body.String(), c.want) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, w.Code, w.Body.String(), c.status, c.want)
		}
	}
	want := "call:tools/list,deliver:notifications/initialized,call:ping,initialize,stateless:tools/list"
	if got := strings.Join(h.log, ","); got != want {
		t.Errorf("handed on %s, want %s", got, want)
	}
}

func TestBatch(t *testing.T) {
	sv, h := newServer()
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"bad":1}]`
	w := do(sv, "POST", batch, map[string]string{"Mcp-Session-Id": "old"})
	if w.Code != 200 || !strings.HasPrefix(w.Body.String(), "[") || !strings.Contains(w.Body.String(), `"code":-32600`) {
		t.Errorf("2025-03-26 batch: %d %s", w.Code, w.Body.String())
	}
	if got := strings.Join(h.log, ","); got != "collect:ping,deliver:notifications/x" {
		t.Errorf("batch handed on %s", got)
	}
	for name, hdr := range map[string]map[string]string{
		"no session":    nil,
		"newer session": {"Mcp-Session-Id": "new"},
		"newer header":  {"Mcp-Session-Id": "old", "Mcp-Protocol-Version": "2025-06-18"},
	} {
		if w := do(sv, "POST", batch, hdr); w.Code != 400 || !strings.Contains(w.Body.String(), "batching is not supported") {
			t.Errorf("%s: %d %s", name, w.Code, w.Body.String())
		}
	}
	if w := do(sv, "POST", `[1,`, map[string]string{"Mcp-Session-Id": "old"}); w.Code != 400 || !strings.Contains(w.Body.String(), `"code":-32700`) {
		t.Errorf("malformed batch: %d %s", w.Code, w.Body.String())
	}
	if w := do(sv, "POST", `[]`, map[string]string{"Mcp-Session-Id": "old"}); w.Code != 400 {
		t.Errorf("empty batch: %d", w.Code)
	}
}

func TestGetDelete(t *testing.T) {
	sv, h := newServer()
	if w := do(sv, "GET", "", map[string]string{"Mcp-Session-Id": "new"}); w.Code != http.StatusNotAcceptable {
		t.Errorf("GET without Accept: %d", w.Code)
	}
	ev := map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "new"}
	if w := do(sv, "GET", "", map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "new", "Mcp-Protocol-Version": "2099-01-01"}); w.Code != 400 {
		t.Errorf("GET with an unknown version: %d", w.Code)
	}
	h.sessions["new"].stream = clientstream.New("g", 1)
	if w := do(sv, "GET", "", ev); w.Code != http.StatusConflict {
		t.Errorf("a second GET stream: %d", w.Code)
	}
	if w := do(sv, "GET", "", map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "new", "Last-Event-ID": "p-7"}); w.Code != 200 {
		t.Errorf("resume: %d", w.Code)
	}
	if w := do(sv, "DELETE", "", map[string]string{"Mcp-Session-Id": "new"}); w.Code != 200 {
		t.Errorf("DELETE: %d", w.Code)
	}
	if w := do(sv, "DELETE", "", nil); w.Code != 400 {
		t.Errorf("DELETE without a session id: %d", w.Code)
	}
	if got := strings.Join(h.log, ","); got != "resume:p-7,end:new" {
		t.Errorf("handed on %s", got)
	}
	if w := do(sv, "PUT", "", nil); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, POST, DELETE" {
		t.Errorf("PUT: %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
}

// TestGetStream: a GET stream is attached while the client reads and detached when it
// goes.
func TestGetStream(t *testing.T) {
	sv, h := newServer()
	ts := httptest.NewServer(sv)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", "new")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("GET stream: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	h.mu.Lock()
	attached := h.sessions["new"].stream != nil
	h.mu.Unlock()
	if !attached {
		t.Error("no stream attached while the GET is open")
	}
	cancel()
	resp.Body.Close()
}
