// Package session is one client session live in this process: its record, its client's
// capabilities, and the owners of what it holds (its event stream, replay buffers, what it
// was shown, its requests in flight, its subscriptions). The registry's instances see its
// Upstreams as their registry.Owner; what only the gateway knows it asks of its Host.
package session

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/inflight"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/listenstream"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/resume"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/sessionview"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/subscriptions"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Host is what a session asks of the gateway that holds it.
type Host interface {
	// Instances are the registry's upstream instances, which the session acquires and
	// releases as their Owner. Asked once, when the session is made.
	Instances() *registry.Instances
	// Save writes the session's record to the session store.
	Save(rec *store.Record) error
	// Filter is the session's decision function under the current policy.
	Filter(s *Session) *auth.Filter
	// Gen is the registry's generation: a cached view older than it is built again.
	Gen() uint64
	// BuildView builds the session's view under f: its servers less those down for it,
	// with its own instances' catalogues.
	BuildView(s *Session, f *auth.Filter, down map[string]bool, own map[string]*registry.Catalog) *registry.View
	// ListChanged counts a tools list_changed notification sent.
	ListChanged()
	// Relay is the way back from the session's instances (the dispatcher's): asked once,
	// when the session is made.
	Relay() Relay
	// Live is the session of an id live in this process, or nil.
	Live(id string) *Session
	// Closing drops what the gateway keeps for the session (routes back to it, plugin
	// subscriptions) and releases its instances.
	Closing(s *Session)
	// InstanceStarted counts an instance started for a session.
	InstanceStarted(server string)
	// Context is the gateway's: it ends when the gateway stops.
	Context() context.Context
}

// Relay routes what an upstream instance sends that is not a response to session s (nil:
// as on a shared instance): the dispatcher's way back, which the session's instances
// reach directly, not through the gateway.
type Relay interface {
	HandleUpstream(s *Session, c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call)
}

// Call is an upstream call in flight for the session (the dispatcher's).
type Call interface {
	// Abandon ends the call's wait and cuts off a request still waiting for its answer.
	Abandon(reason string)
}

// PluginCall is a plugin call in flight for the session.
type PluginCall interface {
	// Cancel ends the plugin call.
	Cancel()
}

// Caps are the capabilities the session's client declared in initialize.
type Caps struct{ Sampling, Elicitation, URLElicitation, Roots bool }

// For reports whether the client declared the capability a server-to-client request
// needs; known is false for a method that needs none of them.
func (c Caps) For(method string) (declared, known bool) {
	switch method {
	case "sampling/createMessage":
		return c.Sampling, true
	case "elicitation/create":
		return c.Elicitation, true
	case "roots/list":
		return c.Roots, true
	}
	return false, false
}

// Session is one client session on the gateway, live in this process.
type Session struct {
	ID        string
	Transport string // streamable | sse | socket | stateless
	// Rec is the session's record. Its identity (agent, conversation, task, principal,
	// overrides) is fixed; the fields that change (servers, forms, protocol, client, log
	// level, last seen) change under the session's lock, through its methods.
	Rec store.Record

	h Host

	Caps Caps

	// mu guards Rec's fields that change, logLevel and closed.
	mu       sync.Mutex
	logLevel string
	closed   bool
	// Out is the GET stream (streamable) or the event stream (legacy SSE), and what waits
	// for the next one.
	Out clientstream.Slot
	// Resumes are the replay buffers of the session's POST event streams.
	Resumes resume.Set

	LastSeen atomic.Int64
	// Used is set by the session's first request after initialize.
	Used atomic.Bool
	// Calls counts the session's tool calls (the admin UI's Sessions page).
	Calls atomic.Int64
	// srv is the session's server set (Rec.Servers as of its last resolution): a reload
	// may change it, so the call path reads it here rather than from Rec.
	srv atomic.Pointer[[]string]

	// Shown is what the session was shown: its view, list forms, and the lists it was
	// last told about.
	Shown sessionview.State
	// Inflight are its requests in flight by the client's request id: upstream calls,
	// those waiting for a limited instance's slot, plugin calls.
	Inflight inflight.Table[Call, PluginCall]
	// Subs are its resource subscriptions, listeners' counts and watches.
	Subs subscriptions.Set
	// Own is what its own instances put into its view: servers down for it, re-listed
	// catalogues.
	Own sessionview.Own

	// Upstreams asks the registry's instances for the session's connections, and is the
	// registry.Owner of those started for it (upstreams.go).
	Upstreams *Upstreams

	// Listen is set on a stateless caller's session once it opens subscriptions/listen:
	// what would go on a GET stream goes to its listeners.
	Listen atomic.Pointer[listenstream.Set]
}

