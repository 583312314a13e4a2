package dispatch

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// watched records the events an Observer is given.
type watched struct {
	calls, invalid []callEvent
	denials        []denialEvent
	unvalidated    []string
	unroutable     []string
	slots          []time.Duration
	depth          []int
}

func (w *watched) observer() Observer {
	return Observer{
		called:      func(_ context.Context, ev callEvent) { w.calls = append(w.calls, ev) },
		invalid:     func(_ context.Context, ev callEvent) { w.invalid = append(w.invalid, ev) },
		denied:      func(_ context.Context, ev denialEvent) { w.denials = append(w.denials, ev) },
		unvalidated: func(server, why string) { w.unvalidated = append(w.unvalidated, server+"/"+why) },
		unroutable:  func(server, kind string) { w.unroutable = append(w.unroutable, server+"/"+kind) },
		slotWait:    func(_ string, waited time.Duration) { w.slots = append(w.slots, waited) },
		queueDepth:  func(_ string, delta int) { w.depth = append(w.depth, delta) },
	}
}

// viewHost is a session host with an empty registry: sessions see an empty view and find
// no server.
type viewHost struct{ noSessionHost }

func (viewHost) Instances() *registry.Instances {
	return registry.New(&config.Config{}, nil).Instances()
}
func (viewHost) BuildView(*session.Session, *auth.Filter, map[string]bool, map[string]*registry.Catalog) *registry.View {
	return &registry.View{}
}

// With joins two observers: each event reaches both, the first's hook first; a hook only
// one side has is that side's; the request hooks nest, the second inside the first, and
// end in the reverse order.
func TestObserverWithJoinsBothInOrder(t *testing.T) {
	var order []string
	type key struct{}
	a := Observer{
		called: func(context.Context, callEvent) { order = append(order, "a.called") },
		request: func(ctx context.Context, _ *session.Session, _ *wire.Msg) (context.Context, func()) {
			order = append(order, "a.start")
			return context.WithValue(ctx, key{}, "a"), func() { order = append(order, "a.end") }
		},
	}
	b := Observer{
		called:  func(context.Context, callEvent) { order = append(order, "b.called") },
		dropped: func(why string) { order = append(order, "b.dropped:"+why) },
		request: func(ctx context.Context, _ *session.Session, _ *wire.Msg) (context.Context, func()) {
			order = append(order, "b.start:"+ctx.Value(key{}).(string))
			return ctx, func() { order = append(order, "b.end") }
		},
	}
	o := a.With(b).With(Observer{})
	o.toolCalled(context.Background(), callEvent{})
	o.answerDropped("unknown")
	o.unroutableMsg("up", "request") // neither side watches it: nothing, and no panic
	ctx, end := o.startRequest(context.Background(), nil, &wire.Msg{})
	end()
	if ctx.Value(key{}) != "a" {
		t.Error("the joined request hook lost the first hook's context")
	}
	want := "a.called b.called b.dropped:unknown a.start b.start:a b.end a.end"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("events reached the hooks as\n  %s\nwant\n  %s", got, want)
	}
}

// A call by a name the session's view lacks is one denial event, with the reason and rule
// the host gives, and no call event; the gateway's own tools are answered without one.
func TestUnknownToolIsOneDenial(t *testing.T) {
	var w watched
	dp := New(Parts{Cfg: &config.Config{}, Ctx: context.Background(), Host: fakeHost{}, Obs: w.observer()}, "__")
	s := session.New(viewHost{}, store.Record{ID: "s1", Agent: "a1"})
	out := &collect{}
	dp.Dispatch(context.Background(), s, mustMsg(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`), out)
	if len(out.replies) != 1 || !strings.Contains(string(out.replies[0]), "Unknown tool: nope") {
		t.Fatalf("replies: %q", out.replies)
	}
	if len(w.denials) != 1 || len(w.calls) != 0 {
		t.Fatalf("events: %d denials, %d calls; want one denial and no call", len(w.denials), len(w.calls))
	}
	if d := w.denials[0]; d.s != s || d.tool != "nope" || d.reason != "unknown_tool" || d.rule != "unknown tool" || d.duration < 0 {
		t.Fatalf("denial event %+v", d)
	}
	dp.Dispatch(context.Background(), s, mustMsg(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcpgw__describe_tools","arguments":{"names":[]}}}`), out)
	if len(out.replies) != 2 || !strings.Contains(string(out.replies[1]), `"result"`) || len(w.denials) != 1 {
		t.Fatalf("describe_tools: replies %q, %d denials", out.replies, len(w.denials))
	}
}

