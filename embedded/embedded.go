// Package embedded runs an mcpgw gateway inside another Go program.
//
// A host builds a Gateway from a config value (New, or NewYAML from the bytes of an
// mcpgw.yaml), registers its in-process plugins (RegisterPlugin: a plugin.Plugin provider
// under a name), starts it (Start), and then mounts Handler in its own HTTP server or lets
// the gateway listen (Serve, ListenAndServe). StartSocket serves the Unix socket that
// mcpgw-bridge relays to. Close stops all of it.
//
// The mcpgw daemon (cmd/mcpgw serve) is built on this package, so a host and the daemon
// run the same code: the same registry, permission views, plugin dispatcher and
// list_changed notifications. An in-process plugin is an ordinary configured plugin of
// type go (config.PluginTypeGo) whose provider comes from code rather than from a
// database: sessions enable it by name, agents' tools.allow/deny, read_only and
// connection_scope apply to its tools, and its calls go through the plugin dispatcher.
//
// Options holds the rest of what a host sets: a logger, a Store it opened itself
// (OpenStore, MemoryStore), the plugin kinds it wants beyond the in-process ones (package
// embedded/pluginkinds: the sql plugin and out-of-process plugins, apart so that a host
// that does not import it links no database driver or gRPC), and a guardian for stdio
// upstreams (GuardianPath: a binary whose main calls RunGuardian first).
//
// Nothing here is global: several gateways may run in one process, each with its own
// config, state directory, store and plugins. docs/embedding.md is the guide.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpgw/mcpgw/internal/statedir"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/plugin"
)

// Gateway is one embedded gateway. Its methods are safe for concurrent use.
type Gateway struct {
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	cfg       *config.Config // the host's config, with a go plugin for each provider
	providers map[string]plugin.Plugin
	// mcpServers are the inprocess servers (AddServer, AddMCPServer), by server name.
	mcpServers map[string]*upstream.InProcess
	state      int // created, started, closed

	store     store.Store
	ownStore  bool
	reg       *registry.Registry
	gw        *gateway.Gateway
	servers   []*http.Server // HTTP listeners started by Serve
	sockSrv   *http.Server
	sockPath  string
	sockDone  chan struct{}
	serveDone sync.WaitGroup

	// live is the gateway's handler from a successful Start to Close: requests read it
	// without a lock.
	live atomic.Pointer[liveHandler]
}

type liveHandler struct{ h http.Handler }

const (
	created = iota
	started
	closed
)

// ErrClosed is returned by Serve and StartSocket after Close.
var ErrClosed = errors.New("mcpgw gateway closed")

