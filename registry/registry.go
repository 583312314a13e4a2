// Package registry holds the gateway's configuration model and its upstream servers: their
// connections and supervision, their catalogues of tools, prompts and resources, and views.
package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/registry/upstream"
	"github.com/mcpgw/mcpgw/registry/wire"
)

// Server states.
const (
	StateStarting = "starting"
	StateUp       = "up"
	StateDown     = "down"
	StateStopped  = "stopped"
)

// Backoff bounds for restarting an upstream. The delay doubles after each failure and
// resets only after the upstream stayed up for StableAfter.
var (
	BackoffMin  = 250 * time.Millisecond
	BackoffMax  = 30 * time.Second
	StableAfter = 30 * time.Second
)

// Server is one configured upstream server.
type Server struct {
	Name string
	Def  *config.ServerDef
	Mode string

	reg *Registry

	mu       sync.Mutex
	cat      *Catalog
	state    string
	lastErr  string
	since    time.Time
	restarts int
	conn     *upstream.Conn // shared mode only
	pid      int
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
}

// Registry owns the upstream servers.
type Registry struct {
	Config *config.Config
	log    *slog.Logger

	servers map[string]*Server
	names   []string

	// gen changes whenever any server's catalogue or state changes.
	gen atomic.Uint64

	// Handler receives upstream messages that are neither responses nor list_changed.
	Handler upstream.Handler
	// OnChange is called (from its own goroutine) after a server's catalogue or state changed.
	OnChange func(server string)
	// OnUp and OnRestart observe supervision, for metrics.
	OnState func(server, state string)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	views  *viewCache
}

// New builds a registry for cfg. Start connects the upstreams.
func New(cfg *config.Config, log *slog.Logger) *Registry {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Registry{Config: cfg, log: log, servers: map[string]*Server{}, ctx: ctx, cancel: cancel, views: newViewCache(256)}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		d := cfg.Servers[name]
		r.servers[name] = &Server{Name: name, Def: d, Mode: d.ResolvedMode(), reg: r, state: StateStarting, since: time.Now()}
		r.names = append(r.names, name)
	}
	return r
}

// Names lists the configured servers in order.
func (r *Registry) Names() []string { return r.names }

// Server returns a server by name.
func (r *Registry) Server(name string) *Server { return r.servers[name] }

// Gen is a counter that changes whenever any catalogue or server state changes.
func (r *Registry) Gen() uint64 { return r.gen.Load() }

// Start starts supervising every server and waits up to wait for them to come up the first
// time (a server that is slow or down does not stop the gateway from starting).
func (r *Registry) Start(wait time.Duration) {
	var ready sync.WaitGroup
	for _, name := range r.names {
		s := r.servers[name]
		ready.Add(1)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			s.supervise(&ready)
		}()
	}
	done := make(chan struct{})
	go func() { ready.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(wait):
	}
}

// Close stops every shared upstream.
func (r *Registry) Close() {
	r.cancel()
	for _, s := range r.servers {
		s.mu.Lock()
		c := s.conn
		s.mu.Unlock()
		if c != nil {
			_ = c.Close()
		}
	}
	r.wg.Wait()
}

// Statuses reports every server's health.
func (r *Registry) Statuses() []Status {
	out := make([]Status, 0, len(r.names))
	for _, name := range r.names {
		out = append(out, r.servers[name].Status())
	}
	return out
}

// Status reports the server's health.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.Name, Transport: s.Def.Transport(), Mode: s.Mode, State: s.state, Since: s.since, Error: s.lastErr, Restarts: s.restarts}
	if s.cat != nil {
		st.Tools, st.Prompts, st.Resources = len(s.cat.Tools), len(s.cat.Prompts), len(s.cat.Resources)
		st.Problems = s.cat.Problems
	}
	return st
}

// Catalog returns the server's current catalogue, or nil while it is not up.
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
	deadline := time.Now().Add(s.Def.Timeouts.Connect)
	for {
		s.mu.Lock()
		c, state := s.conn, s.state
		s.mu.Unlock()
		if c != nil || state != StateStarting || time.Now().After(deadline) {
			return c
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
			return nil
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
		if !s.cat.equal(cat) {
			changed = true
		}
		s.cat = cat
	}
	s.conn = conn
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
		URL: d.URL, Headers: d.Headers, ProtocolVersion: d.ProtocolVer, ConnectTimeout: d.Timeouts.Connect,
		MaxMessageBytes: s.reg.Config.Upstream.MaxMessageBytes, TLS: d.TLS.Files(), Log: s.reg.log,
	}
}

// supervise keeps a shared server connected, or keeps a per_session server's catalogue
// known (by probing one instance), restarting with exponential back-off.
func (s *Server) supervise(ready *sync.WaitGroup) {
	var once sync.Once
	markReady := func() { once.Do(ready.Done) }
	defer markReady()
	backoff := BackoffMin
	for attempt := 0; s.reg.ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			s.mu.Lock()
			s.restarts++
			s.mu.Unlock()
			if s.reg.OnState != nil {
				s.reg.OnState(s.Name, "restart")
			}
		}
		started := time.Now()
		err := s.runOnce(markReady)
		if s.reg.ctx.Err() != nil {
			s.setState(StateStopped, nil, nil, nil, true)
			return
		}
		var re *upstream.RestartError
		if errors.As(err, &re) && time.Since(started) >= time.Second {
			// The gateway ended a working instance (one bad message): start the next at
			// once and keep the tools listed, so calls wait for it instead of failing.
			s.reg.log.Info("upstream restarting", "server", s.Name, "why", err)
			s.setState(StateStarting, err, nil, nil, false)
			continue
		}
		s.reg.log.Warn("upstream down", "server", s.Name, "err", err, "retry_in", backoff)
		s.setState(StateDown, err, nil, nil, true)
		markReady()
		if time.Since(started) >= StableAfter {
			backoff = BackoffMin
		}
		// Jitter keeps a fleet of gateways from reconnecting in lock-step.
		sleep := backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1))
		select {
		case <-time.After(sleep):
		case <-s.reg.ctx.Done():
			s.setState(StateStopped, nil, nil, nil, true)
			return
		}
		if backoff *= 2; backoff > BackoffMax {
			backoff = BackoffMax
		}
	}
}

