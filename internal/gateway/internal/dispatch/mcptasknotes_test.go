package dispatch

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/mcptask"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// liveHost is fakeHost with live sessions.
type liveHost struct {
	fakeHost
	live map[string]*session.Session
}

func (h liveHost) Live(id string) *session.Session { return h.live[id] }

// oneWrite is a stream's client: it keeps the stream's first write, then goes away.
type oneWrite struct {
	httptest.ResponseRecorder
	gone context.CancelFunc
}

func (w *oneWrite) Write(b []byte) (int, error) {
	defer w.gone()
	return w.ResponseRecorder.Write(b)
}

// delivered is what reached s's stream: the messages that waited for it, up to a last
// one the test sends itself (so that the stream always has something to write).
func delivered(t *testing.T, s *session.Session) []string {
	t.Helper()
	st := clientstream.New("", 64)
	if !s.Attach(st) {
		t.Fatal("the session has a stream already")
	}
	_ = st.Send([]byte(`{"end":true}`))
	ctx, cancel := context.WithCancel(context.Background())
	w := &oneWrite{ResponseRecorder: *httptest.NewRecorder(), gone: cancel}
	st.Pump(w, (&http.Request{}).WithContext(ctx)) // one write: everything queued, then the client is gone
	s.Detach(st)
	st.Close()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(w.Body.Bytes()))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != `{"end":true}` {
			out = append(out, d)
		}
	}
	return out
}

func unroutableCount(m *telemetry.Metrics) float64 {
	fams, _ := m.Gather()
	var n float64
	for _, f := range fams {
		if f.GetName() == "mcpgw_unroutable_messages_total" {
			for _, s := range f.GetMetric() {
				n += s.GetCounter().GetValue()
			}
		}
	}
	return n
}

// statusNote is an upstream's notifications/tasks/status with params.
func statusNote(params string) (*wire.Msg, []byte) {
	raw := wire.Notification("notifications/tasks/status", []byte(params))
	var m wire.Msg
	_ = wire.ParseInto(raw, &m)
	return &m, raw
}

// TestTaskStatusNoteKeepsInstancesApart: two instances of one server (two agents'
// per_agent instances here) both number their tasks "1". A status notification is routed
// by the instance it came on: alice's instance's task 1 reaches alice's session under her
// task id, never bob's (it used to go to whichever session created a task "1" last).
func TestTaskStatusNoteKeepsInstancesApart(t *testing.T) {
	metrics := telemetry.NewMetrics("all")
	alice, bob := session.New(noSessionHost{}, store.Record{ID: "alice-s"}), session.New(noSessionHost{}, store.Record{ID: "bob-s"})
	dp := New(Parts{Cfg: &config.Config{}, Ctx: context.Background(), Store: store.NewMemory(),
		Host: liveHost{live: map[string]*session.Session{"alice-s": alice, "bob-s": bob}},
		Obs:  MetricsHooks(metrics), Log: slog.New(slog.DiscardHandler)}, "__")
	ca, cb := &upstream.Conn{Name: "ev"}, &upstream.Conn{Name: "ev"}
	for _, x := range []struct {
		s *session.Session
		c *upstream.Conn
	}{{alice, ca}, {bob, cb}} {
		o := &taskCreateOutbox{Outbox: &collectOutbox{}, dp: dp, s: x.s, server: "ev", conn: x.c}
		if err := o.Reply(wire.Result(wire.Quote("1"), []byte(`{"task":{"taskId":"1","status":"working","ttl":60000}}`))); err != nil {
			t.Fatal(err)
		}
	}
	aliceTask := createdTaskIDOf(t, dp, alice)
	m, raw := statusNote(`{"taskId":"1","status":"completed","ttl":60000}`)
	dp.HandleUpstream(nil, ca, m, raw, nil)
	got := delivered(t, alice)
	if len(got) != 1 || !strings.Contains(got[0], `"taskId":"`+aliceTask+`"`) || strings.Contains(got[0], `"taskId":"1"`) {
		t.Errorf("alice got %q, want one status note of her task %s", got, aliceTask)
	}
	if got := delivered(t, bob); len(got) != 0 {
		t.Errorf("bob got alice's instance's status note: %q", got)
	}
	// Bob's instance (his own, per_session) says its task 1 moved on: bob's task.
	bobTask := createdTaskIDOf(t, dp, bob)
	dp.HandleUpstream(bob, cb, m, raw, nil)
	if got := delivered(t, bob); len(got) != 1 || !strings.Contains(got[0], `"taskId":"`+bobTask+`"`) {
		t.Errorf("bob got %q, want one status note of his task %s", got, bobTask)
	}
	// A third instance of the server that names task 1 names nobody's task.
	dp.HandleUpstream(nil, &upstream.Conn{Name: "ev"}, m, raw, nil)
	if a, b := delivered(t, alice), delivered(t, bob); len(a)+len(b) != 0 {
		t.Errorf("a third instance's task 1 reached alice %q or bob %q", a, b)
	}
	if n := unroutableCount(metrics); n != 1 {
		t.Errorf("mcpgw_unroutable_messages_total = %v, want 1", n)
	}
}

