// Package connshare shares the gateway's HTTP connections among the sources that open
// them: no one address (on loopback, no one local user) holds more than its share, and
// the gateway's own user and callers that passed authentication keep a reserve.
package connshare

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Every open connection holds buffers and a goroutine, so http.max_connections caps them.
// A cap alone is a lock: whoever opens that many connections and sends nothing (any
// local user, anyone on the network) keeps everyone else out, the gateway's own user
// included, and a listener that waits for a free slot before it accepts lets the kernel
// queue the owner's connection behind theirs. So the cap is shared (docs/decisions.md):
//
//   - a source (an address; an IPv6 /64; on loopback on Linux, the peer's user) holds
//     at most Shares.PerSource connections;
//   - connections not yet admitted hold at most Max-Reserve together: the Reserve is for
//     the gateway's own user on loopback, and for connections that passed authentication
//     (Admit), which move out of the unadmitted count;
//   - when the unadmitted pool is full, a new connection from a source holding at least
//     two fewer of it than the source holding the most takes the place of that source's
//     oldest unadmitted connection, which is closed: a few sources that fill the pool
//     with connections that never authenticate do not keep out a caller who would (its
//     credential is in headers not yet read), nor another source;
//   - a connection past its source's share, or past the pool it draws from, is accepted
//     and at once answered 503 and closed: Accept never waits.

// Shares are the numbers of a Listener, derived from http.max_connections (For).
type Shares struct {
	// Max is the most connections open at once (http.max_connections).
	Max int
	// Reserve is the part of Max that only the gateway's own user and admitted
	// connections may use.
	Reserve int
	// PerSource is the most connections one source may hold (the gateway's own user on
	// loopback is not held to it).
	PerSource int
}

// For derives the shares of max connections: an eighth (at least 1, when max is 2 or
// more) is reserved, and one source may hold a quarter of the rest (at least 1).
func For(n int) Shares {
	s := Shares{Max: n}
	if n >= 2 {
		s.Reserve = (n + 7) / 8
	}
	s.PerSource = max(1, (n-s.Reserve+3)/4)
	return s
}

// Listener is a net.Listener that keeps to its Shares.
type Listener struct {
	net.Listener
	shares Shares
	// ownUID is the gateway's user (-1: none known; then no connection is the owner's).
	ownUID int
	// peerUID names the user at the far end of a loopback connection
	// (peercred.TCPPeerUID); nil asks nothing and takes loopback for one source.
	peerUID func(remote, local *net.TCPAddr) (int, error)

	mu         sync.Mutex
	total      int
	unadmitted int
	bySource   map[string]int
	// waiting is each source's unadmitted connections, oldest first.
	waiting map[string][]*Conn
	refused atomic.Int64
}

// Options configure a Listener; the zero value of each field is documented there.
type Options struct {
	// OwnUID is the gateway's own user (-1 where the OS has none: no connection is then
	// known to be the owner's).
	OwnUID int
	// PeerUID names the user of a loopback peer (peercred.TCPPeerUID); nil takes every
	// loopback connection for one source.
	PeerUID func(remote, local *net.TCPAddr) (int, error)
}

// Listen wraps l to keep to shares.
func Listen(l net.Listener, shares Shares, o Options) *Listener {
	return &Listener{Listener: l, shares: shares, ownUID: o.OwnUID, peerUID: o.PeerUID, bySource: map[string]int{}, waiting: map[string][]*Conn{}}
}

// Refused is how many connections the listener answered 503 and closed.
func (l *Listener) Refused() int64 { return l.refused.Load() }

// Accept returns the next connection within its source's share and its pool; the others
// are answered 503 and closed here, so a full listener never keeps a new caller waiting.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		sc := l.classify(c)
		why, evicted := l.take(sc)
		if evicted != nil {
			_ = evicted.Conn.Close() // its server goroutine's read ends; its place is counted out
		}
		if why != "" {
			l.refuse(c, why)
			continue
		}
		return sc, nil
	}
}

// classify names c's source and whether it is the gateway's own user's.
func (l *Listener) classify(c net.Conn) *Conn {
	sc := &Conn{Conn: c, l: l, uid: -1}
	ra, ok1 := c.RemoteAddr().(*net.TCPAddr)
	la, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		sc.source = c.RemoteAddr().String()
		return sc
	}
	addr, _ := netip.AddrFromSlice(ra.IP)
	addr = addr.Unmap()
	switch {
	case addr.IsLoopback():
		sc.source = "loopback"
		if l.peerUID != nil {
			if uid, err := l.peerUID(ra, la); err == nil {
				sc.uid, sc.uidKnown = uid, true
				sc.source = "uid:" + strconv.Itoa(uid)
				sc.owner = l.ownUID >= 0 && uid == l.ownUID
			}
		}
	case addr.Is6():
		// One host has a /64 to itself: its addresses are one source.
		p, _ := addr.Prefix(64)
		sc.source = p.String()
	default:
		sc.source = addr.String()
	}
	return sc
}

