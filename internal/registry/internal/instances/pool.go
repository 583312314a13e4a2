package instances

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Pool keeps a server's instances started and initialized before a session asks for one
// (servers.<name>.pool, docs/config.md "Warm pools"). A session takes a ready instance
// and owns it from then on: it is never given back (it holds that session's state), and
// the pool starts another in the background. The pool never has more than max instances
// of the server in use, ready and starting together; a take at max waits for one to end
// (up to the server's connect timeout) and then fails saying so.
//
// Pooled instances are initialized before their client is known, with the gateway's own
// client capabilities and clientInfo (as shared instances are): a server that shapes
// itself on its client's capabilities at start should not be pooled.
type Pool struct {
	s    *Server
	warm int
	max  int
	idle time.Duration

	mu sync.Mutex
	// ready are the started, unused instances, oldest first.
	ready []*Instance
	// refilling are instances the pool is starting for itself; direct those a take at an
	// empty pool is starting for its caller.
	refilling, direct int
	inUse             int
	// waiters are takes waiting at max, signalled when an instance ends.
	waiters  []chan struct{}
	lastTake time.Time
	// drained: the pool went idle and stopped its ready instances; the next take refills.
	drained  bool
	failures int
	lastErr  string
	retryAt  time.Time
	stopped  bool
	kick     chan struct{}
	// starts are the pool's own starts under way: run waits for them when it ends, so no
	// instance is left starting after the registry closed.
	starts sync.WaitGroup
}

// Instance is one pooled instance. Until a session binds it, what the upstream sends
// goes to the registry's handler (as for a shared instance).
type Instance struct {
	Conn    *upstream.Conn
	started time.Time
	handler atomic.Pointer[upstream.Handler]
	onCat   atomic.Pointer[func(*Catalog)]
}

// Bind makes h receive the instance's messages and onCatalog its re-read catalogue
// after a list_changed (either may be nil).
func (in *Instance) Bind(h upstream.Handler, onCatalog func(*Catalog)) {
	if h != nil {
		in.handler.Store(&h)
	}
	if onCatalog != nil {
		in.onCat.Store(&onCatalog)
	}
}

// PoolStats are a pool's counts, for metrics and the admin API.
type PoolStats struct {
	Warm     int    `json:"warm"`
	Max      int    `json:"max"`
	Ready    int    `json:"ready"`
	InUse    int    `json:"in_use"`
	Starting int    `json:"starting"`
	Error    string `json:"error,omitempty"`
}

// PoolFullError is a take that found the pool at max and no instance ended in time.
type PoolFullError struct {
	Server string
	Max    int
	Waited time.Duration
}

func (e *PoolFullError) Error() string {
	return fmt.Sprintf("server %q has all %d pooled instances in use (pool.max); none came free within %s", e.Server, e.Max, e.Waited.Round(time.Millisecond))
}

// ObserveStart records an instance start (the pool's, or a session's own instance's): the
// registry's OnInstanceStart, when set, is told how long it took to start and initialize
// (the gateway's start time histogram).
func (s *Server) ObserveStart(d time.Duration) {
	if f := s.host.OnInstanceStart; f != nil {
		f(s.Name, d)
	}
}

func newPool(s *Server) *Pool {
	d := s.Def
	p := &Pool{s: s, warm: d.Pool.Warm, max: d.Pool.Max, idle: d.Pool.IdleTimeout, kick: make(chan struct{}, 1), lastTake: time.Now()}
	if p.max <= 0 {
		p.max = d.MaxInstances
	}
	if p.max < p.warm {
		p.max = p.warm
	}
	return p
}

// Pool returns the server's warm pool (nil when it has none).
func (s *Server) Pool() *Pool { return s.pool }

// Stats reports the pool's counts.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Warm: p.warm, Max: p.max, Ready: len(p.ready), InUse: p.inUse, Starting: p.refilling + p.direct, Error: p.lastErr}
}

