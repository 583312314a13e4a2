package instances

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// ownConn is one owner's per_session instance of one server.
type ownConn struct {
	once sync.Once
	conn *upstream.Conn
	err  error
	used atomic.Int64
}

// restartTries bounds how many times an owner's per_session instance that exited is
// brought back before its next call starts one.
const restartTries = 8

// ownConn returns o's per_session instance of srv, started (or taken from the pool) on
// first use and again after it died.
func (m *Instances) ownConn(ctx context.Context, srv *Server, o Owner) (*upstream.Conn, error) {
	server := srv.Name
	for attempt := 0; attempt < 2; attempt++ {
		m.mu.Lock()
		if o.Ended() {
			m.mu.Unlock()
			return nil, errors.New("session ended")
		}
		conns := m.own[o]
		sc := conns[server]
		if sc == nil {
			if err := m.atLimit(srv); err != nil {
				m.mu.Unlock()
				return nil, err
			}
			if conns == nil {
				if m.own == nil {
					m.own = map[Owner]map[string]*ownConn{}
				}
				conns = map[string]*ownConn{}
				m.own[o] = conns
			}
			sc = &ownConn{}
			conns[server] = sc
		}
		m.mu.Unlock()
		sc.once.Do(func() { sc.conn, sc.err = m.spawnOwn(ctx, srv, o) })
		if sc.err != nil {
			m.dropOwn(o, server, sc)
			return nil, sc.err
		}
		select {
		case <-sc.conn.Done():
			// Died since; start a new one.
			m.dropOwn(o, server, sc)
			continue
		default:
		}
		sc.used.Store(time.Now().UnixNano())
		return sc.conn, nil
	}
	return nil, errors.New("instance keeps exiting")
}

// dropOwn forgets sc as o's instance of server, unless another replaced it.
func (m *Instances) dropOwn(o Owner, server string, sc *ownConn) {
	m.mu.Lock()
	if conns := m.own[o]; conns[server] == sc {
		delete(conns, server)
	}
	m.mu.Unlock()
}

// spawnOwn starts o's own instance of srv within its agent's share.
func (m *Instances) spawnOwn(ctx context.Context, srv *Server, o Owner) (*upstream.Conn, error) {
	spec := o.InstanceSpec(srv.Name)
	release, err := m.takeShare(ctx, srv, &spec, srv.PoolFor(config.ModePerSession) != nil && spec.poolable())
	if err != nil {
		return nil, err
	}
	c, err := m.startOwn(srv, o, &spec)
	if err != nil {
		release()
		m.h.Log.Warn("per-session upstream failed to start", "server", srv.Name, "session", spec.Session, "err", err)
		var full *PoolFullError
		if !errors.As(err, &full) {
			// A full pool is not a server that is down: its tools stay listed.
			o.InstanceDown(srv.Name)
		}
		return nil, err
	}
	releaseWhenDone(c, release)
	o.InstanceStarted(srv.Name)
	m.counted(srv.Name, c)
	o.InstanceUp(srv.Name, c)
	m.readOwnCatalog(srv, o, c)
	go m.watchOwn(srv, o, spec.Session, c)
	return c, nil
}

// readOwnCatalog lists what o's new instance serves into o's view before its first
// request: the instance was initialized with o's client's capabilities, and an upstream
// may serve a client without roots, sampling or elicitation fewer tools than the
// registry's catalogue (read with everything the gateway can relay), so that catalogue
// would list tools the instance has not got. On failure the view keeps the registry's
// catalogue, as before the instance started.
func (m *Instances) readOwnCatalog(srv *Server, o Owner, c *upstream.Conn) {
	ctx, cancel := context.WithTimeout(m.h.Ctx, srv.Def.Timeouts.Connect)
	defer cancel()
	cat, err := srv.readCatalog(ctx, c)
	if err != nil {
		m.h.Log.Warn("listing a per-session instance's catalogue failed", "server", srv.Name, "err", err)
		return
	}
	o.InstanceCatalog(srv.Name, cat, true)
}

// AwaitCatalogs waits until each of servers has the catalogue o's lists are to show: a
// server starting for the first time is waited for, and o's own per_session instance of a
// server is started (ownConn) and its catalogue read. The servers are waited for at once,
// each up to its connect timeout (or until ctx ends); one that fails or is slower leaves
// o's view as it is (the registry's catalogue, or nothing while it starts), and o is told
// when that changes.
func (m *Instances) AwaitCatalogs(ctx context.Context, o Owner, servers []string) {
	var wg sync.WaitGroup
	for _, name := range servers {
		srv := m.h.Server(name)
		if srv == nil {
			continue // a plugin
		}
		spec := o.InstanceSpec(name)
		own := modeOf(srv, &spec) == config.ModePerSession
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, srv.Def.Timeouts.Connect)
			defer cancel()
			if srv.WaitStarted(ctx) && own && srv.Catalog() != nil {
				_, _ = m.ownConn(ctx, srv, o)
			}
		}()
	}
	wg.Wait()
}