// A request that waits for a limited instance's slot is watched joining and leaving the
// queue and for how long it waited; one that finds a slot free waited 0 and never queued.
func TestSlotWaitIsWatched(t *testing.T) {
	var w watched
	dp := New(Parts{Cfg: &config.Config{}, Ctx: context.Background(), Host: fakeHost{}, Obs: w.observer()}, "__")
	s := session.New(noSessionHost{}, store.Record{ID: "s1"})
	l := upstream.NewLimiter(1, 4, time.Minute)
	if waited, err := dp.takeSlot(context.Background(), s, json.RawMessage(`1`), "up", l); err != nil || waited {
		t.Fatalf("first request: waited %v, %v", waited, err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		l.Release()
	}()
	if waited, err := dp.takeSlot(context.Background(), s, json.RawMessage(`2`), "up", l); err != nil || !waited {
		t.Fatalf("second request: waited %v, %v", waited, err)
	}
	if len(w.slots) != 2 || w.slots[0] != 0 || w.slots[1] < 10*time.Millisecond {
		t.Fatalf("slot waits %v, want 0 then the queued request's wait", w.slots)
	}
	if len(w.depth) != 2 || w.depth[0] != 1 || w.depth[1] != -1 {
		t.Fatalf("queue depth moves %v, want [1 -1]", w.depth)
	}
}

// Progress for a token no call holds reaches no one, and the relay says so to the observer.
func TestRelayWatchesUnroutableProgress(t *testing.T) {
	var w watched
	dp := New(Parts{Cfg: &config.Config{}, Ctx: context.Background(), Host: fakeHost{}, Obs: w.observer()}, "__")
	c := &upstream.Conn{Name: "up"}
	dp.HandleUpstream(nil, c, mustMsg(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"guessed","progress":1}}`), nil, nil)
	dp.HandleUpstream(nil, c, mustMsg(t, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`), nil, nil)
	if strings.Join(w.unroutable, " ") != "up/notification up/notification" {
		t.Fatalf("unroutable events %v", w.unroutable)
	}
}

// A closed session's plugin subscription is refused by the plugin part before any plugin
// is asked.
func TestPluginSubscribeRefusesAnEndedSession(t *testing.T) {
	dp := newTestDispatcher()
	s := session.New(noSessionHost{}, store.Record{ID: "s1"})
	s.Close()
	if err := dp.SubscribePlugin(s, "mcpgw+plugin://p/c/k", registry.PluginRef{Plugin: "p"}, nil); err == nil || !strings.Contains(err.Error(), "session ended") {
		t.Fatalf("subscribe on an ended session: %v", err)
	}
	dp.UnsubscribePlugin(s, "mcpgw+plugin://p/c/k") // nothing held: nothing to do
}