func (p *Pool) total() int { return len(p.ready) + p.refilling + p.direct + p.inUse }

func (p *Pool) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run refills the pool until the server stops.
func (p *Pool) Run() {
	every := 30 * time.Second
	if p.idle > 0 && p.idle/4 < every {
		every = max(p.idle/4, 50*time.Millisecond)
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	p.poke()
	for {
		select {
		case <-p.s.ctx.Done():
			p.stop()
			p.starts.Wait()
			return
		case <-p.kick:
		case <-tick.C:
			p.reapIdle()
		}
		p.refill()
	}
}

// refill starts instances until warm are ready or starting (within max).
func (p *Pool) refill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || p.drained {
		return
	}
	if wait := time.Until(p.retryAt); wait > 0 {
		time.AfterFunc(wait, p.poke)
		return
	}
	for len(p.ready)+p.refilling < p.warm && p.total() < p.max {
		p.refilling++
		p.starts.Add(1)
		go func() {
			defer p.starts.Done()
			p.startOne()
		}()
	}
}

// startOne starts one instance for the pool.
func (p *Pool) startOne() {
	in, err := p.dialGated()
	p.mu.Lock()
	p.refilling--
	if err != nil {
		p.failures++
		p.lastErr = err.Error()
		t := p.s.host.Timing
		backoff := min(t.BackoffMin<<min(p.failures-1, 16), t.BackoffMax)
		// Jitter, as for shared servers: pools of many gateways do not retry in step.
		p.retryAt = time.Now().Add(backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1)))
		stopped := p.stopped
		p.mu.Unlock()
		if !stopped {
			p.s.host.Log.Warn("pooled instance failed to start", "server", p.s.Name, "err", err, "retry_in", time.Until(p.retryAt).Round(time.Millisecond))
		}
		p.poke()
		return
	}
	p.failures, p.lastErr = 0, ""
	if p.stopped || p.drained {
		p.mu.Unlock()
		_ = in.Conn.Close()
		return
	}
	p.ready = append(p.ready, in)
	p.signal()
	p.mu.Unlock()
	go p.watchReady(in)
}

