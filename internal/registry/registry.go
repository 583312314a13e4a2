// Package registry holds the gateway's upstream servers and plugins: their
// connections and supervision, their catalogues of tools, prompts and resources, and views.
package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
	"github.com/mcpgw/mcpgw/internal/registry/internal/plugins"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Server states.
const (
	StateStarting = "starting"
	StateUp       = "up"
	StateDown     = "down"
	StateStopped  = "stopped"
)

// Timing is how a registry paces its supervision. The zero value of a field is its
// default (DefaultTiming).
type Timing struct {
	// BackoffMin and BackoffMax bound the delay before restarting an upstream or plugin.
	// The delay doubles after each failure and resets only after the upstream stayed up
	// for StableAfter.
	BackoffMin, BackoffMax, StableAfter time.Duration
	// DrainFor is how long a replaced server's shared connection (or a stopped plugin's
	// provider) stays open for the calls already on it.
	DrainFor time.Duration
	// KeepAlive is how often shared upstreams are pinged.
	KeepAlive time.Duration
}

// DefaultTiming is the timing of a registry that sets none.
func DefaultTiming() Timing {
	return Timing{BackoffMin: 250 * time.Millisecond, BackoffMax: 30 * time.Second, StableAfter: 30 * time.Second,
		DrainFor: 30 * time.Second, KeepAlive: 15 * time.Second}
}