// runOnce connects, lists the catalogue, and (shared) waits until the connection ends.
// For per_session servers it probes once and then waits for a refresh request.
func (s *Server) runOnce(markReady func()) error {
	o := s.Options()
	o.Handler = s.reg.handle
	c, err := upstream.Dial(s.reg.ctx, o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.reg.ctx, s.Def.Timeouts.Connect)
	cat, err := fetchCatalog(ctx, s.Name, c, s.reg.Config.Naming)
	cancel()
	if err != nil {
		_ = c.Close()
		return err
	}
	for _, p := range cat.Problems {
		s.reg.log.Warn("upstream catalogue problem", "server", s.Name, "problem", p)
	}
	if s.Mode == config.ModePerSession {
		// The probe instance only tells us the catalogue; each session starts its own.
		_ = c.Close()
		s.setState(StateUp, nil, cat, nil, true)
		markReady()
		<-s.reg.ctx.Done()
		return s.reg.ctx.Err()
	}
	s.mu.Lock()
	s.pid = c.Pid()
	s.mu.Unlock()
	s.setState(StateUp, nil, cat, c, true)
	s.reg.log.Info("upstream up", "server", s.Name, "transport", s.Def.Transport(), "tools", len(cat.Tools), "protocol", c.ProtocolVersion)
	markReady()
	// A ping every KeepAlive notices an upstream that went away without a word (an HTTP
	// server without a standalone stream, a hung process).
	tick := time.NewTicker(KeepAlive)
	defer tick.Stop()
	misses := 0
	for {
		select {
		case <-c.Done():
			err := c.Err()
			_ = c.Close()
			if err == nil {
				err = errors.New("connection ended")
			}
			return err
		case <-s.reg.ctx.Done():
			_ = c.Close()
			return s.reg.ctx.Err()
		case <-tick.C:
			ctx, cancel := context.WithTimeout(s.reg.ctx, KeepAlive/2)
			_, err := c.Request(ctx, "ping", nil)
			cancel()
			var rpc *upstream.RPCError
			if err == nil || errors.As(err, &rpc) {
				misses = 0 // any answer, even "method not found", is a sign of life
				continue
			}
			if misses++; misses >= 2 {
				_ = c.Close()
				return fmt.Errorf("no answer to ping: %v", err)
			}
		}
	}
}

// KeepAlive is how often shared upstreams are pinged.
var KeepAlive = 15 * time.Second

// Pid returns the process id of a shared stdio upstream (0 if none).
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pid
}

// Spawn starts a per-session instance of the server for one session, offering the
// session's own client capabilities and info, with env and headers as given. When the
// instance says its lists changed, they are re-read and given to onCatalog: an instance's
// catalogue (which may depend on its client's capabilities) is its session's alone.
func (s *Server) Spawn(ctx context.Context, o upstream.Options, onCatalog func(*Catalog)) (*upstream.Conn, error) {
	h := o.Handler
	o.Handler = func(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
		switch m.Method {
		case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
			go func() {
				cctx, cancel := context.WithTimeout(s.reg.ctx, s.Def.Timeouts.Connect)
				defer cancel()
				cat, err := fetchCatalog(cctx, s.Name, c, s.reg.Config.Naming)
				if err != nil {
					s.reg.log.Warn("re-listing after list_changed failed", "server", s.Name, "err", err)
					return
				}
				if onCatalog != nil {
					onCatalog(cat)
				}
			}()
			return
		}
		if h != nil {
			h(c, m, raw, rel)
		}
	}
	return upstream.Dial(ctx, o)
}

// handle is the handler of shared connections.
func (r *Registry) handle(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
	if s := r.servers[c.Name]; s != nil && r.listChanged(s, c, m) {
		return
	}
	if r.Handler != nil {
		r.Handler(c, m, raw, rel)
	}
}

// listChanged re-reads a server's lists after the upstream said they changed.
func (r *Registry) listChanged(s *Server, c *upstream.Conn, m *wire.Msg) bool {
	switch m.Method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
	default:
		return false
	}
	go func() {
		ctx, cancel := context.WithTimeout(r.ctx, s.Def.Timeouts.Connect)
		defer cancel()
		cat, err := fetchCatalog(ctx, s.Name, c, r.Config.Naming)
		if err != nil {
			r.log.Warn("re-listing after list_changed failed", "server", s.Name, "err", err)
			return
		}
		s.mu.Lock()
		same := s.cat.equal(cat)
		if !same {
			s.cat = cat
		}
		s.mu.Unlock()
		if !same {
			r.log.Info("upstream catalogue changed", "server", s.Name, "tools", len(cat.Tools))
			r.changed(s.Name)
		}
	}()
	return true
}

// ErrUnavailable wraps errors for servers that are not up.
var ErrUnavailable = errors.New("upstream unavailable")

// UnavailableError names the upstream that could not serve a request.
func UnavailableError(server string, cause error) error {
	return fmt.Errorf("%w: upstream %q: %v", ErrUnavailable, server, cause)
}