// dialGated is dial within one of the registry's start slots (startGate): refills are
// the pool's own starts, which no caller waits for.
func (p *Pool) dialGated() (*Instance, error) {
	release, err := p.s.host.Gate.enter(p.s.ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return p.dial()
}

// watchReady replaces a ready instance that dies before any session took it.
func (p *Pool) watchReady(in *Instance) {
	<-in.Conn.Done()
	p.mu.Lock()
	for i, r := range p.ready {
		if r == in {
			p.ready = append(p.ready[:i], p.ready[i+1:]...)
			if !p.stopped && !p.drained {
				p.s.host.Log.Warn("pooled instance exited while ready; replacing it", "server", p.s.Name, "err", in.Conn.Err())
			}
			break
		}
	}
	p.mu.Unlock()
	p.poke()
}

// watchInUse frees the instance's place under max when it ends.
func (p *Pool) watchInUse(in *Instance) {
	<-in.Conn.Done()
	p.mu.Lock()
	p.inUse--
	p.signal()
	p.mu.Unlock()
	p.poke()
}

// signal wakes every take waiting at max (under mu).
func (p *Pool) signal() {
	for _, w := range p.waiters {
		close(w)
	}
	p.waiters = nil
}

// dial starts and initializes one instance with the gateway's own client capabilities.
func (p *Pool) dial() (*Instance, error) {
	in := &Instance{}
	o := p.s.Options()
	var rl relister
	o.Handler = func(c *upstream.Conn, m *wire.Msg, raw []byte, rel *upstream.Call) {
		switch m.Method {
		case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
			if f := in.onCat.Load(); f != nil {
				rl.notify(p.s.host.Ctx, p.s.host.Config().Upstream.RelistInterval, func() {
					ctx, cancel := context.WithTimeout(p.s.host.Ctx, p.s.Def.Timeouts.Connect)
					defer cancel()
					cat, err := p.s.readCatalog(ctx, c)
					if err != nil {
						p.s.host.Log.Warn("re-listing after list_changed failed", "server", p.s.Name, "err", err)
						return
					}
					(*f)(cat)
				})
			}
			return
		}
		if h := in.handler.Load(); h != nil {
			(*h)(c, m, raw, rel)
		} else if h := p.s.host.Handler(); h != nil {
			h(c, m, raw, rel)
		}
	}
	start := time.Now()
	c, err := p.s.host.Dialer.Dial(p.s.ctx, o)
	if err != nil {
		return nil, err
	}
	in.Conn, in.started = c, time.Now()
	p.s.ObserveStart(time.Since(start))
	return in, nil
}

// ErrPoolStopped is a take from the pool of a server that was replaced or removed.
var ErrPoolStopped = errors.New("the server's pool has stopped")

// Take gives the caller an instance of its own: a ready one if there is one, else one
// started for it (when under max), else the first to come free within the server's
// connect timeout. The instance is the caller's to close.
func (p *Pool) Take(ctx context.Context) (*Instance, error) {
	waitFrom := time.Now()
	deadline := waitFrom.Add(p.s.Def.Timeouts.Connect)
	for {
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return nil, ErrPoolStopped
		}
		p.lastTake = time.Now()
		if p.drained {
			p.drained = false
		}
		if n := len(p.ready); n > 0 {
			in := p.ready[0]
			p.ready = p.ready[1:]
			select {
			case <-in.Conn.Done():
				// Died just now: watchReady already counts it gone or will not find it.
				p.mu.Unlock()
				continue
			default:
			}
			p.inUse++
			p.mu.Unlock()
			p.poke()
			go p.watchInUse(in)
			return in, nil
		}
		if p.total() < p.max {
			p.direct++
			p.mu.Unlock()
			p.poke()
			in, err := p.dial()
			p.mu.Lock()
			p.direct--
			if err == nil {
				p.inUse++
			}
			p.signal()
			p.mu.Unlock()
			if err != nil {
				return nil, err
			}
			go p.watchInUse(in)
			return in, nil
		}
		w := make(chan struct{})
		p.waiters = append(p.waiters, w)
		p.mu.Unlock()
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil, &PoolFullError{Server: p.s.Name, Max: p.max, Waited: time.Since(waitFrom)}
		}
		t := time.NewTimer(wait)
		select {
		case <-w:
			t.Stop()
		case <-t.C:
			return nil, &PoolFullError{Server: p.s.Name, Max: p.max, Waited: time.Since(waitFrom)}
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// reapIdle stops the ready instances of a pool no session took from for its idle
// timeout; the next take refills it.
func (p *Pool) reapIdle() {
	p.mu.Lock()
	if p.idle <= 0 || p.drained || time.Since(p.lastTake) < p.idle || len(p.ready) == 0 {
		p.mu.Unlock()
		return
	}
	p.drained = true
	idle := p.ready
	p.ready = nil
	p.mu.Unlock()
	p.s.host.Log.Info("pool idle: ready instances stopped until the next session", "server", p.s.Name, "instances", len(idle))
	for _, in := range idle {
		_ = in.Conn.Close()
	}
}

// stop closes the ready instances; those in use stay with their sessions.
func (p *Pool) stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	ready := p.ready
	p.ready = nil
	p.signal()
	p.mu.Unlock()
	for _, in := range ready {
		_ = in.Conn.Close()
	}
}

// usesPool reports whether mode (a session's resolved mode for the server) takes its
// instances from a pool.
func usesPool(d *config.ServerDef, mode string) bool {
	return d.Pooled() && (mode == config.ModePerSession || mode == config.ModePerAgent)
}

// PoolFor returns the pool a session with the given mode for this server takes from, or
// nil when it starts its own instances.
func (s *Server) PoolFor(mode string) *Pool {
	if s.pool == nil || !usesPool(s.Def, mode) {
		return nil
	}
	return s.pool
}
