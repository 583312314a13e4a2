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
	"github.com/mcpgw/mcpgw/internal/registry/internal/instances"
	"github.com/mcpgw/mcpgw/internal/registry/internal/plugins"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

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

// Registry owns the upstream servers.
type Registry struct {
	log *slog.Logger

	cfg atomic.Pointer[config.Config]
	// set is replaced whole by Apply and Release (copy on write): the call path reads it
	// without a lock.
	set     atomic.Pointer[serverSet]
	applyMu sync.Mutex
	started bool // Start ran: Apply starts new servers at once

	// changes counts and tells the changes of catalogues and states (changes.go).
	changes changes

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
	// OnInstanceStart observes each instance's start and initialize time
	// (instances.Server.ObserveStart).
	OnInstanceStart func(server string, d time.Duration)
	// NoPools keeps warm pools from starting (commands that only list catalogues: check,
	// explain). Set before Start.
	NoPools bool
	// PluginKinds are the plugin kinds this registry runs besides the built-in go and
	// mcpgw types (internal/plugins; package internal/registry/pluginkind has sql and command). A
	// plugin whose kind is missing is down, saying so. Set before Start.
	PluginKinds PluginKinds

	ctx    context.Context
	cancel context.CancelFunc
	crew   crew // runs the supervision goroutines
	views  views
	// gate bounds the instances the registry starts at once (upstream.start_concurrency).
	gate instances.StartGate

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
	// inst are the instances of owners (internal/registry/internal/instances); ih is what
	// they and the servers need of the registry.
	inst *instances.Instances
	ih   *instances.Host
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
	r := &Registry{log: o.Log, ctx: ctx, cancel: cancel, dialer: o.Dialer,
		timing: o.Timing.OrDefault()}
	r.changes.on = func() func(string) { return r.OnChange }
	r.ih = instanceHost(r)
	r.inst = instances.New(r.ih)
	r.crew.noPools = func() bool { return r.NoPools }
	r.views = views{r: r, cache: catalog.NewCache(256)}
	r.integ.r = r
	r.uauth.r = r
	r.plug = plugins.NewRunner(pluginHost(r))
	r.cfg.Store(cfg)
	r.gate.SetLimit(cfg.Upstream.StartConcurrency)
	r.dialer.Busy.SetDuration(cfg.Upstream.BusyPoll)
	set := &serverSet{m: map[string]*Server{}}
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		set.m[name] = instances.NewServer(r.ih, name, cfg.Servers[name])
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

// Config is the config the registry last applied.
func (r *Registry) Config() *config.Config { return r.cfg.Load() }

// Names lists the configured servers in order (retired ones are not among them).
func (r *Registry) Names() []string { return r.set.Load().names }

// Server returns a server by name: a configured one, or a retired one still in use.
func (r *Registry) Server(name string) *Server { return r.set.Load().m[name] }

// Gen is a counter that changes whenever any catalogue or server state changes.
func (r *Registry) Gen() uint64 { return r.changes.gen.Load() }

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
		r.crew.server(set.m[name], &ready)
	}
	for _, p := range set.plugins {
		ready.Add(1)
		r.crew.plugin(p, ready.Done)
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

// Close stops every shared upstream and every plugin.
func (r *Registry) Close() {
	r.cancel()
	for _, s := range r.set.Load().m {
		s.Stop()
	}
	for _, p := range r.set.Load().plugins {
		p.Stop()
	}
	r.crew.wg.Wait()
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
		if s := set.m[name]; s.Retired() {
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

// ErrUnavailable wraps errors for servers that are not up.
var ErrUnavailable = errors.New("upstream unavailable")

// UnavailableError names the upstream that could not serve a request.
func UnavailableError(server string, cause error) error {
	return fmt.Errorf("%w: upstream %q: %v", ErrUnavailable, server, cause)
}
