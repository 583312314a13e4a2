package legacysse

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/wire"
)

type sess struct{ id string }

// host is a fake gateway: sessions by id, and what the transport handed it.
type host struct {
	mu        sync.Mutex
	sessions  map[string]*sess
	delivered []string
	inits     int
	ended     chan string
	deny      bool
}

func newHost() *host { return &host{sessions: map[string]*sess{}, ended: make(chan string, 4)} }

// Admit is the gateway's admission: an evil origin is refused, then the transport's
// checks, then the caller (deny: none), then the session.
func (h *host) Admit(w http.ResponseWriter, r *http.Request, rd intake.Reading) (intake.Admission[*sess], bool) {
	var a intake.Admission[*sess]
	if r.Header.Get("Origin") == "http://evil.example" {
		w.WriteHeader(http.StatusForbidden)
		return a, false
	}
	if !rd.Head(w, r) {
		return a, false
	}
	if h.deny {
		w.WriteHeader(http.StatusUnauthorized)
		return a, false
	}
	a.ID = &auth.Identity{Agent: r.Header.Get("X-Agent-ID")}
	want, ok := rd.Read(w, r, a.ID)
	if !ok || want.Session == "" {
		return a, ok
	}
	h.mu.Lock()
	s := h.sessions[want.Session]
	h.mu.Unlock()
	if s == nil {
		w.WriteHeader(http.StatusNotFound)
		return a, false
	}
	a.Session, a.Has = s, true
	return a, true
}

func (h *host) Open(w http.ResponseWriter, r *http.Request, id *auth.Identity, st *clientstream.Stream) (*sess, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &sess{id: "s" + id.Agent}
	h.sessions[s.id] = s
	return s, true
}

func (h *host) ID(s *sess) string       { return s.id }
func (h *host) End(s *sess, why string) { h.ended <- s.id + ": " + why }

func (h *host) Deliver(s *sess, m *wire.Msg) {
	h.mu.Lock()
	h.delivered = append(h.delivered, "deliver:"+m.Method)
	h.mu.Unlock()
}

func (h *host) Initialize(s *sess, m *wire.Msg) {
	h.mu.Lock()
	h.inits++
	h.mu.Unlock()
}

func (h *host) Dispatch(ctx context.Context, s *sess, m *wire.Msg) {
	h.mu.Lock()
	h.delivered = append(h.delivered, "dispatch:"+m.Method)
	h.mu.Unlock()
}

func TestServeSSE(t *testing.T) {
	h := newHost()
	sv := &Server[*sess]{Host: h, Body: intake.BodyLimit{Max: 1 << 20}, Queue: 8}
	ts := httptest.NewServer(http.HandlerFunc(sv.ServeSSE))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/mcp/sse", nil)
	req.Header.Set("X-Agent-ID", "a")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	l1, _ := br.ReadString('\n')
	l2, _ := br.ReadString('\n')
	if l1 != "event: endpoint\n" || l2 != "data: /mcp/messages?sessionId=sa\n" {
		t.Errorf("first event %q %q", l1, l2)
	}
	resp.Body.Close()
	select {
	case why := <-h.ended:
		if why != "sa: event stream closed" {
			t.Errorf("ended %q", why)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the session did not end when its stream closed")
	}
}

func TestServeSSERefusals(t *testing.T) {
	h := newHost()
	sv := &Server[*sess]{Host: h, Body: intake.BodyLimit{Max: 1 << 20}, Queue: 8}
	w := httptest.NewRecorder()
	sv.ServeSSE(w, httptest.NewRequest("POST", "/sse", nil))
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET" {
		t.Errorf("POST /sse: %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
	r := httptest.NewRequest("GET", "/sse", nil)
	r.Header.Set("Origin", "http://evil.example")
	w = httptest.NewRecorder()
	sv.ServeSSE(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("foreign origin: %d", w.Code)
	}
	h.deny = true
	w = httptest.NewRecorder()
	sv.ServeSSE(w, httptest.NewRequest("GET", "/sse", nil))
	if w.Code != http.StatusUnauthorized || len(h.sessions) != 0 {
		t.Errorf("no credential: %d, %d sessions", w.Code, len(h.sessions))
	}
}

func TestServeMessage(t *testing.T) {
	h := newHost()
	h.sessions["s1"] = &sess{id: "s1"}
	sv := &Server[*sess]{Host: h, Body: intake.BodyLimit{Max: 1 << 20}, Queue: 8}
	post := func(target, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		sv.ServeMessage(w, httptest.NewRequest("POST", target, strings.NewReader(body)))
		return w
	}
	for _, c := range []struct {
		target, body string
		status       int
	}{
		{"/message?sessionId=s1", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, http.StatusAccepted},
		{"/message?sessionid=s1", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.StatusAccepted},
		{"/message?sessionId=s1", `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`, http.StatusAccepted},
		{"/message", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.StatusBadRequest},
		{"/message?sessionId=nope", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.StatusNotFound},
		{"/message?sessionId=s1", `{"jsonrpc":`, http.StatusBadRequest},
	} {
		if w := post(c.target, c.body); w.Code != c.status {
			t.Errorf("POST %s %s: %d, want %d", c.target, c.body, w.Code, c.status)
		}
	}
	if got := strings.Join(h.delivered, ","); got != "dispatch:tools/list,deliver:notifications/initialized" || h.inits != 1 {
		t.Errorf("handed on %q, %d initialize", got, h.inits)
	}
	w := httptest.NewRecorder()
	sv.ServeMessage(w, httptest.NewRequest("GET", "/message?sessionId=s1", nil))
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET /message: %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
}