// New is the live session of a record, held by h.
func New(h Host, rec store.Record) *Session {
	s := &Session{ID: rec.ID, Transport: rec.Transport, Rec: rec, h: h, logLevel: rec.LogLevel}
	s.Upstreams = &Upstreams{s: s, inst: h.Instances(), relay: h.Relay()}
	s.Shown.Restore(rec.Forms)
	s.Caps = capsOf(rec.ClientCaps)
	servers := rec.Servers
	s.srv.Store(&servers)
	s.Touch()
	return s
}

// capsOf reads the capabilities a client declared.
func capsOf(clientCaps json.RawMessage) Caps {
	var caps struct {
		Sampling    json.RawMessage `json:"sampling"`
		Elicitation json.RawMessage `json:"elicitation"`
		Roots       json.RawMessage `json:"roots"`
	}
	_ = json.Unmarshal(clientCaps, &caps)
	var modes struct {
		URL json.RawMessage `json:"url"`
	}
	return Caps{Sampling: caps.Sampling != nil, Elicitation: caps.Elicitation != nil, Roots: caps.Roots != nil,
		URLElicitation: json.Unmarshal(caps.Elicitation, &modes) == nil && modes.URL != nil}
}

// Touch notes that the session was used now.
func (s *Session) Touch() { s.LastSeen.Store(time.Now().UnixNano()) }

// Record is a copy of the session's record as it is now.
func (s *Session) Record() store.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Rec
}

// update changes the session's record under its lock and returns a copy of the result.
func (s *Session) update(f func(rec *store.Record)) store.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.Rec)
	return s.Rec
}

// SetClient keeps what a client sent in initialize after the session existed (a legacy
// SSE session learns it then).
func (s *Session) SetClient(protocol string, caps, info json.RawMessage) {
	s.update(func(rec *store.Record) { rec.ProtocolVersion, rec.ClientCaps, rec.ClientInfo = protocol, caps, info })
}

// SetLogLevel keeps the session's log level and returns its record.
func (s *Session) SetLogLevel(level string) store.Record {
	return s.update(func(rec *store.Record) {
		s.logLevel = level
		rec.LogLevel = level
	})
}

// SetForm keeps the tools/list form served for a view's hash and returns the record, its
// forms copied.
func (s *Session) SetForm(hash, form string) store.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Rec.Forms == nil {
		s.Rec.Forms = map[string]string{}
	}
	s.Rec.Forms[hash] = form
	rec := s.Rec
	rec.Forms = maps.Clone(s.Rec.Forms)
	return rec
}