// New prepares a gateway for cfg: defaults are filled in (as loading a file does) and
// the config is validated, every problem listed in the error (a config.Problems). cfg is
// copied: later changes to it have no effect. Nothing runs until Start.
func New(cfg *config.Config, opts Options) (*Gateway, error) {
	if cfg == nil {
		return nil, errors.New("mcpgw: nil config (config.Parse(nil) gives the defaults)")
	}
	c := *cfg
	c.Plugins = maps.Clone(cfg.Plugins)
	c.ApplyDefaults()
	if ps := c.Validate(); ps.HasErrors() {
		return nil, ps
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Gateway{opts: opts, log: log, cfg: &c, providers: map[string]plugin.Plugin{}}, nil
}

// NewYAML is New on the text of an mcpgw.yaml: ${VAR} references are expanded from the
// environment, and relative paths in it are relative to the working directory.
func NewYAML(yaml []byte, opts Options) (*Gateway, error) {
	cfg, _, err := config.Parse(yaml)
	if err != nil {
		return nil, err
	}
	return New(cfg, opts)
}

// RegisterPlugin serves provider p as the plugin name, in the gateway's process. When the
// config has plugins.<name>, it must be of type go, and its options (read_only,
// default_enabled, refresh, call_timeout, meta) apply; otherwise the plugin is added
// with the defaults (enabled for agents that list no servers, catalogue read again every
// minute). The plugin's connections are the provider's. The host owns p: the gateway
// never closes it. Register before Start.
func (g *Gateway) RegisterPlugin(name string, p plugin.Plugin) error {
	if p == nil {
		return fmt.Errorf("mcpgw: plugin %q: nil provider", name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != created {
		return fmt.Errorf("mcpgw: plugin %q: register plugins before Start", name)
	}
	if _, dup := g.providers[name]; dup {
		return fmt.Errorf("mcpgw: plugin %q is registered already", name)
	}
	if d := g.cfg.Plugins[name]; d != nil && d.Type != config.PluginTypeGo {
		return fmt.Errorf("mcpgw: plugins.%s is type %q in the config; a plugin given in code must be type %q there", name, d.Type, config.PluginTypeGo)
	}
	next := *g.cfg
	next.Plugins = maps.Clone(g.cfg.Plugins)
	if next.Plugins == nil {
		next.Plugins = map[string]*config.PluginDef{}
	}
	if next.Plugins[name] == nil {
		next.Plugins[name] = &config.PluginDef{Type: config.PluginTypeGo}
	}
	next.ApplyDefaults()
	if ps := next.Validate(); ps.HasErrors() {
		return ps
	}
	g.cfg = &next
	g.providers[name] = p
	return nil
}

// Config is the config the gateway was built with, its in-process plugins included.
// It must not be changed.
func (g *Gateway) Config() *config.Config {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cfg
}

// Start opens the store, starts the upstreams and plugins (waiting up to
// Options.ConnectWait for them), and starts the gateway's background work. It fails on a
// state_dir that is not the gateway user's alone (docs/security.md), when
// a go plugin of the config has no provider, when a plugin's kind is not in
// Options.PluginKinds, or when two tools would be exposed under one name. After a failed
// Start, call Close.
func (g *Gateway) Start(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != created {
		return errors.New("mcpgw: Start called twice, or after Close")
	}
	g.state = started
	cfg := g.cfg
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		if d := cfg.Plugins[name]; d != nil && d.Type == config.PluginTypeGo && g.providers[name] == nil {
			return fmt.Errorf("mcpgw: plugins.%s is type go, but no provider was registered under that name (RegisterPlugin)", name)
		}
	}
	kinds, err := registryKinds(g.opts.PluginKinds)
	if err != nil {
		return err
	}
	if ps := kinds.Missing(cfg); len(ps) > 0 {
		return fmt.Errorf("mcpgw: %w", ps)
	}
	if err := inProcessMissing(cfg, g.mcpServers); err != nil {
		return err
	}
	// The state dir decides what the gateway trusts (its local token is an admin
	// credential): one another user may write is refused before anything is opened there.
	if cfg.StateDir != "" {
		if err := statedir.Prepare(cfg.StateDir); err != nil {
			return err
		}
	}
	if err := g.openStore(cfg); err != nil {
		return err
	}
	dialer := upstream.NewDialer()
	dialer.GuardianPath, dialer.Version = g.opts.GuardianPath, g.opts.Version
	g.reg = registry.NewWithOptions(cfg, registry.Options{Log: g.log, Dialer: dialer})
	g.reg.PluginKinds = kinds
	for name, p := range g.providers {
		g.reg.Provide(name, p)
	}
	provideServers(g.reg, g.mcpServers)
	gw, err := gateway.New(cfg, g.reg, g.store, g.log)
	if err != nil {
		return err
	}
	g.gw = gw
	if g.opts.LogLevel != nil {
		gw.UseLogLevel(g.opts.LogLevel)
	}
	gw.ReloadHook = g.opts.OnPeerReload
	wait := g.opts.ConnectWait
	if wait <= 0 {
		wait = cfg.Upstream.StartWait
	}
	if err := startRegistry(ctx, g.reg, wait); err != nil {
		return err
	}
	if coll := g.reg.Collisions(); len(coll) > 0 {
		return fmt.Errorf("mcpgw: exposed name collisions: %w", coll)
	}
	gw.Start()
	g.live.Store(&liveHandler{gw.Handler()})
	return nil
}

// startRegistry runs reg.Start(wait), returning early (the registry still starting in
// the background) when ctx ends.
func startRegistry(ctx context.Context, reg *registry.Registry, wait time.Duration) error {
	done := make(chan struct{})
	go func() { reg.Start(wait); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Handler serves the gateway's HTTP routes: /mcp (streamable HTTP), /sse and /message
// (legacy SSE), /healthz, /readyz, /metrics, /api/ (the admin API), /ui/ and the OAuth
// resource metadata. Mount it at the root of a server, or give it those paths. The Host
// header must be the config's listen address (or a loopback alias of it) or one of
// http.allowed_hosts, so a host serving it elsewhere lists its own address there.
// Before Start, and after Close, it answers 503.
func (g *Gateway) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l := g.live.Load(); l != nil {
			l.h.ServeHTTP(w, r)
			return
		}
		http.Error(w, "mcpgw gateway is not running", http.StatusServiceUnavailable)
	})
}

// ConnContext is the http.Server ConnContext a host that serves Handler on its own server
// sets: in auth mode none the gateway serves only the user who runs it, and on Linux asks
// the kernel who owns a loopback client's connection (docs/security.md#local-trust). With
// it, that is asked once per connection; without it, once per request (about 14 µs).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return gateway.ConnContext(ctx, c)
}

// Vouch marks r as coming from a caller the host authenticated itself: the gateway then
// believes its identity headers as it believes the bridge's socket. A host that
// authenticates in front of the gateway (auth.mode none) vouches for the requests it
// passes on; without it, mode none serves only the user who runs the process.
func Vouch(r *http.Request) *http.Request { return r.WithContext(auth.WithTrusted(r.Context())) }

// Listen opens the config's listen address, its http.max_connections shared among the
// connections' sources (no one source takes them all), for Serve.
func (g *Gateway) Listen() (net.Listener, error) {
	cfg := g.Config()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	return gateway.ShareListener(ln, cfg.HTTP.MaxConnections), nil
}

