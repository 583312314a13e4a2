package instances

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The registry owns every upstream instance (docs/config.md, "Instance policies"): the
// shared connections it supervises, and the instances it starts or takes from a warm pool
// for an owner (a client session): per_session (ownconn.go), per_agent (agents.go) and
// per_call (here), with the agents' fair shares (shares.go) and the servers'
// max_instances counted here. The gateway asks for a connection with Acquire and tells
// the registry when an owner goes (ReleaseOwner).

// Owner is who the registry starts instances of its own for: a client session. Its
// methods are called without any of the registry's locks held, except Ended.
type Owner interface {
	// InstanceSpec is what instances of server are started with for this owner.
	InstanceSpec(server string) OwnerSpec
	// Ended reports that the owner is gone: nothing more is started for it.
	Ended() bool
	// HandleUpstream receives what an instance of the owner's own (per_session,
	// per_call) sends that is not a response.
	HandleUpstream(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call)
	// HandleShared receives what a per_agent instance (one several owners share) sends;
	// the first owner's is used for the instance's life.
	HandleShared(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call)
	// InstanceCatalog is a re-listed catalogue of the owner's per_session instance (own)
	// or of its agent's per_agent instance.
	InstanceCatalog(server string, cat *Catalog, own bool)
	// InstanceUp and InstanceDown tell that the owner's per_session instance of server
	// started (c, before the first request goes to it) or is down.
	InstanceUp(server string, c *upstream.Conn)
	InstanceDown(server string)
	// InstanceStarted counts an instance started or taken for the owner (any policy).
	InstanceStarted(server string)
}

// OwnerSpec is what an owner's instances of one server are started with.
type OwnerSpec struct {
	Session, Agent string
	// Mode overrides the server's instance policy ("": the server's).
	Mode string
	// URL and Env are the executor's overrides of the server's URL and environment.
	URL string
	Env map[string]string
	// Runner names the executor whose runner starts the owner's stdio instances ("": the
	// gateway's host).
	Runner string
	// ClientCaps and ClientInfo are the owner's client's, offered to its own instances.
	ClientCaps, ClientInfo json.RawMessage
	// Stateless: the owner serves stateless (2026-07-28) requests; its own instances of a
	// server on protocol_version auto are asked for that revision first.
	Stateless bool
	// Subject is whose upstream grants the owner's instances use (the identity's
	// principal): an OAuth server's per-user instances carry that identity's token, and
	// are never shared with another identity.
	Subject string
}

// Instances holds what the registry started or took for owners (Registry.Instances).
type Instances struct {
	h  *Host
	mu sync.Mutex
	// own are the per_session instances of each owner, by server.
	own map[Owner]map[string]*ownConn
	// agents are the per_agent instances (agents.go).
	agents agentSet
	count  sync.Map // server → *atomic.Int64: live instances of owners
	shares instanceShares
	// overflows counts the overflow instances of each stateless owner and server that have
	// not ended (overflow.go); under mu.
	overflows map[overflowKey]int
}

// New makes the instances of owners of the registry h.
func New(h *Host) *Instances {
	m := &Instances{h: h}
	m.agents.m = m
	return m
}

// Count is how many instances of server run for owners (per_session, per_agent,
// per_call), against servers.<name>.max_instances.
func (m *Instances) Count(server string) int64 { return m.counter(server).Load() }

func (m *Instances) counter(server string) *atomic.Int64 {
	if n, ok := m.count.Load(server); ok {
		return n.(*atomic.Int64)
	}
	n, _ := m.count.LoadOrStore(server, new(atomic.Int64))
	return n.(*atomic.Int64)
}

// counted counts c among server's instances until it ends.
func (m *Instances) counted(server string, c *upstream.Conn) {
	n := m.counter(server)
	n.Add(1)
	go func() { <-c.Done(); n.Add(-1) }()
}

// atLimit refuses a start at srv's max_instances.
func (m *Instances) atLimit(srv *Server) error {
	if m.counter(srv.Name).Load() >= int64(srv.Def.MaxInstances) {
		return instanceLimitError(srv.Name, srv.Def.MaxInstances)
	}
	return nil
}

// modeOf is the instance policy o uses for srv: its override, else the server's.
func modeOf(srv *Server, spec *OwnerSpec) string {
	if spec.Mode != "" {
		return spec.Mode
	}
	return srv.Mode
}

// Acquire returns the connection that serves one request of o to server and what to run
// when the request is done: per_call and overflow instances are stopped then. A stateless
// owner's request that its own instance cannot take at once gets an overflow instance
// when one may start (overflow.go).
func (m *Instances) Acquire(ctx context.Context, server string, o Owner) (*upstream.Conn, func(), error) {
	srv := m.h.Server(server)
	if srv == nil {
		return nil, nil, fmt.Errorf("unknown server %q", server)
	}
	spec := o.InstanceSpec(server)
	if modeOf(srv, &spec) == config.ModePerCall {
		c, err := m.perCall(ctx, srv, o, &spec)
		if err != nil {
			return nil, nil, err
		}
		return c, stopAfter(c), nil
	}
	c, own, err := m.conn(ctx, srv, o, &spec)
	if err == nil && own && spec.Stateless && c.Limit != nil && !c.Limit.Free() {
		if oc := m.overflow(ctx, srv, o, &spec); oc != nil {
			return oc, stopAfter(oc), nil
		}
	}
	return c, func() {}, err
}

// stopAfter is what stops an instance started for one request once the request is done:
// off the caller's path, since the answer is written already and the process ends behind it.
func stopAfter(c *upstream.Conn) func() {
	return func() { go c.Close() }
}

