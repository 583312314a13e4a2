package instances

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/integrity"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Server is one configured upstream server. A server whose definition changes is replaced
// by a new Server; one that is removed from the config is retired: it keeps running for
// the sessions that resolved it until Release finds none left.
type Server struct {
	Name string
	Def  *config.ServerDef
	Mode string

	host    *Host
	ctx     context.Context // ends the server's supervision
	cancel  context.CancelFunc
	retired atomic.Bool

	mu       sync.Mutex
	cat      *Catalog
	state    string
	lastErr  string
	since    time.Time
	restarts int
	conn     *upstream.Conn // shared mode only
	pid      int
	// pool is the server's warm pool (nil: none; pool.go).
	pool *Pool
	// moved is closed (and forgotten) when the state changes: WaitStarted waits on it, not
	// on a timer. Nil until someone waits.
	moved chan struct{}
	// act names the admin act that added or changed the server while the gateway ran;
	// its first catalogue after that is approved by it (the registry's integrity,
	// Host.Observe), then it is nil.
	act atomic.Pointer[integrity.PendingAct]
}

// Status is a server's health for /readyz and the admin API.
type Status struct {
	Name      string    `json:"name"`
	Transport string    `json:"transport"`
	Mode      string    `json:"mode"`
	State     string    `json:"state"`
	Since     time.Time `json:"since"`
	Error     string    `json:"error,omitempty"`
	Restarts  int       `json:"restarts"`
	Tools     int       `json:"tools"`
	Prompts   int       `json:"prompts"`
	Resources int       `json:"resources"`
	Problems  []string  `json:"problems,omitempty"`
	// Retired is set on a server removed from the config that sessions still use.
	Retired bool `json:"retired,omitempty"`
	// Pool is the warm pool's counts (servers with pool.warm).
	Pool *PoolStats `json:"pool,omitempty"`
}

// Act is the admin act pending on the server (integrity.PendingAct): set when an act added
// or changed it, taken by its first catalogue.
func (s *Server) Act() *atomic.Pointer[integrity.PendingAct] { return &s.act }

// Retired reports whether the server was removed from the config and runs on for the
// sessions that still use it.
func (s *Server) Retired() bool { return s.retired.Load() }

// SetRetired marks the server retired or configured again, and reports whether it was
// retired before.
func (s *Server) SetRetired(retired bool) bool { return s.retired.Swap(retired) }

// Restarted is a new server of s's definition in the same registry, to replace s
// (Registry.Restart): its restarts count on from s's. It is not running yet.
func (s *Server) Restarted() *Server {
	s.mu.Lock()
	n := s.restarts
	s.mu.Unlock()
	ns := NewServer(s.host, s.Name, s.Def)
	ns.restarts = n + 1 // ns is not running yet: no one else has it
	return ns
}

// Drain stops a replaced server after Timing.DrainFor: its supervision ends at once (it is not
// restarted), its shared connection closes when the calls on it had time to finish.
func (s *Server) Drain() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil {
		s.Stop()
		return
	}
	time.AfterFunc(s.host.Timing.DrainFor, s.Stop)
}

// Stopped reports whether the server's supervision was ended (Stop, Drain).
func (s *Server) Stopped() bool { return s.ctx.Err() != nil }

// SetCatalog makes cat the server's catalogue as if it had listed it, telling no one: for
// a registry built by hand, without its upstream (tests).
func (s *Server) SetCatalog(cat *Catalog) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cat = cat
}

// Stop ends the server's supervision and closes its shared connection.
func (s *Server) Stop() {
	s.cancel()
	if s.pool != nil {
		s.pool.stop()
	}
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// Status reports the server's health.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.Name, Transport: s.Def.Transport(), Mode: s.Mode, State: s.state, Since: s.since, Error: s.lastErr, Restarts: s.restarts, Retired: s.retired.Load()}
	if s.cat != nil {
		st.Tools, st.Prompts, st.Resources = len(s.cat.Tools), len(s.cat.Prompts), len(s.cat.Resources)
		st.Problems = s.cat.Problems
	}
	if s.pool != nil {
		ps := s.pool.Stats()
		st.Pool = &ps
	}
	return st
}

// Catalog returns the server's current catalogue: while it is down, the last one it
// listed (its tools stay listed, and calls say it is down); nil before its first.
func (s *Server) Catalog() *Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat
}

// Shared returns the shared connection (nil for per_session servers or while down).
func (s *Server) Shared() *upstream.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// WaitShared returns the shared connection, waiting up to the server's connect timeout
// (or ctx) while the server is starting; nil when it is down or does not come up.
func (s *Server) WaitShared(ctx context.Context) *upstream.Conn {
	s.WaitStarted(ctx)
	return s.Shared()
}