// The metrics hooks count what the events say, as a scrape reads it.
func TestMetricsHooksCount(t *testing.T) {
	m := telemetry.NewMetrics("all")
	o := MetricsHooks(m)
	s := session.New(noSessionHost{}, store.Record{ID: "s1", Agent: "a1"})
	tl := &registry.Tool{Server: "up", Name: "echo", Exposed: "up__echo"}
	o.toolCalled(context.Background(), callEvent{s: s, t: tl, outcome: "ok", duration: time.Millisecond})
	o.invalidArgs(context.Background(), callEvent{s: s, t: tl, outcome: "invalid_arguments"})
	o.deniedCall(context.Background(), denialEvent{s: s, tool: "x", reason: "held_tool"})
	o.unvalidatedCall("up", "schema")
	for _, tc := range []struct {
		name   string
		labels map[string]string
	}{
		{"mcpgw_tool_calls_total", map[string]string{"agent": "a1", "server": "up", "tool": "echo", "outcome": "ok"}},
		{"mcpgw_tool_calls_total", map[string]string{"outcome": "invalid_arguments"}},
		{"mcpgw_denials_total", map[string]string{"reason": "held_tool"}},
		{"mcpgw_unvalidated_calls_total", map[string]string{"server": "up", "reason": "schema"}},
	} {
		if n := counted(m, tc.name, tc.labels); n != 1 {
			t.Errorf("%s%v = %v, want 1", tc.name, tc.labels, n)
		}
	}
	if o := MetricsHooks(nil); o.called != nil || o.denied != nil {
		t.Error("no metrics should be no hooks")
	}
}

// The audit hooks write one line per call and per refusal, with the session's identity.
func TestAuditHooksWriteLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := auth.OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := AuditHooks(a)
	s := session.New(noSessionHost{}, store.Record{ID: "s1", Agent: "a1", Conversation: "c1"})
	tl := &registry.Tool{Server: "up", Name: "echo", Exposed: "up__echo"}
	o.toolCalled(context.Background(), callEvent{s: s, t: tl, outcome: "timeout", duration: 2 * time.Millisecond})
	o.invalidArgs(context.Background(), callEvent{s: s, t: tl, outcome: "invalid_arguments", rule: "schema-on-error"})
	o.deniedCall(context.Background(), denialEvent{s: s, tool: "nope", reason: "unknown_tool", rule: "unknown tool"})
	a.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev auth.AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Agent != "a1" || ev.Session != "s1" || ev.Conversation != "c1" {
			t.Errorf("line without the session's identity: %s", sc.Text())
		}
		got = append(got, ev.Kind+":"+ev.Tool+":"+ev.Outcome+":"+ev.Rule)
	}
	want := "call:up__echo:timeout: call:up__echo:invalid_arguments:schema-on-error denial:nope:denied:unknown tool"
	if strings.Join(got, " ") != want {
		t.Fatalf("audit lines\n  %s\nwant\n  %s", strings.Join(got, " "), want)
	}
}

// An event handed to the joined observer costs no allocation: events go by value.
func TestObserverEventsDoNotAllocate(t *testing.T) {
	m := telemetry.NewMetrics("all")
	var w watched
	o := MetricsHooks(m).With(AuditHooks(nil)).With(TracingHooks(nil)).With(Observer{called: w.observer().called})
	w.calls = make([]callEvent, 0, 1000)
	s := session.New(noSessionHost{}, store.Record{ID: "s1", Agent: "a1"})
	tl := &registry.Tool{Server: "up", Name: "echo", Exposed: "up__echo"}
	ctx := context.Background()
	start := time.Now()
	o.toolCalled(ctx, callEvent{s: s, t: tl, outcome: "ok", duration: time.Since(start)}) // the series' first handles
	if n := testing.AllocsPerRun(200, func() {
		o.toolCalled(ctx, callEvent{s: s, t: tl, outcome: "ok", duration: time.Since(start)})
	}); n != 0 {
		t.Fatalf("a call event allocates %v times", n)
	}
}

// counted is the value of the counter name whose labels include labels, summed.
func counted(m *telemetry.Metrics, name string, labels map[string]string) float64 {
	fams, _ := m.Gather()
	total := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	series:
		for _, s := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range s.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if have[k] != v {
					continue series
				}
			}
			total += s.GetCounter().GetValue()
		}
	}
	return total
}

func mustMsg(t *testing.T, raw string) *wire.Msg {
	t.Helper()
	var m wire.Msg
	if err := wire.ParseInto([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	return &m
}