// Conn returns the connection that serves server for o beyond one request (a
// subscription, a listen): the shared one, its agent's, or o's own instance, started on
// first use. A per_call server is served by an instance of o's own here.
func (m *Instances) Conn(ctx context.Context, server string, o Owner) (*upstream.Conn, error) {
	srv := m.h.Server(server)
	if srv == nil {
		return nil, fmt.Errorf("unknown server %q", server)
	}
	spec := o.InstanceSpec(server)
	c, _, err := m.conn(ctx, srv, o, &spec)
	return c, err
}

// conn is Conn for a server and spec already looked up; own says the connection is o's
// own per_session instance (ownConn), not a shared connection or its agent's.
func (m *Instances) conn(ctx context.Context, srv *Server, o Owner, spec *OwnerSpec) (c *upstream.Conn, own bool, err error) {
	switch modeOf(srv, spec) {
	case config.ModePerAgent:
		c, err = m.agents.agentConn(ctx, srv, o, spec)
		return c, false, err
	case config.ModeShared:
		c := srv.Shared()
		if c == nil {
			c = srv.WaitShared(ctx)
		}
		if c == nil {
			st, why := srv.State()
			if st == StateDown {
				return nil, false, fmt.Errorf("it is down (%s); mcpgw retries it, and its tools work again once it is back", why)
			}
			return nil, false, fmt.Errorf("%s (%s)", st, why)
		}
		if !ownSession(srv, spec, c) {
			return c, false, nil
		}
	}
	c, err = m.ownConn(ctx, srv, o)
	return c, true, err
}

// ownSession reports whether a stateless owner gets an instance of its own of a server
// whose mode is shared only by default (mode auto, HTTP): when the shared connection
// speaks a session revision, the upstream knows its callers' capabilities only from that
// session's initialize, which offers everything the gateway relays. It would ask a
// stateless caller for what it never declared, and run tools that need what the caller
// lacks instead of refusing them (-32021); a session of the caller's own, initialized with
// its capabilities, lets the upstream decide as it would for the caller itself. An upstream
// of the stateless revision gets the caller's capabilities with each request instead.
func ownSession(srv *Server, spec *OwnerSpec, shared *upstream.Conn) bool {
	return spec.Stateless && !shared.Stateless && spec.Mode == "" && srv.Def.Mode == "auto" &&
		srv.Def.Transport() == config.TransportHTTP
}

// perCall starts a fresh instance for one request, with the owner's own environment,
// client capabilities and handler (as a per_session instance).
func (m *Instances) perCall(ctx context.Context, srv *Server, o Owner, spec *OwnerSpec) (*upstream.Conn, error) {
	if err := m.atLimit(srv); err != nil {
		return nil, err
	}
	release, err := m.takeShare(ctx, srv, spec, false)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	c, err := srv.Spawn(m.h.Ctx, ownerOptions(srv, o, spec), nil)
	if err != nil {
		release()
		m.h.Log.Warn("per-call upstream failed to start", "server", srv.Name, "session", spec.Session, "err", err)
		return nil, err
	}
	releaseWhenDone(c, release)
	srv.ObserveStart(time.Since(start))
	o.InstanceStarted(srv.Name)
	m.counted(srv.Name, c)
	return c, nil
}

// ownerOptions are the dial options of an instance of the owner's own: the server's,
// with the executor's URL and environment overrides, the owner's client capabilities
// and info, and the owner as the receiver of what the upstream sends.
func ownerOptions(srv *Server, o Owner, spec *OwnerSpec) upstream.Options {
	opts := srv.Options()
	if spec.URL != "" {
		opts.URL = spec.URL
	}
	if len(spec.Env) > 0 {
		// Resolution already left out what the server's own env sets, unless the
		// executor's policy lets injection override it: what remains is applied on top.
		env := make(map[string]string, len(opts.Env)+len(spec.Env))
		maps.Copy(env, opts.Env)
		maps.Copy(env, spec.Env)
		opts.Env = env
	}
	opts.Runner = spec.Runner
	if len(spec.ClientCaps) > 0 {
		opts.ClientCaps = spec.ClientCaps
	}
	if len(spec.ClientInfo) > 0 {
		opts.ClientInfo = spec.ClientInfo
	}
	if spec.Stateless {
		opts.ProtocolVersion = srv.Def.UpstreamVersion(true)
	}
	if a := srv.host.Authorizer(srv.Name, spec.Subject, config.AuthPerUser); a != nil {
		opts.Authorizer = a
	}
	opts.Handler = o.HandleUpstream
	return opts
}

// poolable reports whether instances for spec may come from the server's pool: an owner
// whose executor rewrites the server's URL or injects environment needs an instance
// started with them, which no pooled one is; so does a stateless owner, whose instances
// may speak another revision (OwnerSpec.Stateless).
func (spec *OwnerSpec) poolable() bool {
	return spec.URL == "" && len(spec.Env) == 0 && !spec.Stateless && spec.Runner == ""
}

// ReleaseOwner stops o's per_session instances of the servers keep does not admit and
// takes o off their per_agent instances (keep nil: all of them, o ended). A per_agent
// instance whose last owner left is stopped after the server's agent_grace, unless an
// owner of the agent comes back. It returns the servers whose per_session instance of
// o's it stopped.
func (m *Instances) ReleaseOwner(o Owner, keep func(server string) bool) []string {
	stopped := m.releaseOwn(o, keep)
	m.agents.releaseAgents(o, keep)
	return stopped
}

// CloseInstances stops every per_agent instance (the gateway is closing; its owners'
// instances were stopped with them).
func (m *Instances) CloseInstances() { m.agents.closeAgents() }
