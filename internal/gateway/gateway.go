// Package gateway is the MCP server clients see: the streamable HTTP and legacy SSE fronts,
// request dispatch and relaying to upstreams, health and metrics.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/dispatch"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/inputround"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/intake"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/localtrust"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/runners"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/subscriptions"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/selfplugin"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/stateless"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/ui"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Protocol versions the gateway speaks to clients.
var (
	streamableVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}
	legacyVersions     = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	latestVersion      = "2025-11-25"
)

// Gateway serves MCP to clients over the upstreams of a registry.
type Gateway struct {
	cfg   *config.Config
	reg   *registry.Registry
	store store.Store
	log   *slog.Logger
	// version is the gateway's version (serverInfo, the admin API's OpenAPI document,
	// tracing), its registry's Dialer's.
	version string
	// busy is the registry's busy polling: every request is counted in it, since polling
	// waits for an answer only while the gateway handles one request.
	busy *upstream.BusyPoll

	// LogLevel, when set, is the level of the logger the gateway was given: a reload (or
	// PUT /api/settings) changes it live.
	LogLevel *slog.LevelVar

	ctx    context.Context
	cancel context.CancelFunc

	// live are the client sessions live in this process (sessiontable.go).
	live sessionTable
	// writes is the store as the gateway writes it: it remembers a failed write (/readyz).
	writes *store.WriteWatch
	// configStore is the store of the admin API's config entries, API servers' secret
	// values sealed at rest (configstore.go).
	configStore admin.Store
	// subAgents counts each agent's resource subscriptions over its sessions
	// (http.max_subscriptions_per_agent).
	subAgents subscriptions.Agents

	// The fronts clients come in by: streamable HTTP (streamable.go, resume.go), and the
	// legacy SSE front with the bridge socket's line front (sse.go, socket.go, line.go).
	// The stateless front.
	streamable streamableFront
	legacy     legacyFront

	// calls answers clients' requests: the method table, the call path to upstreams and
	// plugins, and the way back (internal/gateway/internal/dispatch).
	calls *dispatch.Dispatcher

	streamSeq atomic.Int64

	hosts   map[string]bool
	origins map[string]bool

	metrics *telemetry.Metrics
	mux     *http.ServeMux

	// fileCfg is the config as the file gave it; the running config (policy) is it merged
	// with the admin API's stored entries. cfgMu serialises computing and applying that.
	fileCfg atomic.Pointer[config.Config]
	cfgMu   sync.Mutex

	pol    atomic.Pointer[policy]
	polGen atomic.Uint64
	audit  *auth.Audit
	keys   *auth.KeyFile
	// replicas carries events to the other replicas (replicas.go).
	replicas replicaLink
	// startedAt is when Start ran: /readyz says starting until the registry's servers and
	// plugins have first come up or failed, at most StartWindow after it.
	startedAt time.Time

	// usage is the last hour of per-minute metric snapshots (the UI's Usage page); ui the
	// web UI (internal/gateway/internal/ui) with its sign-in sessions.
	usage *telemetry.Usage
	ui    *ui.UI

	// ReloadHook is called when another replica announces a config reload.
	ReloadHook func()

	// tracing exports spans (internal/gateway/internal/telemetry); nil when tracing is off, as the
	// request path checks.
	tracing *telemetry.Tracer
	// gate decides who a caller is and what it may do (identity.go, localtrust.go,
	// signin.go).
	gate gatekeeper
	// admin is the admin API (internal/gateway/internal/admin), reaching the gateway through
	// adminPort.
	admin *admin.API

	// stateless holds the gateway-side sessions of stateless (2026-07-28) callers and their
	// parked calls (stateless.go, mrtr.go).
	stateless statelessFront

	// runners are the executors' runners (runners.go).
	runners *runners.Hub
}

// linkParts gives each part of g the gateway it reaches the others through.
func linkParts(g *Gateway) {
	g.stateless.g, g.gate.g, g.live.g, g.streamable.g, g.legacy.g, g.replicas.g = g, g, g, g, g, g
	sep := ""
	if g.cfg != nil {
		sep = g.cfg.Naming.Separator
	}
	g.calls = dispatch.New(dispatch.Parts{Cfg: g.cfg, Reg: g.reg, Store: g.store, Log: g.log,
		Busy: g.busy, Ctx: g.ctx, Host: dispatchHost{g}, SubAgents: &g.subAgents}, sep)
	g.stateless.rounds = inputround.New[*session.Session](g.ctx, roundsHost{g})
	g.stateless.table = stateless.NewTable(func(s *session.Session) bool { return !s.IsClosed() })
	if g.cfg != nil {
		g.streamable.resumes = newResumeStore(g)
		g.streamable.server = newStreamableServer(g)
	}
}