// AwaitStarted waits until each of servers has started for the first time (each up to its
// connect timeout, or until ctx ends), without starting anyone's own instance: what a
// call by a name its session's view does not hold waits for (a resumed client may call
// before it lists), so that a call does not start instances of servers it does not name.
func (m *Instances) AwaitStarted(ctx context.Context, servers []string) {
	var wg sync.WaitGroup
	for _, name := range servers {
		srv := m.h.Server(name)
		if srv == nil {
			continue // a plugin
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, srv.Def.Timeouts.Connect)
			defer cancel()
			srv.WaitStarted(ctx)
		}()
	}
	wg.Wait()
}

// startOwn starts (or takes from the pool) a per_session instance for o.
func (m *Instances) startOwn(srv *Server, o Owner, spec *OwnerSpec) (*upstream.Conn, error) {
	onCatalog := func(cat *Catalog) { o.InstanceCatalog(srv.Name, cat, true) }
	if p := srv.PoolFor(config.ModePerSession); p != nil && spec.poolable() {
		in, err := p.Take(m.h.Ctx)
		if err != nil {
			return nil, err
		}
		in.Bind(o.HandleUpstream, onCatalog)
		return in.Conn, nil
	}
	start := time.Now()
	c, err := srv.Spawn(m.h.Ctx, ownerOptions(srv, o, spec), onCatalog)
	if err == nil {
		srv.ObserveStart(time.Since(start))
	}
	return c, err
}

// watchOwn notices a per_session instance that exits while its owner lives: its tools
// leave the owner's view and the instance is brought back in the background (paced by
// the registry's back-off), so they return without waiting for a call.
func (m *Instances) watchOwn(srv *Server, o Owner, session string, c *upstream.Conn) {
	<-c.Done()
	if o.Ended() {
		return
	}
	var re *upstream.RestartError
	if errors.As(c.Err(), &re) {
		// Ended by the gateway over one bad message: the tools stay listed, and the next
		// call starts a fresh instance.
		m.h.Log.Info("per-session upstream restarted", "server", srv.Name, "session", session, "why", re)
		m.restarted(srv.Name)
		return
	}
	if errors.Is(c.Err(), upstream.ErrClosed) {
		return
	}
	m.h.Log.Warn("per-session upstream exited", "server", srv.Name, "session", session, "err", c.Err())
	m.restarted(srv.Name)
	o.InstanceDown(srv.Name)
	b := newBackoff(m.h.Timing)
	for range restartTries {
		if !b.sleep(m.h.Ctx) || o.Ended() {
			return
		}
		if _, err := m.Conn(m.h.Ctx, srv.Name, o); err == nil {
			return
		}
	}
}

// restarted tells OnState of an instance restarted (for the restarts metric).
func (m *Instances) restarted(server string) {
	if m.h.OnState != nil {
		m.h.OnState(server, "restart")
	}
}

// releaseOwn stops o's per_session instances of the servers keep does not admit (nil:
// all, o ended: an instance still starting is stopped once its start ends).
func (m *Instances) releaseOwn(o Owner, keep func(server string) bool) (stopped []string) {
	m.mu.Lock()
	conns := m.own[o]
	var stop []*ownConn
	for name, sc := range conns {
		if keep == nil || !keep(name) {
			stop = append(stop, sc)
			stopped = append(stopped, name)
			delete(conns, name)
		}
	}
	if keep == nil || len(conns) == 0 {
		delete(m.own, o)
	}
	m.mu.Unlock()
	for _, sc := range stop {
		if keep != nil {
			if sc.conn != nil {
				_ = sc.conn.Close()
			}
			continue
		}
		// once waits for an instance still starting (the owner ended during its first
		// call): it is stopped too, not left running with no owner to stop it.
		go func() {
			sc.once.Do(func() { sc.err = errors.New("session ended") })
			if sc.conn != nil {
				_ = sc.conn.Close()
			}
		}()
	}
	return stopped
}

// OwnConns are o's per_session instances that started.
func (m *Instances) OwnConns(o Owner) []*upstream.Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	conns := m.own[o]
	out := make([]*upstream.Conn, 0, len(conns))
	for _, sc := range conns {
		if sc.conn != nil {
			out = append(out, sc.conn)
		}
	}
	return out
}

// StopIdle stops o's per_session instances with no call in flight and none for idle.
func (m *Instances) StopIdle(o Owner, now time.Time, idle time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	conns := m.own[o]
	for name, sc := range conns {
		if sc.conn != nil && len(sc.conn.InFlight()) == 0 && now.Sub(time.Unix(0, sc.used.Load())) > idle {
			delete(conns, name)
			go sc.conn.Close()
		}
	}
}

// StopOwnOf stops every owner's per_session instance of server that started (a restart
// of the server): the owner's next call starts another. One still starting is new already.
func (m *Instances) StopOwnOf(server string) {
	m.mu.Lock()
	var stop []*upstream.Conn
	for _, conns := range m.own {
		if sc := conns[server]; sc != nil && sc.conn != nil {
			stop = append(stop, sc.conn)
		}
	}
	m.mu.Unlock()
	for _, c := range stop {
		_ = c.Close()
	}
}