// Serve serves Handler on ln with the daemon's server settings until Close, which makes
// it return nil. Start first.
func (g *Gateway) Serve(ln net.Listener) error {
	// Headers have ReadHeaderTimeout; bodies get http.body_timeout in the handler (a
	// server-wide ReadTimeout would also end long-running calls and open streams).
	// ConnContext: the gateway names a loopback peer's user once per connection.
	srv := &http.Server{Handler: g.Handler(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10,
		IdleTimeout: 5 * time.Minute, ErrorLog: slog.NewLogLogger(g.log.Handler(), slog.LevelWarn),
		ConnContext: gateway.ConnContext}
	g.mu.Lock()
	if g.state != started {
		g.mu.Unlock()
		ln.Close()
		return errNotRunning(g.state)
	}
	g.servers = append(g.servers, srv)
	g.serveDone.Add(1)
	g.mu.Unlock()
	defer g.serveDone.Done()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// ListenAndServe is Listen, then Serve.
func (g *Gateway) ListenAndServe() error {
	ln, err := g.Listen()
	if err != nil {
		return err
	}
	return g.Serve(ln)
}

// StartSocket serves the gateway on a Unix socket (on Windows, an AF_UNIX socket) for
// mcpgw-bridge, in the background, and returns its path. path "" is the state
// directory's default, the one the bridge finds with no flags. The socket is private
// to the user running the gateway; Close removes it.
func (g *Gateway) StartSocket(path string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != started {
		return "", errNotRunning(g.state)
	}
	if g.sockSrv != nil {
		return "", fmt.Errorf("mcpgw: the socket is served already at %s", g.sockPath)
	}
	if path == "" {
		path = gateway.SocketPath(g.cfg.StateDir)
	}
	ln, err := gateway.ListenSocket(path)
	if err != nil {
		return "", fmt.Errorf("unix socket: %w", err)
	}
	g.sockSrv, g.sockPath, g.sockDone = g.gw.SocketServer(), path, make(chan struct{})
	srv, done := g.sockSrv, g.sockDone
	go func() {
		defer close(done)
		_ = g.gw.ServeSocket(ln, srv)
	}()
	return path, nil
}

func errNotRunning(state int) error {
	if state == closed {
		return ErrClosed
	}
	return errors.New("mcpgw: the gateway is not started (call Start first)")
}

// Reload applies a new config while the gateway runs, as a changed mcpgw.yaml does in
// the daemon: servers, agents, executors, tasks and credentials change, merged with the
// entries the admin API stored. The in-process plugins stay (a plugins.<name> of type go
// in cfg sets their options). The listener, store and state_dir need a new gateway.
func (g *Gateway) Reload(cfg *config.Config) error {
	if cfg == nil {
		return errors.New("mcpgw: nil config")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != started {
		return errNotRunning(g.state)
	}
	c := *cfg
	c.Plugins = maps.Clone(cfg.Plugins)
	for name := range g.providers {
		if d := c.Plugins[name]; d != nil && d.Type != config.PluginTypeGo {
			return fmt.Errorf("mcpgw: plugins.%s is type %q; it is given in code, so it must be type %q", name, d.Type, config.PluginTypeGo)
		}
		if c.Plugins == nil {
			c.Plugins = map[string]*config.PluginDef{}
		}
		if c.Plugins[name] == nil {
			c.Plugins[name] = &config.PluginDef{Type: config.PluginTypeGo}
		}
	}
	if err := reloadInProcess(&c, g.mcpServers); err != nil {
		return err
	}
	c.ApplyDefaults()
	if ps := c.Validate(); ps.HasErrors() {
		return ps
	}
	if err := g.gw.ReloadFile(&c); err != nil {
		return err
	}
	g.cfg = &c
	return nil
}

// PublishReload tells the other replicas sharing the store that this one reloaded its
// config (their OnPeerReload runs).
func (g *Gateway) PublishReload() {
	g.mu.Lock()
	gw := g.gw
	g.mu.Unlock()
	if gw != nil {
		gw.PublishReload()
	}
}

// Close stops the gateway: the servers of Serve and the socket stop accepting and are
// shut down (waiting up to 5 s for requests in flight), every session ends, the
// upstreams and plugins stop, and the store it opened is closed. It is safe to call
// more than once, and after a failed Start.
func (g *Gateway) Close() error {
	g.mu.Lock()
	if g.state == closed {
		g.mu.Unlock()
		return nil
	}
	g.state = closed
	g.live.Store(nil)
	servers, sockSrv, sockPath, sockDone := g.servers, g.sockSrv, g.sockPath, g.sockDone
	g.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(ctx)
	}
	if sockSrv != nil {
		_ = sockSrv.Shutdown(ctx)
		<-sockDone
		_ = os.Remove(sockPath)
	}
	g.serveDone.Wait()
	if g.gw != nil {
		g.gw.Close()
	}
	if g.reg != nil {
		g.reg.Close()
	}
	if g.ownStore && g.store != nil {
		return g.store.Close()
	}
	return nil
}
