package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// fakeHost stands in for the gateway: it counts what the session asks of it.
type fakeHost struct {
	closing int
	saved   []store.Record
	// inst are the instances the host hands out, and instances counts how often it was asked.
	inst      *registry.Instances
	instances int
	relay     *fakeRelay
}

// fakeRelay is the dispatcher's way back: it keeps the session each message was relayed to.
type fakeRelay struct{ to []*Session }

func (r *fakeRelay) HandleUpstream(s *Session, _ *upstream.Conn, _ *wire.Msg, _ []byte, _ *upstream.Call) {
	r.to = append(r.to, s)
}

func (h *fakeHost) Instances() *registry.Instances { h.instances++; return h.inst }
func (h *fakeHost) Save(rec *store.Record) error   { h.saved = append(h.saved, *rec); return nil }
func (h *fakeHost) Filter(*Session) *auth.Filter   { return nil }
func (h *fakeHost) Gen() uint64                    { return 0 }
func (h *fakeHost) ListChanged()                   {}
func (h *fakeHost) Live(string) *Session           { return nil }
func (h *fakeHost) Closing(*Session)               { h.closing++ }
func (h *fakeHost) InstanceStarted(string)         {}
func (h *fakeHost) Context() context.Context       { return context.Background() }

// Relay is the fake's relay, or none.
func (h *fakeHost) Relay() Relay {
	if h.relay == nil {
		return nil
	}
	return h.relay
}
func (h *fakeHost) BuildView(*Session, *auth.Filter, map[string]bool, map[string]*registry.Catalog) *registry.View {
	return nil
}

type fakeCall struct{ abandoned []string }

func (c *fakeCall) Abandon(reason string) { c.abandoned = append(c.abandoned, reason) }

type fakePlugin struct{ cancelled int }

func (p *fakePlugin) Cancel() { p.cancelled++ }

func TestNewReadsTheClientsCapabilities(t *testing.T) {
	for _, tc := range []struct {
		caps string
		want Caps
	}{
		{`{}`, Caps{}},
		{`{"sampling":{},"roots":{"listChanged":true}}`, Caps{Sampling: true, Roots: true}},
		{`{"elicitation":{}}`, Caps{Elicitation: true}},
		{`{"elicitation":{"form":{},"url":{}}}`, Caps{Elicitation: true, URLElicitation: true}},
		{`not json`, Caps{}},
	} {
		s := New(&fakeHost{}, store.Record{ID: "s1", ClientCaps: json.RawMessage(tc.caps), Servers: []string{"a"}})
		if s.Caps != tc.want {
			t.Errorf("caps %s: got %+v, want %+v", tc.caps, s.Caps, tc.want)
		}
		if got := s.Servers(); len(got) != 1 || got[0] != "a" {
			t.Errorf("servers: %v", got)
		}
	}
}

// A record handed out is a copy: changing its forms changes nothing in the session.
func TestSetFormReturnsACopy(t *testing.T) {
	s := New(&fakeHost{}, store.Record{ID: "s1"})
	rec := s.SetForm("h1", "thin")
	rec.Forms["h1"] = "full"
	rec.Forms["h2"] = "search"
	if got := s.Record().Forms; len(got) != 1 || got["h1"] != "thin" {
		t.Fatalf("session's forms changed through a returned record: %v", got)
	}
	if rec := s.SetLogLevel("debug"); rec.LogLevel != "debug" || s.Level() != "debug" {
		t.Fatalf("log level: record %q, session %q", rec.LogLevel, s.Level())
	}
}

// Close ends every call in flight once, tells the host once, and a second Close does
// nothing.
func TestCloseEndsCallsOnce(t *testing.T) {
	h := &fakeHost{}
	s := New(h, store.Record{ID: "s1"})
	c, p := &fakeCall{}, &fakePlugin{}
	s.Inflight.AddCall("1", c)
	if !s.Inflight.AddPlugin("2", p) {
		t.Fatal("plugin call refused before the session ended")
	}
	if !s.Busy() {
		t.Fatal("a session with calls in flight is not busy")
	}
	s.Close()
	s.Close()
	if len(c.abandoned) != 1 || c.abandoned[0] != "session ended" || p.cancelled != 1 || h.closing != 1 {
		t.Fatalf("after two closes: call abandoned %v, plugin cancelled %d, host told %d", c.abandoned, p.cancelled, h.closing)
	}
	if !s.IsClosed() || !s.Upstreams.Ended() {
		t.Fatal("closed session does not say so")
	}
	if s.Inflight.AddPlugin("3", p) {
		t.Fatal("a plugin call started on an ended session")
	}
}

func TestSubject(t *testing.T) {
	for _, tc := range [][3]string{{"alice", "a1", "alice"}, {"", "a1", "agent:a1"}, {"", "", ""}} {
		if got := Subject(tc[0], tc[1]); got != tc[2] {
			t.Errorf("Subject(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestCapsFor(t *testing.T) {
	c := Caps{Sampling: true, Roots: false}
	for _, tc := range []struct {
		method          string
		declared, known bool
	}{
		{"sampling/createMessage", true, true},
		{"roots/list", false, true},
		{"elicitation/create", false, true},
		{"ping", false, false},
	} {
		if d, k := c.For(tc.method); d != tc.declared || k != tc.known {
			t.Errorf("For(%q) = %v, %v; want %v, %v", tc.method, d, k, tc.declared, tc.known)
		}
	}
}

// A session finds its connections with one question, to the registry's instances: it asks
// its host for them once, when it is made, not on every request.
func TestUpstreamsAskTheRegistryDirectly(t *testing.T) {
	h := &fakeHost{inst: registry.New(&config.Config{}, nil).Instances()}
	s := New(h, store.Record{ID: "s1", Servers: []string{"gone"}})
	ctx := context.Background()
	if _, _, err := s.Upstreams.Acquire(ctx, "gone"); err == nil || !strings.Contains(err.Error(), "unknown server") {
		t.Fatalf("Acquire of a server the registry lacks: %v, want the registry's unknown server", err)
	}
	if _, err := s.Upstreams.Conn(ctx, "gone"); err == nil || !strings.Contains(err.Error(), "unknown server") {
		t.Fatalf("Conn of a server the registry lacks: %v, want the registry's unknown server", err)
	}
	s.Upstreams.AwaitStarted(ctx)
	s.SetServers(nil)
	if h.instances != 1 {
		t.Fatalf("the session asked its host for the instances %d times, want once (when made)", h.instances)
	}
	if spec := s.Upstreams.InstanceSpec("gone"); spec.Session != "s1" {
		t.Fatalf("the owner's instance spec names session %q, want s1", spec.Session)
	}
}

// What the session's own instances send goes to the relay the host gave when the session
// was made, for this session; what a shared per_agent instance sends with no one call in
// flight goes to it for no session.
func TestInstancesRelayDirectly(t *testing.T) {
	r := &fakeRelay{}
	s := New(&fakeHost{relay: r}, store.Record{ID: "s1"})
	c := &upstream.Conn{Name: "up"}
	m := &wire.Msg{Method: "notifications/message"}
	s.Upstreams.HandleUpstream(c, m, nil, nil)
	s.Upstreams.HandleShared(c, m, nil, nil)
	if len(r.to) != 2 || r.to[0] != s || r.to[1] != nil {
		t.Fatalf("relayed to %v, want [s1 <nil>]", r.to)
	}
}