// take counts c in, or says why not; evicted, when not nil, is a connection whose place
// c took, counted out already, for the caller to close.
func (l *Listener) take(c *Conn) (why string, evicted *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.shares
	switch {
	case l.total >= s.Max:
		return "the gateway holds http.max_connections (" + strconv.Itoa(s.Max) + ") connections", nil
	case c.owner:
		// The gateway's own user: the whole of Max, no share.
	case l.bySource[c.source] >= s.PerSource:
		return "this source holds its share of http.max_connections (" + strconv.Itoa(s.PerSource) + " of " + strconv.Itoa(s.Max) + ")", nil
	case l.unadmitted >= s.Max-s.Reserve:
		if evicted = l.evictFor(c.source); evicted == nil {
			return "connections not yet authenticated hold their part of http.max_connections (" + strconv.Itoa(s.Max-s.Reserve) + " of " + strconv.Itoa(s.Max) + ")", nil
		}
	}
	l.total++
	if c.owner {
		c.admitted.Store(true)
	} else {
		l.bySource[c.source]++
		l.unadmitted++
		l.waiting[c.source] = append(l.waiting[c.source], c)
	}
	return "", evicted
}

// evictFor counts out, and returns, the oldest unadmitted connection of the source that
// holds the most of them, when that is at least two more than source holds (so two
// sources never take places from each other in turn); nil when there is none. Under l.mu.
func (l *Listener) evictFor(source string) *Conn {
	most, n := "", 0
	for src, w := range l.waiting {
		if len(w) > n {
			most, n = src, len(w)
		}
	}
	if n < len(l.waiting[source])+2 {
		return nil
	}
	v := l.waiting[most][0]
	l.countOut(v)
	return v
}

// refuse answers c 503 and closes it. The answer is small enough for a new socket's
// buffer; the write deadline only guards against the unexpected.
func (l *Listener) refuse(c net.Conn, why string) {
	l.refused.Add(1)
	msg := "mcpgw: connection refused: " + why + "; close idle connections or raise http.max_connections\n"
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
		strconv.Itoa(len(msg)) + "\r\n\r\n" + msg))
	_ = c.Close()
}

// admit moves c from the unadmitted pool to the reserve's.
func (l *Listener) admit(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed || c.admitted.Load() {
		return
	}
	c.admitted.Store(true)
	l.unadmitted--
	l.unwait(c)
}

// unwait takes c out of its source's waiting list. Under l.mu.
func (l *Listener) unwait(c *Conn) {
	w := l.waiting[c.source]
	for i, x := range w {
		if x == c {
			w = append(w[:i], w[i+1:]...)
			break
		}
	}
	if len(w) == 0 {
		delete(l.waiting, c.source)
	} else {
		l.waiting[c.source] = w
	}
}

// release counts c out, unless it was already (evicted).
func (l *Listener) release(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.closed {
		l.countOut(c)
	}
}

// countOut gives c's place back. Under l.mu.
func (l *Listener) countOut(c *Conn) {
	c.closed = true
	l.total--
	if c.owner {
		return
	}
	if n := l.bySource[c.source] - 1; n > 0 {
		l.bySource[c.source] = n
	} else {
		delete(l.bySource, c.source)
	}
	if !c.admitted.Load() {
		l.unadmitted--
		l.unwait(c)
	}
}

// Conn is a connection of a Listener.
type Conn struct {
	net.Conn
	l        *Listener
	source   string
	uid      int
	uidKnown bool
	owner    bool
	admitted atomic.Bool // written under l.mu; read without it on the fast path
	once     sync.Once
	closed   bool // under l.mu
}

// PeerUID is the user at the far end of a loopback connection, as the listener asked the
// kernel once (false: not asked, or not known).
func (c *Conn) PeerUID() (int, bool) { return c.uid, c.uidKnown }

// Close closes the connection and gives its place back.
func (c *Conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

type connKey struct{}

// ConnContext is an http.Server ConnContext: it lets Admit find the request's connection.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, connKey{}, sc)
	}
	return ctx
}

// Admit marks the connection of a request whose caller passed authentication (ctx is
// the request's context): it leaves the unadmitted pool, and draws on the reserve.
func Admit(ctx context.Context) {
	sc, ok := ctx.Value(connKey{}).(*Conn)
	if !ok || sc.admitted.Load() {
		return
	}
	sc.l.admit(sc)
}