// New builds a gateway. Call Start, then serve Handler. keys (API keys created by
// `mcpgw token create-key`) and audit may be nil.
func New(cfg *config.Config, reg *registry.Registry, st store.Store, log *slog.Logger) (*Gateway, error) {
	ctx, cancel := context.WithCancel(context.Background())
	// Reads may succeed while every write fails (a full disk): readiness watches writes.
	writes := store.WatchWrites(st)
	g := &Gateway{cfg: cfg, reg: reg, store: writes, writes: writes, log: log, ctx: ctx, cancel: cancel,
		live:    sessionTable{sessions: map[string]*session.Session{}},
		metrics: telemetry.NewMetrics(cfg.Auth.Metrics.AgentLabel),
		version: reg.Dialer().EffectiveVersion(), busy: reg.Dialer().Busy}
	linkParts(g)
	g.configStore = sealedConfigStore(cfg, g.store, log)
	reg.Integrity().Use(st, g.integrityEvent) // pins in the store, before any catalogue is read
	g.usage = telemetry.NewUsage(g.metrics)
	g.metrics.SetStoreProbe(health{g}.probeStore)
	// The key file holds agent keys (mode api_key) and admin keys (every mode).
	kf, err := auth.OpenKeyFile(KeyFilePath(cfg))
	if err != nil {
		cancel()
		return nil, err
	}
	g.keys = kf
	if g.gate.local, err = localtrust.New(cfg.StateDir, os.Getuid()); err != nil {
		// A CLI that builds a gateway to explain a config may not own its state dir; the
		// kernel's word on a peer's user still decides, and the daemon's store would fail
		// on such a directory anyway.
		log.Warn("no local token: only the gateway's own user is local", "err", err)
	}
	g.fileCfg.Store(cfg)
	useRunners(g)
	reg.ProvideSelf(selfplugin.New(selfHost{g})) // plugins of type mcpgw
	if err := g.Reload(g.startConfig(cfg)); err != nil {
		cancel()
		return nil, err
	}
	if !cfg.Auth.Audit.Disabled {
		a, err := auth.OpenAudit(cfg.Auth.Audit.Path, log)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("audit log: %w", err)
		}
		g.audit = a
	}
	tr, err := telemetry.NewTracer(cfg.Tracing, g.version, log)
	if err != nil {
		cancel()
		g.audit.Close()
		return nil, fmt.Errorf("tracing: %w", err)
	}
	g.tracing = tr
	// One observer watches the request path: metrics, the audit log and tracing.
	g.calls.Obs = dispatch.MetricsHooks(g.metrics).With(dispatch.AuditHooks(g.audit)).With(dispatch.TracingHooks(tr)).With(dispatch.UsageHooks(g.calls.ToolRanks()))
	g.hosts, g.origins = allowLists(cfg)
	reg.Handler = func(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
		g.calls.HandleUpstream(nil, c, m, raw, rel)
	}
	reg.OnChange = g.serverChanged
	reg.OnListSaid = g.stateless.listSaid
	reg.OnState = g.metrics.ServerState
	g.metrics.WatchInstances(reg)
	g.mux = http.NewServeMux()
	serveMCP, serveMessage := g.streamable.serveMCP, g.legacy.serveMessage
	if g.tracing != nil {
		serveMCP, serveMessage = g.tracing.HTTPContext(serveMCP), g.tracing.HTTPContext(serveMessage)
	}
	g.mux.HandleFunc("/mcp", serveMCP)
	// The base URL too, for an MCP request (root.go); other paths stay unknown.
	g.mux.HandleFunc("/{$}", mcpAtRoot(serveMCP, g.legacy.serveSSE))
	g.mux.HandleFunc("/sse", g.legacy.serveSSE)
	g.mux.HandleFunc("/message", serveMessage)
	// The same front under /mcp, where clients written for other gateways look for it.
	g.mux.HandleFunc("/mcp/sse", g.legacy.serveSSE)
	g.mux.HandleFunc("/mcp/messages", serveMessage)
	g.mux.HandleFunc("/oauth/connect/", oauthPort{g}.serveConnect)
	g.mux.HandleFunc(config.CallbackPath, oauthPort{g}.serveCallback)
	g.mux.HandleFunc(config.ConsentPath, oauthPort{g}.serveConsent)
	g.mux.Handle(runners.Path, g.runners)
	g.mux.HandleFunc("/healthz", health{g}.serveHealthz)
	g.mux.HandleFunc("/readyz", health{g}.serveReadyz)
	g.mux.Handle("/metrics", metricsGate(g, g.metrics.Handler()))
	g.mux.HandleFunc("/.well-known/oauth-protected-resource", g.gate.serveResourceMetadata)
	g.mux.HandleFunc("/.well-known/oauth-protected-resource/", g.gate.serveResourceMetadata)
	g.ui = ui.New(newAdminPort(g), g.version, log)
	g.admin = admin.New(newAdminPort(g), g.version, log, func() []admin.Route { return apiRoutes(g) })
	adminRouter := g.admin.Router(mountUI(g))
	g.mux.Handle("/api/", adminRouter)
	g.mux.Handle("/ui", adminRouter)
	g.mux.Handle("/ui/", adminRouter)
	return g, nil
}

