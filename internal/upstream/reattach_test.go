package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient/httpclienttest"
)

// sessionPeer is a streamable HTTP upstream of the session revision, for the reattach
// tests: initialize opens a session (its id "sid-N"), a request in a session it knows is
// answered with the session's id and the method, one in a session it does not know gets
// gone (404, or 400 naming the session with the request's id, as the npm reference
// servers answer); DELETE ends a session.
type sessionPeer struct {
	cs   *httpclienttest.CountedServer
	gone int // the status of a request in an unknown session

	mu       sync.Mutex
	sessions map[string]bool
	n        int
	methods  []string // every POSTed method, in order, as "sid method"
	deleted  []string
	versions []string // the Mcp-Protocol-Version of each non-initialize POST
}

func newSessionPeer(t *testing.T, gone int) *sessionPeer {
	p := &sessionPeer{gone: gone, sessions: map[string]bool{}}
	p.cs = httpclienttest.NewCountedServer(t, false, func(_ *httpclienttest.CountedServer, w http.ResponseWriter, r *http.Request) {
		p.serve(w, r)
	})
	return p
}

func (p *sessionPeer) serve(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get("Mcp-Session-Id")
	p.mu.Lock()
	defer p.mu.Unlock()
	switch r.Method {
	case http.MethodDelete:
		p.deleted = append(p.deleted, sid)
		delete(p.sessions, sid)
		return
	case http.MethodGet:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &m)
	p.methods = append(p.methods, sid+" "+m.Method)
	w.Header().Set("Content-Type", "application/json")
	if m.Method == "initialize" {
		p.n++
		sid = fmt.Sprintf("sid-%d", p.n)
		p.sessions[sid] = true
		w.Header().Set("Mcp-Session-Id", sid)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"serverInfo":{"name":"peer","version":"1"}}}`, m.ID)
		return
	}
	p.versions = append(p.versions, r.Header.Get("Mcp-Protocol-Version"))
	if !p.sessions[sid] {
		w.WriteHeader(p.gone)
		if p.gone == http.StatusBadRequest {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":%s}`, m.ID)
		}
		return
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"sid":%q,"method":%q}}`, m.ID, sid, m.Method)
}

func (p *sessionPeer) seen() (methods, deleted, versions []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.methods...), append([]string(nil), p.deleted...), append([]string(nil), p.versions...)
}

func (p *sessionPeer) options() Options {
	return Options{Name: "up", Transport: "streamable_http", URL: p.cs.URL + "/mcp", ConnectTimeout: 5 * time.Second, Log: slog.New(slog.DiscardHandler)}
}

// A task's session outlives its connection: a reattached connection speaks in it with
// its id and version and no initialize, the instance that kept it (KeepSession) and the
// reattached one both close without ending it, and an instance that keeps nothing ends
// its session as before.
func TestReattachSpeaksInTheKeptSession(t *testing.T) {
	p := newSessionPeer(t, http.StatusNotFound)
	d := NewDialer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.Dial(ctx, p.options())
	if err != nil {
		t.Fatal(err)
	}
	sid, version := c.SessionRef()
	if sid != "sid-1" || version != "2025-11-25" {
		t.Fatalf("SessionRef = %q, %q; want sid-1, 2025-11-25", sid, version)
	}
	c.KeepSession(time.Now().Add(time.Hour))
	c.KeepSession(time.Now()) // an earlier keep does not shorten it
	_ = c.Close()

	r, err := d.Reattach(p.options(), sid, version)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Request(ctx, "tasks/get", json.RawMessage(`{"taskId":"t1"}`))
	if err != nil {
		t.Fatalf("tasks/get on the reattached session: %v", err)
	}
	if string(res) != `{"sid":"sid-1","method":"tasks/get"}` {
		t.Errorf("tasks/get on the reattached session answered %s", res)
	}
	_ = r.Close()

	other, err := d.Dial(ctx, p.options()) // keeps nothing
	if err != nil {
		t.Fatal(err)
	}
	_ = other.Close()
	methods, deleted, versions := p.seen()
	if want := []string{" initialize", "sid-1 notifications/initialized", "sid-1 tasks/get", " initialize", "sid-2 notifications/initialized"}; strings.Join(methods, ",") != strings.Join(want, ",") {
		t.Errorf("the upstream saw %q, want %q (no initialize of the reattached connection)", methods, want)
	}
	if strings.Join(deleted, ",") != "sid-2" {
		t.Errorf("sessions ended: %q, want only sid-2 (sid-1 is kept for its task)", deleted)
	}
	for _, v := range versions {
		if v != "2025-11-25" {
			t.Errorf("a request went with Mcp-Protocol-Version %q", v)
		}
	}
}

// An upstream that no longer knows the session (restarted, or ended it) answers 404 or
// 400 naming the session; the reattached request fails with ErrSessionGone (not the
// upstream's error as an answer), at once, and the connection ends.
func TestReattachSessionGone(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			p := newSessionPeer(t, status)
			r, err := NewDialer().Reattach(p.options(), "sid-from-before", "2025-11-25")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = r.Request(ctx, "tasks/get", json.RawMessage(`{"taskId":"t1"}`))
			if !errors.Is(err, ErrSessionGone) || !errors.Is(err, ErrClosed) {
				t.Fatalf("tasks/get in a session the upstream does not know: %v, want ErrSessionGone", err)
			}
			select {
			case <-r.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the reattached connection did not end")
			}
			if _, deleted, _ := p.seen(); len(deleted) != 0 {
				t.Errorf("a reattached connection ended sessions %q", deleted)
			}
		})
	}
}

// Only a streamable HTTP session can be reattached to; a connection of another transport,
// or of the stateless revision, names no session to keep.
func TestReattachOnlyHTTPSessions(t *testing.T) {
	d := NewDialer()
	if _, err := d.Reattach(Options{Name: "s", Transport: "stdio", Command: "true"}, "x", "2025-11-25"); err == nil {
		t.Error("a stdio server was reattached to")
	}
	p := newSessionPeer(t, http.StatusNotFound)
	if _, err := d.Reattach(p.options(), "", "2025-11-25"); err == nil {
		t.Error("an empty session was reattached to")
	}
	c := &Conn{tr: &stdioTransport{}}
	if id, v := c.SessionRef(); id != "" || v != "" {
		t.Errorf("a stdio connection's SessionRef = %q, %q", id, v)
	}
	c.KeepSession(time.Now().Add(time.Hour)) // nothing to keep, no panic
	st := &Conn{tr: &streamTransport{sessionID: "s", version: StatelessVersion}}
	if id, _ := st.SessionRef(); id != "" {
		t.Errorf("a stateless connection's SessionRef = %q", id)
	}
}

// An upstream that cannot be reached has not lost the session: the request fails as any
// unreachable upstream's does, not with ErrSessionGone (the task is polled again later).
func TestReattachUnreachableIsNotGone(t *testing.T) {
	p := newSessionPeer(t, http.StatusNotFound)
	o := p.options()
	p.cs.Close() // the upstream is down
	r, err := NewDialer().Reattach(o, "sid-1", "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = r.Request(ctx, "tasks/get", json.RawMessage(`{"taskId":"t1"}`))
	if err == nil || errors.Is(err, ErrSessionGone) {
		t.Fatalf("tasks/get to an upstream that is down: %v, want a failure that is not ErrSessionGone", err)
	}
}