// orDefault fills in the zero fields.
func (t Timing) orDefault() Timing {
	d := DefaultTiming()
	for _, f := range []struct{ v, def *time.Duration }{
		{&t.BackoffMin, &d.BackoffMin}, {&t.BackoffMax, &d.BackoffMax}, {&t.StableAfter, &d.StableAfter},
		{&t.DrainFor, &d.DrainFor}, {&t.KeepAlive, &d.KeepAlive},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return t
}

// Options are a registry's settings beyond the config. The zero value is usable.
type Options struct {
	// Log receives the registry's logs (nil: slog.Default()).
	Log *slog.Logger
	// Dialer connects the upstreams (nil: upstream.NewDialer()). Its busy polling is set
	// from the config's upstream.busy_poll (made when it has none).
	Dialer *upstream.Dialer
	// Timing paces supervision (zero fields: DefaultTiming).
	Timing Timing
}

// Server is one configured upstream server. A server whose definition changes is replaced
// by a new Server; one that is removed from the config is retired: it keeps running for
// the sessions that resolved it until Release finds none left.
type Server struct {
	Name string
	Def  *config.ServerDef
	Mode string

	reg     *Registry
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
	// its first catalogue after that is approved by it (integrity.go), then it is nil.
	act atomic.Pointer[pendingAct]
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

// Registry owns the upstream servers.
type Registry struct {
	log *slog.Logger

	cfg atomic.Pointer[config.Config]
	// set is replaced whole by Apply and Release (copy on write): the call path reads it
	// without a lock.
	set     atomic.Pointer[serverSet]
	applyMu sync.Mutex
	started bool // Start ran: Apply starts new servers at once

	// gen changes whenever any server's catalogue or state changes.
	gen atomic.Uint64

	// Handler receives upstream messages that are neither responses nor list_changed.
	Handler upstream.Handler
	// OnChange is called (from its own goroutine) after a server's catalogue or state changed.
	OnChange func(server string)
	// OnListSaid is called (from its own goroutine) when a server's shared connection said
	// a list changed (method: the list_changed notification) and the re-read found the
	// catalogue as it was: nothing for the gateway to compare, but those who listen for the
	// upstream's word may hold what it replaced.
	OnListSaid func(server, method string)
	// OnUp and OnRestart observe supervision, for metrics.
	OnState func(server, state string)
	// OnInstanceStart observes each instance's start and initialize time (pool.go).
	OnInstanceStart func(server string, d time.Duration)
	// NoPools keeps warm pools from starting (commands that only list catalogues: check,
	// explain). Set before Start.
	NoPools bool
	// PluginKinds are the plugin kinds this registry runs besides the built-in go and
	// mcpgw types (plugins_kinds.go; package internal/registry/pluginkind has sql and command). A
	// plugin whose kind is missing is down, saying so. Set before Start.
	PluginKinds PluginKinds

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	views  *catalog.Cache
	// gate bounds the instances the registry starts at once (upstream.start_concurrency).
	gate startGate

	// inproc are the servers of type inprocess, by server name (ProvideServer).
	inproc inProcServers
	// plug makes and opens the plugins (internal/registry/internal/plugins).
	plug *plugins.Runner

	// integ pins what servers and plugins serve (integrity.go).
	integ Integrity
	// uauth holds the grants mcpgw has as the OAuth client of upstreams (upstreamauth.go).
	uauth UpstreamAuth

	// dialer connects the upstreams; its Busy polls for their answers (busy_poll).
	dialer *upstream.Dialer
	// timing paces supervision.
	timing Timing
	inst   Instances // the instances of owners (instances.go)
}

// serverSet is every server sessions may reach (configured and retired) and the sorted
// names of the configured ones.
type serverSet struct {
	m     map[string]*Server
	names []string
	// plugins are the configured plugins (a removed one stops at once: nothing of it runs
	// outside the gateway, and its calls in flight are cancelled).
	plugins map[string]*Plugin
}

// New builds a registry for cfg with a Dialer of its own. Start connects the upstreams.
func New(cfg *config.Config, log *slog.Logger) *Registry {
	return NewWithOptions(cfg, Options{Log: log})
}

// NewWithOptions builds a registry for cfg. Start connects the upstreams.
func NewWithOptions(cfg *config.Config, o Options) *Registry {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Dialer == nil {
		o.Dialer = upstream.NewDialer()
	}
	if o.Dialer.Busy == nil {
		o.Dialer.Busy = upstream.NewBusyPoll(0)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Registry{log: o.Log, ctx: ctx, cancel: cancel, views: catalog.NewCache(256), dialer: o.Dialer,
		timing: o.Timing.orDefault()}
	r.inst.r = r
	r.integ.r = r
	r.uauth.r = r
	r.plug = plugins.NewRunner(r.pluginHost())
	r.cfg.Store(cfg)
	r.gate.setLimit(cfg.Upstream.StartConcurrency)
	r.dialer.Busy.SetDuration(cfg.Upstream.BusyPoll)
	set := &serverSet{m: map[string]*Server{}}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		set.m[name] = r.newServer(name, cfg.Servers[name])
		set.names = append(set.names, name)
	}
	set.plugins = map[string]*Plugin{}
	for name, d := range cfg.Plugins {
		if d != nil {
			set.plugins[name] = r.plug.New(name, d)
		}
	}
	r.set.Store(set)
	return r
}

func (r *Registry) newServer(name string, d *config.ServerDef) *Server {
	ctx, cancel := context.WithCancel(r.ctx)
	s := &Server{Name: name, Def: d, Mode: d.ResolvedMode(), reg: r, ctx: ctx, cancel: cancel, state: StateStarting, since: time.Now()}
	if d.Pooled() {
		s.pool = newPool(s)
	}
	return s
}

// Config is the config the registry last applied.
func (r *Registry) Config() *config.Config { return r.cfg.Load() }

// Names lists the configured servers in order (retired ones are not among them).
func (r *Registry) Names() []string { return r.set.Load().names }

// Server returns a server by name: a configured one, or a retired one still in use.
func (r *Registry) Server(name string) *Server { return r.set.Load().m[name] }

// Gen is a counter that changes whenever any catalogue or server state changes.
func (r *Registry) Gen() uint64 { return r.gen.Load() }

// Start starts supervising every server and waits up to wait for them to come up the first
// time (a server that is slow or down does not stop the gateway from starting).
func (r *Registry) Start(wait time.Duration) {
	r.applyMu.Lock()
	r.started = true
	r.plug.Configure(r.Config())
	set := r.set.Load()
	var ready sync.WaitGroup
	for _, name := range set.names {
		ready.Add(1)
		r.run(set.m[name], &ready)
	}
	for _, p := range set.plugins {
		ready.Add(1)
		r.runPlugin(p, ready.Done)
	}
	done := make(chan struct{})
	r.applyMu.Unlock()
	go func() { ready.Wait(); close(done) }()
	if wait <= 0 {
		return
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// run starts supervising s in the background; ready (if any) is marked when it first came
// up or failed.
func (r *Registry) run(s *Server, ready *sync.WaitGroup) {
	if ready == nil {
		ready = &sync.WaitGroup{}
		ready.Add(1)
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		s.supervise(ready)
	}()
	if s.pool != nil && !r.NoPools {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			s.pool.run()
		}()
	}
}

// runPlugin starts supervising a plugin in the background; ready is called once it first
// came up or failed.
func (r *Registry) runPlugin(p *Plugin, ready func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		p.Supervise(ready)
	}()
}

// Close stops every shared upstream and every plugin.
func (r *Registry) Close() {
	r.cancel()
	for _, s := range r.set.Load().m {
		s.stop()
	}
	for _, p := range r.set.Load().plugins {
		p.Stop()
	}
	r.wg.Wait()
}

// stop ends the server's supervision and closes its shared connection.
func (s *Server) stop() {
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

// Statuses reports every server's health: the configured ones in order, then the retired
// ones still in use.
func (r *Registry) Statuses() []Status {
	set := r.set.Load()
	out := make([]Status, 0, len(set.m))
	for _, name := range set.names {
		out = append(out, set.m[name].Status())
	}
	for _, name := range slices.Sorted(maps.Keys(set.m)) {
		if s := set.m[name]; s.retired.Load() {
			out = append(out, s.Status())
		}
	}
	return out
}

// Dialer is the registry's upstream dialer: its busy polling (Busy) is the one the
// gateway brackets its requests with, and its pools are the ones the upstreams share.
func (r *Registry) Dialer() *upstream.Dialer { return r.dialer }

// Timing is how the registry paces its supervision.
func (r *Registry) Timing() Timing { return r.timing }

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
		s.reg.changed(s.Name)
	}
	if s.reg.OnState != nil {
		s.reg.OnState(s.Name, state)
	}
}

func (r *Registry) changed(server string) {
	r.gen.Add(1)
	if r.OnChange != nil {
		go r.OnChange(server)
	}
}

// Options returns how to dial this server (shared or probe instances).
func (s *Server) Options() upstream.Options {
	d := s.Def
	return upstream.Options{
		Name: s.Name, Transport: d.Transport(), Command: d.Command, Args: d.Args, Env: d.Env, Dir: d.Dir,
		URL: d.URL, Headers: d.Headers, ProtocolVersion: d.UpstreamVersion(false), ConnectTimeout: d.Timeouts.Connect,
		MaxMessageBytes: s.reg.Config().Upstream.MaxMessageBytes, TLS: d.TLS.Files(), Log: s.reg.log,
		MaxConcurrency: d.Concurrency(), MaxQueue: d.Queue.Max, QueueTimeout: d.Queue.Timeout, MaxQueuePerOwner: d.Queue.MaxPerAgent,
		InProcess: s.reg.inproc.get(s.Name),
		// A server-wide grant is every instance's; a per-user one is given per owner
		// (ownerOptions).
		Authorizer: s.reg.uauth.authorizerFor(s.Name, "", config.AuthPerServer),
	}
}

// probeOptions are the dial options of the server's own instance: Options, except that a
// per-user OAuth server's lists its catalogue with a grant it borrows (catalogAuthorizer).
func (s *Server) probeOptions() upstream.Options {
	o := s.Options()
	if a := s.reg.uauth.catalogAuthorizerFor(s.Name); a != nil {
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
			rl.notify(s.reg.ctx, s.reg.Config().Upstream.RelistInterval, func() {
				cctx, cancel := context.WithTimeout(s.reg.ctx, s.Def.Timeouts.Connect)
				defer cancel()
				cat, err := s.reg.readCatalog(cctx, s.Name, c)
				if err != nil {
					s.reg.log.Warn("re-listing after list_changed failed", "server", s.Name, "err", err)
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
	return s.reg.dialer.Dial(ctx, o)
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
		if s.reg.Handler != nil {
			s.reg.Handler(c, m, raw, rel)
		}
	}
}

// listChanged re-reads a server's lists after the upstream said they changed.
func (s *Server) listChanged(c *upstream.Conn, m *wire.Msg, rl *relister) bool {
	r := s.reg
	switch m.Method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
	default:
		return false
	}
	method := m.Method
	rl.notify(r.ctx, r.Config().Upstream.RelistInterval, func() {
		ctx, cancel := context.WithTimeout(r.ctx, s.Def.Timeouts.Connect)
		defer cancel()
		cat, err := r.readCatalog(ctx, s.Name, c)
		if err != nil {
			r.log.Warn("re-listing after list_changed failed", "server", s.Name, "err", err)
			return
		}
		s.mu.Lock()
		same := s.cat.Equal(cat)
		if !same {
			s.cat = cat
		}
		s.mu.Unlock()
		if !same {
			r.log.Info("upstream catalogue changed", "server", s.Name, "tools", len(cat.Tools))
			r.changed(s.Name)
		} else if r.OnListSaid != nil {
			r.OnListSaid(s.Name, method)
		}
	})
	return true
}

// ErrUnavailable wraps errors for servers that are not up.
var ErrUnavailable = errors.New("upstream unavailable")

// UnavailableError names the upstream that could not serve a request.
func UnavailableError(server string, cause error) error {
	return fmt.Errorf("%w: upstream %q: %v", ErrUnavailable, server, cause)
}