// KeyFilePath is where API keys created by `mcpgw token create-key` are kept (hashed).
func KeyFilePath(cfg *config.Config) string { return filepath.Join(cfg.StateDir, "api_keys.jsonl") }

// Reload applies a new config while the gateway runs: servers (added ones start, changed
// ones are replaced, removed ones retire and stay up for the sessions that already have
// them), agents, executors, tasks and credentials. Sessions keep their server sets; those
// whose view changed are sent list_changed. The listener, the store and the state
// directory need a restart.
func (g *Gateway) Reload(cfg *config.Config) error {
	authn, err := auth.NewAuthenticator(cfg, g.keys)
	if err != nil {
		return err
	}
	proxies, err := config.ParseTrustedProxies(cfg.HTTP.TrustedProxies)
	if err != nil {
		return err
	}
	// The token manager before the servers: an OAuth server (from the file or the admin
	// API, at start or added later) starts with it.
	if err := useUpstreamAuth(g, cfg); err != nil {
		return err
	}
	// Servers first: a session that resolves against the new policy finds them.
	g.reg.Apply(cfg)
	g.setLogLevel(cfg)
	g.pol.Store(&policy{cfg: cfg, authn: authn, gen: g.polGen.Add(1), proxies: proxies, exchanging: registry.Exchanging(cfg)})
	g.notifyAll()
	g.releaseRetired()
	g.runners.Revalidate(cfg)
	return nil
}

// setLogLevel applies cfg's log.level to LogLevel (when the gateway was given one).
func (g *Gateway) setLogLevel(cfg *config.Config) {
	var lvl slog.Level
	if g.LogLevel != nil && lvl.UnmarshalText([]byte(cfg.Log.Level)) == nil {
		g.LogLevel.Set(lvl)
	}
}

// UseLogLevel hands the gateway its logger's level, set at once from the running config
// (which may carry an admin API setting) and on every reload after.
func (g *Gateway) UseLogLevel(v *slog.LevelVar) {
	g.LogLevel = v
	g.setLogLevel(g.policy().cfg)
}

// releaseRetired stops retired servers that no live session has in its set.
func (g *Gateway) releaseRetired() {
	if !g.reg.HasRetired() {
		return
	}
	g.reg.Release(func(server string) bool {
		return g.live.any(func(s *session.Session) bool { return slices.Contains(s.Servers(), server) })
	})
}

// Handler is the gateway's HTTP handler.
func (g *Gateway) Handler() http.Handler {
	h := g.cfg.HTTP
	rules := intake.BodyRules{Timeout: h.BodyTimeout, MinRate: h.BodyMinRate, Grace: h.BodyRateGrace}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every route's body is bounded in time, and a refusal decided on the headers is
		// answered without waiting for the body (front/bodyguard.go).
		defer intake.GuardBody(w, r, rules).Release()
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				g.logPanic("http "+r.Method+" "+r.URL.Path, p)
				// Harmless if the answer had begun: the client then sees a cut stream.
				reply.Error(w, http.StatusInternalServerError, wire.CodeInternalError, "Internal error")
			}
		}()
		g.mux.ServeHTTP(w, r)
	})
}