// createdTaskIDOf is the gateway id of s's one task.
func createdTaskIDOf(t *testing.T, dp *Dispatcher, s *session.Session) string {
	t.Helper()
	l, err := dp.tasks.List(taskOwner(s))
	if err != nil || len(l) != 1 {
		t.Fatalf("session %s holds %v (%v), want one task", s.ID, l, err)
	}
	return l[0].ID
}

// TestTaskStatusNoteMalformed: a status notification whose params are not an object,
// name taskId twice (parsers disagree on which counts), or whose taskId is not a string
// reaches nobody and is counted.
func TestTaskStatusNoteMalformed(t *testing.T) {
	metrics := telemetry.NewMetrics("all")
	alice := session.New(noSessionHost{}, store.Record{ID: "alice-s"})
	dp := New(Parts{Cfg: &config.Config{}, Ctx: context.Background(), Store: store.NewMemory(),
		Host: liveHost{live: map[string]*session.Session{"alice-s": alice}},
		Obs:  MetricsHooks(metrics), Log: slog.New(slog.DiscardHandler)}, "__")
	c := &upstream.Conn{Name: "ev"}
	id, err := dp.tasks.Add(taskOwner(alice), mcptaskRoute("ev", "1", "alice-s"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	dp.tasks.Bind(weak.Make(c), "1", id, "alice-s", time.Minute)
	bad := []string{`[]`, `"1"`, `{"taskId":1}`, `{"taskId":"1","taskId":"2"}`, `{"taskId":"2","taskId":"1"}`, `{"TaskId":"1"}`, `{"taskId":""}`, `{}`, `null`}
	for _, p := range bad {
		m, raw := statusNote(p)
		dp.HandleUpstream(nil, c, m, raw, nil)
	}
	if got := delivered(t, alice); len(got) != 0 {
		t.Errorf("malformed status notes reached the task's session: %q", got)
	}
	if n := unroutableCount(metrics); n != float64(len(bad)) {
		t.Errorf("mcpgw_unroutable_messages_total = %v, want %d", n, len(bad))
	}
}

func mcptaskRoute(server, up, session string) mcptask.Route {
	return mcptask.Route{Server: server, UpstreamID: up, Session: session}
}

// TestTaskStatusNoteOnAnAgentsInstance: two sessions of one agent share its per_agent
// instance, which hands what it sends to the session whose call is in flight (its guess
// at an owner). A status notification of the first session's task, arriving while the
// second has a call in flight, is still the first's: the connection and the id say whose
// task it is, not the guess (it used to be dropped).
func TestTaskStatusNoteOnAnAgentsInstance(t *testing.T) {
	metrics := telemetry.NewMetrics("all")
	s1, s2 := session.New(noSessionHost{}, store.Record{ID: "s1", Agent: "a"}), session.New(noSessionHost{}, store.Record{ID: "s2", Agent: "a"})
	dp := New(Parts{Cfg: &config.Config{}, Ctx: context.Background(), Store: store.NewMemory(),
		Host: liveHost{live: map[string]*session.Session{"s1": s1, "s2": s2}},
		Obs:  MetricsHooks(metrics), Log: slog.New(slog.DiscardHandler)}, "__")
	c := &upstream.Conn{Name: "ev"}
	o := &taskCreateOutbox{Outbox: &collectOutbox{}, dp: dp, s: s1, server: "ev", conn: c}
	if err := o.Reply(wire.Result(wire.Quote("1"), []byte(`{"task":{"taskId":"u-1","status":"working","ttl":60000}}`))); err != nil {
		t.Fatal(err)
	}
	id := createdTaskIDOf(t, dp, s1)
	m, raw := statusNote(`{"taskId":"u-1","status":"completed"}`)
	dp.HandleUpstream(s2, c, m, raw, nil) // s2's call is the one in flight
	if got := delivered(t, s1); len(got) != 1 || !strings.Contains(got[0], `"taskId":"`+id+`"`) {
		t.Errorf("s1 got %q, want the status note of its task %s", got, id)
	}
	if got := delivered(t, s2); len(got) != 0 {
		t.Errorf("s2 got s1's task's status note: %q", got)
	}
}