// WaitStarted waits, up to the server's connect timeout or until ctx ends, while the server
// is starting: until its shared connection is up, or its catalogue is known (a server of
// instances of owners), or it failed. It reports whether the server is past starting.
func (s *Server) WaitStarted(ctx context.Context) bool {
	t := time.NewTimer(s.Def.Timeouts.Connect)
	defer t.Stop()
	for {
		s.mu.Lock()
		if s.conn != nil || s.state != StateStarting {
			s.mu.Unlock()
			return true
		}
		if s.moved == nil {
			s.moved = make(chan struct{})
		}
		moved := s.moved
		s.mu.Unlock()
		select {
		case <-moved:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// State returns the server's state and last error.
func (s *Server) State() (string, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.lastErr
}

func (s *Server) setState(state string, err error, cat *Catalog, conn *upstream.Conn, replaceCat bool) {
	s.mu.Lock()
	changed := s.state != state
	s.state = state
	s.since = time.Now()
	if err != nil {
		s.lastErr = err.Error()
	} else if state == StateUp {
		s.lastErr = ""
	}
	if replaceCat {
		if !s.cat.Equal(cat) {
			changed = true
		}
		s.cat = cat
	}
	s.conn = conn
	if s.moved != nil {
		close(s.moved)
		s.moved = nil
	}
	s.mu.Unlock()
	if changed {
		s.host.Changed(s.Name)
	}
	if s.host.OnState != nil {
		s.host.OnState(s.Name, state)
	}
}

// Options returns how to dial this server (shared or probe instances).
func (s *Server) Options() upstream.Options {
	d := s.Def
	return upstream.Options{
		Name: s.Name, Transport: d.Transport(), Command: d.Command, Args: d.Args, Env: d.Env, Dir: d.Dir,
		URL: d.URL, Headers: d.Headers, ProtocolVersion: d.UpstreamVersion(false), ConnectTimeout: d.Timeouts.Connect,
		MaxMessageBytes: s.host.Config().Upstream.MaxMessageBytes, TLS: upstream.TLSFiles(d.TLS), Log: s.host.Log,
		MaxConcurrency: d.Concurrency(), MaxQueue: d.Queue.Max, QueueTimeout: d.Queue.Timeout, MaxQueuePerOwner: d.Queue.MaxPerAgent,
		InProcess: s.host.InProcess(s.Name),
		// A server-wide grant is every instance's; a per-user one is given per owner
		// (ownerOptions).
		Authorizer: s.host.Authorizer(s.Name, "", config.AuthPerServer),
	}
}

// probeOptions are the dial options of the server's own instance: Options, except that a
// per-user OAuth server's lists its catalogue with a grant it borrows (catalogAuthorizer).
func (s *Server) probeOptions() upstream.Options {
	o := s.Options()
	if a := s.host.CatalogAuthorizer(s.Name); a != nil {
		o.Authorizer = a
	}
	return o
}

// Spawn starts a per-session instance of the server for one session, offering the
// session's own client capabilities and info, with env and headers as given. When the
// instance says its lists changed, they are re-read and given to onCatalog: an instance's
// catalogue (which may depend on its client's capabilities) is its session's alone.
func (s *Server) Spawn(ctx context.Context, o upstream.Options, onCatalog func(*Catalog)) (*upstream.Conn, error) {
	h := o.Handler
	var rl relister
	o.Handler = func(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
		switch m.Method {
		case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
			rl.notify(s.host.Ctx, s.host.Config().Upstream.RelistInterval, func() {
				cctx, cancel := context.WithTimeout(s.host.Ctx, s.Def.Timeouts.Connect)
				defer cancel()
				cat, err := s.readCatalog(cctx, c)
				if err != nil {
					s.host.Log.Warn("re-listing after list_changed failed", "server", s.Name, "err", err)
					return
				}
				if onCatalog != nil {
					onCatalog(cat)
				}
			})
			if h != nil {
				h(c, m, raw, rel) // the session may want to know what the upstream said
			}
			return
		}
		if h != nil {
			h(c, m, raw, rel)
		}
	}
	return s.host.Dialer.Dial(ctx, o)
}

// handler is the handler of one of the server's own connections (shared, or the probe
// of a per_session server): list_changed re-reads this server's catalogue (not that of a
// server that replaced it under the same name), paced per connection (relister), anything
// else goes to the gateway.
func (s *Server) handler() upstream.Handler {
	var rl relister
	return func(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
		if s.listChanged(c, m, &rl) {
			return
		}
		if h := s.host.Handler(); h != nil {
			h(c, m, raw, rel)
		}
	}
}

// listChanged re-reads a server's lists after the upstream said they changed.
func (s *Server) listChanged(c *upstream.Conn, m *wire.Msg, rl *relister) bool {
	r := s.host
	switch m.Method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
	default:
		return false
	}
	method := m.Method
	rl.notify(r.Ctx, r.Config().Upstream.RelistInterval, func() {
		ctx, cancel := context.WithTimeout(r.Ctx, s.Def.Timeouts.Connect)
		defer cancel()
		cat, err := s.readCatalog(ctx, c)
		if err != nil {
			r.Log.Warn("re-listing after list_changed failed", "server", s.Name, "err", err)
			return
		}
		s.mu.Lock()
		same := s.cat.Equal(cat)
		if !same {
			s.cat = cat
		}
		s.mu.Unlock()
		if !same {
			r.Log.Info("upstream catalogue changed", "server", s.Name, "tools", len(cat.Tools))
			r.Changed(s.Name)
		} else if r.OnListSaid != nil {
			r.OnListSaid(s.Name, method)
		}
	})
	return true
}

// NewServer makes the server name of definition d for the registry h; Supervise runs it.
func NewServer(h *Host, name string, d *config.ServerDef) *Server {
	ctx, cancel := context.WithCancel(h.Ctx)
	s := &Server{Name: name, Def: d, Mode: d.ResolvedMode(), host: h, ctx: ctx, cancel: cancel, state: StateStarting, since: time.Now()}
	if d.Pooled() {
		s.pool = newPool(s)
	}
	return s
}