// recovered, deferred, turns a panic in work done for one client message into a log line
// and, where the message has an id, an internal-error answer: a bug must cost one request,
// never the process (a panic in a goroutine ends it).
func (g *Gateway) recovered(where string, id json.RawMessage, answer func([]byte) error) {
	p := recover()
	if p == nil {
		return
	}
	g.logPanic(where, p)
	if answer != nil {
		_ = answer(wire.Error(id, wire.CodeInternalError, "Internal error", nil))
	}
}

func (g *Gateway) logPanic(where string, p any) {
	g.log.Error("panic while handling a client message", "where", where, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
}

// Start begins background work: idle reaping, the store sweep, and replica events.
func (g *Gateway) Start() {
	g.startedAt = time.Now()
	g.replicas.startBus()
	go g.live.sweep(time.Now())
	go g.live.reap()
	g.usage.Snap(time.Now())
	go g.usage.Run(g.ctx)
	go g.calls.RunToolRanks(g.ctx, 0)
}

// Close ends every session and background work.
func (g *Gateway) Close() {
	g.cancel()
	for _, s := range g.live.clear() {
		s.Close()
	}
	g.reg.Instances().CloseInstances()
	g.runners.Close()
	g.calls.ToolRanks().Flush() // the calls counted since the last flush
	g.audit.Close()
	if g.tracing != nil {
		g.tracing.Shutdown(g.log)
	}
}

// allowLists holds the Host and Origin values accepted: the listener's own names (and
// localhost aliases for a loopback listener) plus configured extras.
func allowLists(cfg *config.Config) (map[string]bool, map[string]bool) {
	hosts, origins := map[string]bool{}, map[string]bool{}
	host, port, _ := net.SplitHostPort(cfg.Listen)
	names := []string{host}
	ip := net.ParseIP(host)
	if host == "" || host == "0.0.0.0" || host == "::" || (ip != nil && ip.IsLoopback()) || host == "localhost" {
		names = append(names, "localhost", "127.0.0.1", "::1", "[::1]")
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		h := n
		if strings.Contains(n, ":") && !strings.HasPrefix(n, "[") {
			h = "[" + n + "]"
		}
		hosts[h+":"+port] = true
		origins["http://"+h+":"+port] = true
		origins["https://"+h+":"+port] = true
	}
	for _, h := range cfg.HTTP.AllowedHosts {
		hosts[strings.ToLower(h)] = true
	}
	for _, o := range cfg.HTTP.AllowedOrigins {
		origins[strings.ToLower(strings.TrimRight(o, "/"))] = true
	}
	return hosts, origins
}

// checkOrigin enforces the Host and Origin allow-lists (DNS rebinding protection).
func (gk *gatekeeper) checkOrigin(w http.ResponseWriter, r *http.Request) bool {
	g := gk.g
	if auth.Trusted(r.Context()) {
		return true // the Unix socket: no browser can reach it
	}
	if !g.hosts["*"] && !g.hosts[strings.ToLower(r.Host)] {
		reply.Error(w, http.StatusForbidden, wire.CodeConnection, "Forbidden: Host "+strconv.Quote(r.Host)+" is not allowed")
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && !g.origins["*"] && !g.origins[strings.ToLower(o)] {
		reply.Error(w, http.StatusForbidden, wire.CodeConnection, "Forbidden: Origin "+strconv.Quote(o)+" is not allowed")
		return false
	}
	return true
}

// newSessionID returns 128 bits of randomness as visible ASCII.
func newSessionID() string { return rand.Text() }

// reapEvery is how often reap looks: a quarter of the shortest timeout it enforces, at
// most every 30 s and at least every 250 ms, so a short timeout is kept to within a
// quarter of itself.
func reapEvery(cfg *config.Config) time.Duration {
	d := 30 * time.Second
	for _, t := range []time.Duration{cfg.HTTP.SessionIdle, cfg.HTTP.UnusedSession, cfg.Upstream.IdleTimeout} {
		if t > 0 && t/4 < d {
			d = t / 4
		}
	}
	return max(d, 250*time.Millisecond)
}

// serverChanged tells sessions whose view changed.
func (g *Gateway) serverChanged(server string) {
	all := g.live.all()
	for _, s := range all {
		for _, name := range s.Servers() {
			if name == server {
				s.NotifyIfChanged()
				break
			}
		}
	}
}
