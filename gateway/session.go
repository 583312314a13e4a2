package gateway

import (
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/gateway/internal/clientstream"
	"github.com/mcpgw/mcpgw/gateway/internal/inflight"
	"github.com/mcpgw/mcpgw/gateway/internal/listen"
	"github.com/mcpgw/mcpgw/gateway/internal/resume"
	"github.com/mcpgw/mcpgw/gateway/internal/shown"
	"github.com/mcpgw/mcpgw/gateway/internal/subscriptions"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/sessions"
)

// Session is one client session on the gateway, live in this process.
type Session struct {
	ID        string
	Transport string // streamable | sse | socket
	rec       sessions.Record

	g *Gateway

	caps struct{ sampling, elicitation, urlElicitation, roots bool }

	// mu guards rec (its fields that change: servers, forms, protocol), logLevel and closed.
	mu       sync.Mutex
	logLevel string
	closed   bool
	// out is the GET stream (streamable) or the event stream (legacy SSE), and what waits
	// for the next one.
	out clientstream.Slot
	// resumes are the replay buffers of the session's POST event streams (resume.go).
	resumes resume.Set

	lastSeen atomic.Int64
	// used is set by the session's first request after initialize.
	used atomic.Bool
	// calls counts the session's tool calls (the admin UI's Sessions page).
	calls atomic.Int64
	// srv is the session's server set (rec.Servers as of its last resolution): a reload
	// may change it, so the call path reads it here rather than from rec.
	srv atomic.Pointer[[]string]

	// shown is what the session was shown: its view, list forms, and the lists it was
	// last told about.
	shown shown.State
	// inflight are its requests in flight by the client's request id: upstream calls
	// (callOwner.call), those waiting for a limited instance's slot, plugin calls.
	inflight inflight.Table[*callOwner, *pluginCall]
	// subs are its resource subscriptions, listeners' counts and watches.
	subs subscriptions.Set
	// own is what its own instances put into its view: servers down for it, re-listed
	// catalogues.
	own shown.Own

	// listen is set on a stateless caller's session once it opens subscriptions/listen:
	// what would go on a GET stream goes to its listeners (listen.go).
	listen atomic.Pointer[listen.Set]
}

func (s *Session) touch() { s.lastSeen.Store(time.Now().UnixNano()) }

// clientInfo is the clientInfo the session's client sent in initialize (a legacy SSE
// session learns it after the session exists).
func (s *Session) clientInfo() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec.ClientInfo
}

// servers is the session's current server set.
func (s *Session) servers() []string {
	if p := s.srv.Load(); p != nil {
		return *p
	}
	return nil
}

// setServers replaces the session's server set: its view is rebuilt on the next request,
// and instances of servers it no longer has are stopped.
func (s *Session) setServers(names []string) {
	s.srv.Store(&names)
	s.mu.Lock()
	s.rec.Servers = names
	rec := s.rec
	s.mu.Unlock()
	stopped := s.g.reg.Instances().ReleaseOwner(s, func(server string) bool { return slices.Contains(names, server) })
	s.own.DropCatalogs(stopped) // the catalogues of the session's own instances, gone with them
	s.shown.Forget()
	_ = s.g.store.Put(&rec)
}

// View returns the session's current view: its servers, less those down for it.
func (s *Session) View() *registry.View {
	f := s.filter()
	gen := s.g.reg.Gen()
	return s.shown.View(shown.Key{Gen: gen, Down: s.own.Gen(), Filter: f}, func() *registry.View {
		down, own := s.own.Snapshot()
		return s.g.reg.ViewWith(s.servers(), down, viewFilter{f}, own, s.caps.elicitation).Shaped(s.g.nameRule(s.clientInfo()), s.g.cfg.Naming.Separator)
	})
}

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Session) setDown(server string, down bool) {
	if s.own.SetDown(server, down) {
		s.g.notifyIfChanged(s)
	}
}

func (s *Session) level() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel
}

// send delivers a message on the session's stream (GET stream or legacy event stream),
// or to its listeners (a stateless caller); with no stream open, it waits, bounded, for
// the next GET (clientstream.Slot).
func (s *Session) send(msg []byte) error {
	if ls := s.listen.Load(); ls != nil {
		return ls.Send(msg)
	}
	return s.out.Send(msg)
}

// attach makes st the session's stream; it fails if one is open already.
func (s *Session) attach(st *clientstream.Stream) bool { return s.out.Attach(st) }

func (s *Session) detach(st *clientstream.Stream) { s.out.Detach(st) }

// close ends the session's upstream instances and stream.
func (s *Session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	calls, pcs := s.inflight.Close()
	for _, o := range calls {
		o.call.Conn().Abandon(o.call, "session ended")
	}
	for _, pc := range pcs {
		pc.cancel()
	}
	s.g.calls.routes.ForgetSession(s)
	s.g.reg.Instances().ReleaseOwner(s, nil)
	s.g.pluginSubs.dropSession(s)
	s.resumes.Close()
	s.stopWatches()
	s.out.Close()
}

// outbox is where one request's related messages and its response are written.
type outbox interface {
	// related writes a notification or request that belongs to the request.
	related(msg []byte) error
	// reply writes the response; nil ends the request without one (after cancellation).
	reply(msg []byte) error
}

// streamOutbox sends a request's messages and response on the session's stream (legacy
// SSE, where every response travels on the event stream).
type streamOutbox struct{ s *Session }

func (o streamOutbox) related(msg []byte) error { return o.s.send(msg) }
func (o streamOutbox) reply(msg []byte) error {
	if msg == nil {
		return nil
	}
	return o.s.send(msg)
}