// MostUsed is the agent's tool ranking the session keeps (Record.MostUsed), taken by
// rank the first time it is asked for; taken reports that it was taken now, and rec is
// then the record to store.
func (s *Session) MostUsed(rank func() []string) (ranking []string, taken bool, rec store.Record) {
	s.mu.Lock()
	if m := s.Rec.MostUsed; m != nil {
		s.mu.Unlock()
		return *m, false, rec
	}
	s.mu.Unlock()
	r := rank() // outside the lock: it may ask the store
	if r == nil {
		r = []string{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.Rec.MostUsed; m != nil { // taken meanwhile by another request
		return *m, false, rec
	}
	s.Rec.MostUsed = &r
	return r, true, s.Rec
}

// SetLastSeen keeps when the session was last seen and returns its record.
func (s *Session) SetLastSeen(t time.Time) store.Record {
	return s.update(func(rec *store.Record) { rec.LastSeen = t })
}

// ClientInfo is the clientInfo the session's client sent in initialize (a legacy SSE
// session learns it after the session exists).
func (s *Session) ClientInfo() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Rec.ClientInfo
}

// Servers is the session's current server set.
func (s *Session) Servers() []string {
	if p := s.srv.Load(); p != nil {
		return *p
	}
	return nil
}

// SetServers replaces the session's server set: its view is rebuilt on the next request,
// and instances of servers it no longer has are stopped.
func (s *Session) SetServers(names []string) {
	s.srv.Store(&names)
	rec := s.update(func(rec *store.Record) { rec.Servers = names })
	stopped := s.Upstreams.inst.ReleaseOwner(s.Upstreams, func(server string) bool { return slices.Contains(names, server) })
	s.Own.DropCatalogs(stopped) // the catalogues of the session's own instances, gone with them
	s.Shown.Forget()
	_ = s.h.Save(&rec)
}

// Filter returns the session's decision function under the current policy.
func (s *Session) Filter() *auth.Filter { return s.h.Filter(s) }

// View returns the session's current view: its servers, less those down for it.
func (s *Session) View() *registry.View {
	f := s.Filter()
	return s.Shown.View(sessionview.Key{Gen: s.h.Gen(), Down: s.Own.Gen(), Filter: f}, func() *registry.View {
		down, own := s.Own.Snapshot()
		return s.h.BuildView(s, f, down, own)
	})
}

// Fingerprints identify a view's tools, and its prompts and resources (computed once per
// view): what a session was last told about.
func Fingerprints(v *registry.View) (tools, others string) {
	return "t" + v.Hash(), "o" + v.OthersHash()
}

// NotifyIfChanged sends list_changed notifications for the lists of the session's view
// that changed since it was last told about them; it reports which it sent.
func (s *Session) NotifyIfChanged() (sentTools, sentOthers bool) {
	v := s.View()
	sendTools, sendOthers := s.Shown.Changed(Fingerprints(v))
	if sendTools {
		s.h.ListChanged()
		_ = s.Send(wire.Notification("notifications/tools/list_changed", nil))
	}
	if sendOthers {
		_ = s.Send(wire.Notification("notifications/prompts/list_changed", nil))
		_ = s.Send(wire.Notification("notifications/resources/list_changed", nil))
	}
	return sendTools, sendOthers
}

// IsClosed reports whether the session ended.
func (s *Session) IsClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// SetDown takes server out of the session's view (down) or back into it, and tells the
// client when its lists changed.
func (s *Session) SetDown(server string, down bool) {
	if s.Own.SetDown(server, down) {
		s.NotifyIfChanged()
	}
}

// Level is the log level the client set ("" if none).
func (s *Session) Level() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel
}

// Send delivers a message on the session's stream (GET stream or legacy event stream),
// or to its listeners (a stateless caller); with no stream open, it waits, bounded, for
// the next GET (clientstream.Slot).
func (s *Session) Send(msg []byte) error {
	if ls := s.Listen.Load(); ls != nil {
		return ls.Send(msg)
	}
	return s.Out.Send(msg)
}

// Attach makes st the session's stream; it fails if one is open already.
func (s *Session) Attach(st *clientstream.Stream) bool { return s.Out.Attach(st) }

// Detach ends st as the session's stream.
func (s *Session) Detach(st *clientstream.Stream) { s.Out.Detach(st) }

// Listeners returns the session's listener set, made on first use.
func (s *Session) Listeners() *listenstream.Set {
	if ls := s.Listen.Load(); ls != nil {
		return ls
	}
	s.Listen.CompareAndSwap(nil, &listenstream.Set{})
	return s.Listen.Load()
}

// Busy reports whether the session is in use now: an open stream, or requests in flight
// or queued.
func (s *Session) Busy() bool {
	return s.Out.Open() || s.Inflight.Busy() || s.Listen.Load() != nil
}

// StopWatches ends the session's resource subscriptions on stateless upstreams.
func (s *Session) StopWatches() {
	for _, stop := range s.Subs.Close() {
		stop()
	}
}

// Close ends the session: its calls in flight, its instances, its streams.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	calls, pcs := s.Inflight.Close()
	for _, c := range calls {
		c.Abandon("session ended")
	}
	for _, pc := range pcs {
		pc.Cancel()
	}
	s.h.Closing(s)
	s.Resumes.Close()
	s.StopWatches()
	s.Out.Close()
}
