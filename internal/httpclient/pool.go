// Package h1 is the gateway's own HTTP/1.1 client for upstream requests: pooled keep-alive
// connections, written and read on the caller's goroutine, with no allocation per request.
package httpclient

import (
	"bufio"
	"net"
	"sync"
	"syscall"
	"time"
)

// Every forwarded call is one POST upstream, so this client, not net/http's, carries them
// (docs/decisions.md, "Upstream POSTs"). The caller's goroutine writes the request and
// reads the answer itself, on a pooled keep-alive connection: no transport goroutines to
// hand the request and the answer over (two wake-ups per call less), no request object,
// header map or header clone per call. It knows HTTP only: what the request carries is
// its caller's business.

// Pool holds idle keep-alive connections by endpoint key (scheme and address, and the
// TLS settings and proxy they were made with). Its sizes and timings are fields, zero
// meaning the default, set by whoever makes the pool (a test, to shorten them).
type Pool struct {
	// MaxIdlePerHost bounds the idle connections kept per key (0: 512).
	MaxIdlePerHost int
	// IdleTimeout closes a connection idle for longer, whether or not another request
	// comes (0: 90 s, net/http's default as well).
	IdleTimeout time.Duration
	// CheckAfter: a connection idle for longer is checked (a peek) before reuse, since
	// servers close idle connections after their own timeout, Node's after 5 s (0: 500 ms).
	CheckAfter time.Duration

	mu    sync.Mutex
	idle  map[string][]*Conn // by key, the longest idle first
	reap  *time.Timer        // closes connections that idled too long; made on the first put
	armed bool               // reap is set to fire
}

const (
	defaultMaxIdlePerHost = 512
	defaultIdleTimeout    = 90 * time.Second
	defaultCheckAfter     = 500 * time.Millisecond

	// maxHeaderBytes bounds a response head, with the interim (1xx) heads before it.
	maxHeaderBytes = 1 << 20
	// maxInterim bounds the interim (1xx) answers before the final one.
	maxInterim = 16
	// maxChunkLine bounds a chunk-size line with its extensions and CRLF, and
	// maxTrailerBytes the trailer section, as net/http's 4 KiB read buffer does.
	maxChunkLine    = 4096
	maxTrailerBytes = 4096
	// maxChunkOverhead bounds what chunk lines carry beyond their data (sizes, extensions,
	// CRLFs), counted as net/http counts it: 16 bytes per chunk and twice the chunk's data
	// are free.
	maxChunkOverhead = 16 << 10
)

func (p *Pool) idleTimeoutOr() time.Duration {
	if p.IdleTimeout > 0 {
		return p.IdleTimeout
	}
	return defaultIdleTimeout
}

type Conn struct {
	nc   net.Conn
	br   *bufio.Reader
	key  string
	used time.Time

	// The liveness peek (alive): the TCP socket, and what the peek needs, made once.
	raw     syscall.RawConn
	peekFn  func(uintptr) bool
	peekOK  bool
	peekBuf [1]byte
	// busy: the answer may be busy-polled for (Waiter), since another process serves it
	// (not this one, not through a proxy).
	busy bool
}

// Close closes the connection (one a Tracker holds for a request that is abandoned).
func (c *Conn) Close() error { return c.nc.Close() }

// Pollable reports whether a Waiter may poll c for its answer: another process serves it,
// directly, and c has a socket to peek at.
func (c *Conn) Pollable() bool { return c.busy && c.raw != nil }

// Buffered is how many bytes of the answer have been read from the socket and not used.
func (c *Conn) Buffered() int { return c.br.Buffered() }

// Readable peeks at c's socket without blocking: true when there is something to read
// (the answer, its end, an error). It allocates nothing.
func (c *Conn) Readable() bool {
	c.peekOK = false
	return c.raw.Read(c.peekFn) != nil || !c.peekOK
}

// CloseIdle closes the pool's idle connections (an in-process server's pool, when it
// stops).
func (p *Pool) CloseIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	if p.reap != nil {
		p.reap.Stop()
		p.armed = false
	}
	p.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			c.nc.Close()
		}
	}
}

// IdleCount is the number of idle connections the pool holds.
func (p *Pool) IdleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, list := range p.idle {
		n += len(list)
	}
	return n
}

// get takes the most recently used idle connection of key. Connections idle for longer
// than checkAfter, or all when checkAlways, are peeked first.
func (p *Pool) get(key string, checkAlways bool) *Conn {
	now := time.Now()
	idleTimeout, checkAfter := p.idleTimeoutOr(), p.CheckAfter
	if checkAfter <= 0 {
		checkAfter = defaultCheckAfter
	}
	for {
		p.mu.Lock()
		list := p.idle[key]
		if len(list) == 0 {
			p.mu.Unlock()
			return nil
		}
		c := list[len(list)-1]
		list[len(list)-1] = nil
		p.idle[key] = list[:len(list)-1]
		p.mu.Unlock()
		// One idle past idleTimeout is closed even if the reaper has not come round yet.
		if idle := now.Sub(c.used); idle < idleTimeout && (idle < checkAfter && !checkAlways || c.alive()) {
			return c
		}
		c.nc.Close()
	}
}

func (p *Pool) put(c *Conn) {
	c.used = time.Now()
	maxIdle := p.MaxIdlePerHost
	if maxIdle <= 0 {
		maxIdle = defaultMaxIdlePerHost
	}
	p.mu.Lock()
	list := p.idle[c.key]
	if len(list) >= maxIdle {
		p.mu.Unlock()
		c.nc.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*Conn{}
	}
	p.idle[c.key] = append(list, c)
	if !p.armed {
		p.armed = true
		if p.reap == nil {
			p.reap = time.AfterFunc(p.idleTimeoutOr(), p.reapIdle)
		} else {
			p.reap.Reset(p.idleTimeoutOr())
		}
	}
	p.mu.Unlock()
}

// reapIdle closes the connections that have idled for idleTimeout, and sets itself to run
// again when the next one will have, while any are left.
func (p *Pool) reapIdle() {
	idleTimeout := p.idleTimeoutOr()
	now := time.Now()
	var stale []*Conn
	var next time.Duration
	p.mu.Lock()
	for key, list := range p.idle {
		n := 0
		for n < len(list) && now.Sub(list[n].used) >= idleTimeout {
			n++
		}
		if n == len(list) {
			stale = append(stale, list...)
			delete(p.idle, key)
			continue
		}
		if n > 0 {
			stale = append(stale, list[:n]...)
			m := copy(list, list[n:])
			clear(list[m:])
			list = list[:m]
			p.idle[key] = list
		}
		if wait := idleTimeout - now.Sub(list[0].used); next == 0 || wait < next {
			next = wait
		}
	}
	if next > 0 {
		p.reap.Reset(next)
	} else {
		p.armed = false
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.nc.Close()
	}
}

// alive peeks at an idle connection without blocking: a connection the server has closed
// reads EOF, one it has written to unasked is out of step; both are not reused. The peek
// is one non-blocking recv on the socket, allocating nothing.
func (c *Conn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	if c.raw == nil {
		return true
	}
	c.peekOK = false
	if err := c.raw.Read(c.peekFn); err != nil {
		return false
	}
	return c.peekOK
}

// newConn wraps a connection made over tcp (the socket, under any TLS).
func newConn(nc, tcp net.Conn, key string) *Conn {
	c := &Conn{nc: nc, br: bufio.NewReaderSize(nc, 16<<10), key: key}
	if sc, ok := tcp.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw, c.peekFn = raw, c.peek
		}
	}
	return c
}
