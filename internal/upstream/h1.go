package upstream

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The POSTs of streamable HTTP upstreams, every call's hot path, go through a small
// HTTP/1.1 client of the gateway's own instead of net/http's (docs/decisions.md, "Upstream
// POSTs"). The caller's goroutine writes the request and reads the answer itself, on a
// pooled keep-alive connection: no transport goroutines to hand the request and the answer
// over (two wake-ups per call less), no request object, header map or header clone per
// call. GET streams and DELETE stay on net/http, where their cost does not matter.

// h1Pool holds idle keep-alive connections by endpoint key (scheme and address, and the
// TLS settings and proxy they were made with). Its sizes and timings are fields, zero
// meaning the default, set by whoever makes the pool (a test, to shorten them).
type h1Pool struct {
	// maxIdlePerHost bounds the idle connections kept per key (0: 512).
	maxIdlePerHost int
	// idleTimeout closes a connection idle for longer, whether or not another request
	// comes (0: 90 s, net/http's default as well).
	idleTimeout time.Duration
	// checkAfter: a connection idle for longer is checked (a peek) before reuse, since
	// servers close idle connections after their own timeout, Node's after 5 s (0: 500 ms).
	checkAfter time.Duration

	mu    sync.Mutex
	idle  map[string][]*h1Conn // by key, the longest idle first
	reap  *time.Timer          // closes connections that idled too long; made on the first put
	armed bool                 // reap is set to fire
}

const (
	h1DefaultMaxIdlePerHost = 512
	h1DefaultIdleTimeout    = 90 * time.Second
	h1DefaultCheckAfter     = 500 * time.Millisecond

	// h1MaxHeaderBytes bounds a response head, with the interim (1xx) heads before it.
	h1MaxHeaderBytes = 1 << 20
	// h1MaxInterim bounds the interim (1xx) answers before the final one.
	h1MaxInterim = 16
	// h1MaxChunkLine bounds a chunk-size line with its extensions and CRLF, and
	// h1MaxTrailerBytes the trailer section, as net/http's 4 KiB read buffer does.
	h1MaxChunkLine    = 4096
	h1MaxTrailerBytes = 4096
	// h1MaxChunkOverhead bounds what chunk lines carry beyond their data (sizes, extensions,
	// CRLFs), counted as net/http counts it: 16 bytes per chunk and twice the chunk's data
	// are free.
	h1MaxChunkOverhead = 16 << 10
)

func (p *h1Pool) idleTimeoutOr() time.Duration {
	if p.idleTimeout > 0 {
		return p.idleTimeout
	}
	return h1DefaultIdleTimeout
}

type h1Conn struct {
	nc   net.Conn
	br   *bufio.Reader
	key  string
	used time.Time

	// The liveness peek (alive): the TCP socket, and what the peek needs, made once.
	raw     syscall.RawConn
	peekFn  func(uintptr) bool
	peekOK  bool
	peekBuf [1]byte
	// busy: the answer may be busy-polled for (busypoll.go), since another process
	// serves it (not this one, not through a proxy).
	busy bool
}

// get takes the most recently used idle connection of key. Connections idle for longer
// than checkAfter, or all when checkAlways, are peeked first.
func (p *h1Pool) get(key string, checkAlways bool) *h1Conn {
	now := time.Now()
	idleTimeout, checkAfter := p.idleTimeoutOr(), p.checkAfter
	if checkAfter <= 0 {
		checkAfter = h1DefaultCheckAfter
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

func (p *h1Pool) put(c *h1Conn) {
	c.used = time.Now()
	maxIdle := p.maxIdlePerHost
	if maxIdle <= 0 {
		maxIdle = h1DefaultMaxIdlePerHost
	}
	p.mu.Lock()
	list := p.idle[c.key]
	if len(list) >= maxIdle {
		p.mu.Unlock()
		c.nc.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*h1Conn{}
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
func (p *h1Pool) reapIdle() {
	idleTimeout := p.idleTimeoutOr()
	now := time.Now()
	var stale []*h1Conn
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
func (c *h1Conn) alive() bool {
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

// newH1Conn wraps a connection made over tcp (the socket, under any TLS).
func newH1Conn(nc, tcp net.Conn, key string) *h1Conn {
	c := &h1Conn{nc: nc, br: bufio.NewReaderSize(nc, 16<<10), key: key}
	if sc, ok := tcp.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw, c.peekFn = raw, c.peek
		}
	}
	return c
}

// h1Endpoint is one upstream URL, parsed once.
type h1Endpoint struct {
	key     string // the pool key: scheme and address, TLS settings and proxy
	addr    string // host:port of the upstream
	tlsConf *tls.Config
	// head is the request line and the headers every POST carries, ready to copy.
	head []byte
	pool *h1Pool

	// Through a proxy: the proxy's host:port, its TLS configuration when it is spoken to
	// over TLS, and the Proxy-Authorization value for its URL's user info. An https
	// upstream is reached through a CONNECT tunnel; an http one gets its requests in
	// absolute form.
	proxyAddr string
	proxyTLS  *tls.Config
	proxyAuth string
	tunnel    bool
	// checkAlways: every reuse of a pooled connection is peeked first, not only after
	// the pool's checkAfter. So for requests through a proxy: tinyproxy, for one, closes
	// the connection after each answer without saying "Connection: close", and the next
	// request on it, moments later, would fail.
	checkAlways bool
	// here caches servedHere for the endpoint's address (0: not known yet, 1: the
	// upstream is served by this process, 2: it is not), found at the first dial while
	// busy polling is on.
	here atomic.Int32
	// dialIn makes connections to an in-process server (h1Options.dial; nil: TCP).
	dialIn func(ctx context.Context) (net.Conn, error)
	// busy is the gateway's busy polling (nil: never).
	busy *BusyPoll
	// version is the gateway's, for the User-Agent of CONNECT requests.
	version string
}

// h1Options is how an endpoint connects, besides its URL; the zero value is the defaults.
type h1Options struct {
	// tls is the TLS configuration of an https upstream (nil: the system's roots). The
	// endpoint uses a clone, with the URL's host as ServerName unless tls sets one.
	tls *tls.Config
	// tlsID tells connections made with different TLS settings apart in the pool ("": the
	// defaults).
	tlsID string
	// proxy picks the proxy for the upstream's URL (nil: http.ProxyFromEnvironment, that is
	// HTTPS_PROXY, HTTP_PROXY and NO_PROXY, read once per process).
	proxy func(*http.Request) (*url.URL, error)
	// pool holds the idle connections (nil: a pool of the endpoint's own). A Dialer's
	// endpoints share the Dialer's.
	pool *h1Pool
	// dial, when set, makes the endpoint's connections instead of TCP (an in-process
	// server, inproc.go).
	dial func(ctx context.Context) (net.Conn, error)
	// busy is the gateway's busy polling (nil: never; busypoll.go).
	busy *BusyPoll
	// version goes into the User-Agent ("": DefaultVersion).
	version string
}

// newH1Endpoint prepares POSTs to rawURL with the given extra headers.
func newH1Endpoint(rawURL string, headers map[string]string, o h1Options) (*h1Endpoint, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Host == "" {
		return nil, fmt.Errorf("url %q has no host", rawURL)
	}
	host, port := u.Hostname(), u.Port()
	o.version = versionOr(o.version)
	e := &h1Endpoint{pool: o.pool, dialIn: o.dial, busy: o.busy, version: o.version}
	if e.pool == nil {
		e.pool = &h1Pool{}
	}
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
		if o.tls != nil {
			e.tlsConf = o.tls.Clone()
		} else {
			e.tlsConf = &tls.Config{}
		}
		if e.tlsConf.ServerName == "" {
			e.tlsConf.ServerName = host
		}
		e.tlsConf.NextProtos = []string{"http/1.1"}
	default:
		return nil, fmt.Errorf("url %q: scheme must be http or https", rawURL)
	}
	e.addr = net.JoinHostPort(host, port)
	e.key = u.Scheme + "://" + e.addr
	if e.tlsConf != nil && o.tlsID != "" {
		e.key += " tls " + o.tlsID
	}
	target := u.RequestURI()
	if err := e.useProxy(u, o.proxy); err != nil {
		return nil, err
	}
	if e.proxyAddr != "" && !e.tunnel {
		target = "http://" + u.Host + target // absolute form, for the proxy
	}
	b := make([]byte, 0, 256)
	b = append(b, "POST "...)
	b = append(b, target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, u.Host...)
	b = append(b, "\r\n"...)
	if e.proxyAuth != "" && !e.tunnel {
		b = append(b, "Proxy-Authorization: "...)
		b = append(b, e.proxyAuth...)
		b = append(b, "\r\n"...)
	}
	ownUA := false
	for k := range headers {
		ownUA = ownUA || lower(k) == "user-agent"
	}
	if !ownUA {
		b = append(b, "User-Agent: mcpgw/"...)
		b = append(b, o.version...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"...)
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	sortStrings(names)
	for _, k := range names {
		v := headers[k]
		if !validHeaderName(k) || bytes.ContainsAny([]byte(v), "\r\n\x00") {
			return nil, fmt.Errorf("header %q: not a valid HTTP header", k)
		}
		switch lower(k) {
		case "host", "content-length", "transfer-encoding", "connection", "content-type", "accept", "proxy-authorization":
			return nil, fmt.Errorf("header %q is set by the gateway", k)
		}
		b = append(b, k...)
		b = append(b, ": "...)
		b = append(b, v...)
		b = append(b, "\r\n"...)
	}
	e.head = b
	return e, nil
}

// useProxy asks proxy (nil: the environment) whether u goes through a proxy, and sets
// the endpoint up for it: http and https proxies, with user info as Basic credentials.
func (e *h1Endpoint) useProxy(u *url.URL, proxy func(*http.Request) (*url.URL, error)) error {
	if proxy == nil {
		proxy = http.ProxyFromEnvironment
	}
	pu, err := proxy(&http.Request{Method: http.MethodPost, URL: u, Host: u.Host, Header: http.Header{}})
	if err != nil {
		return fmt.Errorf("proxy for %s: %w", u.Redacted(), err)
	}
	if pu == nil {
		return nil
	}
	port := pu.Port()
	switch pu.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
		e.proxyTLS = &tls.Config{ServerName: pu.Hostname(), NextProtos: []string{"http/1.1"}}
	default:
		return fmt.Errorf("proxy %s for %s: only http and https proxies are supported", pu.Redacted(), u.Redacted())
	}
	if pu.Hostname() == "" {
		return fmt.Errorf("proxy %s for %s has no host", pu.Redacted(), u.Redacted())
	}
	e.proxyAddr = net.JoinHostPort(pu.Hostname(), port)
	if pu.User != nil {
		pass, _ := pu.User.Password()
		e.proxyAuth = "Basic " + base64.StdEncoding.EncodeToString([]byte(pu.User.Username()+":"+pass))
		if containsCRLF(e.proxyAuth) {
			return errors.New("proxy credentials hold a line break")
		}
	}
	e.tunnel = e.tlsConf != nil
	e.checkAlways = !e.tunnel
	// Connections through different proxies, or with different credentials, are not
	// shared; the credentials stay out of the key itself.
	e.key += " via " + pu.Scheme + "://" + e.proxyAddr
	if e.proxyAuth != "" {
		e.key += " as " + strconv.FormatUint(fnv64(e.proxyAuth), 16)
	}
	return nil
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func containsCRLF(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			return true
		}
	}
	return false
}

// h1Chars classes the bytes of a head: field-name characters (RFC 9110 token) and
// field-value characters (VCHAR, obs-text, SP, HTAB), as net/textproto has them.
var h1Chars = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c == ' ' || c == '\t' || c >= 0x21 && c != 0x7f:
			t[c] |= h1ValueChar
		}
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z',
			bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), byte(c)) >= 0:
			t[c] |= h1TokenChar
		}
	}
	return t
}()

const (
	h1TokenChar = 1 << iota
	h1ValueChar
)

func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if h1Chars[c]&h1TokenChar == 0 {
			return false
		}
	}
	return true
}

func validHeaderName(k string) bool { return isToken([]byte(k)) }

// fieldValue checks a header value's bytes and trims the whitespace around it.
func fieldValue(v []byte) ([]byte, bool) {
	for _, c := range v {
		if h1Chars[c]&h1ValueChar == 0 {
			return nil, false
		}
	}
	return trimOWS(v), true
}

func trimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// dial connects, bounded by ctx and by deadline (zero: none): through the proxy if there
// is one, with the proxy's tunnel and TLS handshakes.
func (e *h1Endpoint) dial(ctx context.Context, deadline time.Time) (*h1Conn, error) {
	if e.dialIn != nil {
		return e.dialInProcess(ctx)
	}
	addr := e.addr
	if e.proxyAddr != "" {
		addr = e.proxyAddr
	}
	d := net.Dialer{Deadline: deadline}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if e.proxyAddr == "" && e.here.Load() == 0 && e.busy.On() {
		v := int32(2)
		if e.busy.isServedHere(nc) {
			v = 1
		}
		e.here.Store(v)
	}
	if e.proxyAddr == "" && e.tlsConf == nil {
		c := newH1Conn(nc, nc, e.key)
		c.busy = e.here.Load() == 2
		return c, nil
	}
	raw := nc
	if !deadline.IsZero() {
		_ = raw.SetDeadline(deadline)
	}
	// ctx bounds the proxy's answer as well as the handshakes.
	stop := context.AfterFunc(ctx, func() { _ = raw.SetDeadline(time.Unix(1, 0)) })
	nc, err = e.handshakes(ctx, nc)
	if !stop() || err != nil {
		raw.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	_ = raw.SetDeadline(time.Time{})
	c := newH1Conn(nc, raw, e.key)
	c.busy = e.proxyAddr == "" && e.here.Load() == 2
	return c, nil
}

func (e *h1Endpoint) handshakes(ctx context.Context, nc net.Conn) (net.Conn, error) {
	if e.proxyTLS != nil {
		tc := tls.Client(nc, e.proxyTLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("proxy %s: %w", e.proxyAddr, err)
		}
		nc = tc
	}
	if e.tunnel {
		if err := e.connect(nc); err != nil {
			return nil, err
		}
	}
	if e.tlsConf != nil {
		tc := tls.Client(nc, e.tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
		nc = tc
	}
	return nc, nil
}

// connect asks the proxy for a tunnel to the upstream.
func (e *h1Endpoint) connect(nc net.Conn) error {
	req := "CONNECT " + e.addr + " HTTP/1.1\r\nHost: " + e.addr + "\r\nUser-Agent: mcpgw/" + e.version + "\r\n"
	if e.proxyAuth != "" {
		req += "Proxy-Authorization: " + e.proxyAuth + "\r\n"
	}
	if _, err := io.WriteString(nc, req+"\r\n"); err != nil {
		return fmt.Errorf("proxy %s: %w", e.proxyAddr, err)
	}
	br := bufio.NewReaderSize(nc, 4096)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return fmt.Errorf("proxy %s: tunnel to %s: %w", e.proxyAddr, e.addr, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("proxy %s refused a tunnel to %s: %s", e.proxyAddr, e.addr, resp.Status)
	}
	if br.Buffered() > 0 {
		return fmt.Errorf("proxy %s: bytes after its answer to CONNECT", e.proxyAddr)
	}
	return nil
}

// h1Tracker is told which connections a transport's requests hold, and for which call, so
// that ending the transport or abandoning the call ends them. track(c, k, true) returns
// false when the transport has already ended; track(c, nil, false) returns false when c
// was taken away meanwhile (the transport ended or the call was abandoned: c is being
// closed and must not be pooled).
type h1Tracker interface {
	track(c *h1Conn, k *Call, add bool) bool
}

var errTransportEnded = errors.New("transport ended")

// h1Response is the head of an answer; its body is read with readBody or body, or let go
// with release.
type h1Response struct {
	status      int
	eventStream bool
	sessionID   string
	length      int64 // -1: unknown
	chunked     bool
	reusable    bool

	ep       *h1Endpoint
	c        *h1Conn
	deadline bool // the connection carries ctx's deadline
	tr       h1Tracker
	ctx      context.Context
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// post sends one POST and reads the answer's head. sid and version become the
// Mcp-Session-Id and Mcp-Protocol-Version headers when set. ctx's deadline bounds the
// exchange (as the connection's deadline: no goroutine, timer or allocation of its own);
// cancelling a call is the tracker's business (it closes the connection held for k).
// knownSID is the session id the caller already has, so that an unchanged one is not
// copied.
func (e *h1Endpoint) post(ctx context.Context, deadline time.Time, tr h1Tracker, k *Call, sid, version string, body []byte, knownSID string) (h1Response, error) {
	if containsCRLF(sid) || containsCRLF(version) || (k != nil && k.Headers != "" && !wellFormedHeaders(k.Headers)) {
		return h1Response{}, errors.New("session id or protocol version holds a line break")
	}
	bp := bufPool.Get().(*[]byte)
	req := h1Request{head: e.appendHead((*bp)[:0], k, sid, version, body), body: body}
	if req.inline = len(body) <= 64<<10; req.inline {
		req.head = append(req.head, body...)
	}
	defer func() {
		if cap(req.head) <= 256<<10 {
			*bp = req.head[:0]
			bufPool.Put(bp)
		}
	}()
	x := h1Exchange{ctx: ctx, deadline: deadline, tr: tr, k: k, knownSID: knownSID}
	for attempt := 0; ; attempt++ {
		var c *h1Conn
		if attempt == 0 {
			c = e.pool.get(e.key, e.checkAlways) // a retry goes out on a new connection
		}
		reused := c != nil
		if c == nil {
			var err error
			if c, err = e.dial(ctx, deadline); err != nil {
				return h1Response{}, orCtxErr(ctx, !deadline.IsZero(), err)
			}
		}
		r, retry, err := e.exchange(&x, c, &req)
		// A kept-alive connection the server closed a moment ago: the request did not get
		// through, so one more try on a new connection is safe.
		if retry && reused && attempt == 0 {
			continue
		}
		return r, err
	}
}

// h1Request is one POST's bytes: its head, with the body after it when inline.
type h1Request struct {
	head   []byte
	body   []byte
	inline bool
}

// h1Exchange is what one POST's attempts share.
type h1Exchange struct {
	ctx      context.Context
	deadline time.Time
	tr       h1Tracker
	k        *Call
	knownSID string
}

// appendHead appends the request line and headers of one POST to b: the endpoint's
// fixed part, the session and protocol headers, the call's own and Content-Length.
func (e *h1Endpoint) appendHead(b []byte, k *Call, sid, version string, body []byte) []byte {
	b = append(b, e.head...)
	if sid != "" {
		b = append(b, "Mcp-Session-Id: "...)
		b = append(b, sid...)
		b = append(b, "\r\n"...)
	}
	if version != "" {
		b = append(b, "Mcp-Protocol-Version: "...)
		b = append(b, version...)
		b = append(b, "\r\n"...)
		if version == ModernVersion {
			b = appendModernHeaders(b, body)
		}
	}
	if k != nil && k.Headers != "" {
		b = append(b, k.Headers...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	return append(b, "\r\n\r\n"...)
}

// exchange writes req on c and reads the answer's head. retry reports a write that
// failed on a connection the server may have closed while it was idle, so that the
// request did not get through: not when ctx or the deadline ended it, nor for a
// connection closed under the write by interrupt (that call was abandoned).
func (e *h1Endpoint) exchange(x *h1Exchange, c *h1Conn, req *h1Request) (r h1Response, retry bool, err error) {
	hasDeadline := !x.deadline.IsZero()
	if !x.tr.track(c, x.k, true) {
		c.nc.Close()
		return h1Response{}, false, errTransportEnded
	}
	if hasDeadline {
		_ = c.nc.SetDeadline(x.deadline)
	}
	if err := x.ctx.Err(); err != nil {
		e.drop(x.tr, c)
		return h1Response{}, false, err
	}
	_, err = c.nc.Write(req.head)
	if err == nil && !req.inline {
		_, err = c.nc.Write(req.body)
	}
	if err != nil {
		e.drop(x.tr, c)
		if cerr := ctxErr(x.ctx, hasDeadline, err); cerr != nil {
			return h1Response{}, false, cerr
		}
		return h1Response{}, !errors.Is(err, net.ErrClosed) && (x.k == nil || !x.k.finished()), err
	}
	r = h1Response{ep: e, c: c, deadline: hasDeadline, tr: x.tr, ctx: x.ctx, length: -1}
	e.busy.waitStart()
	e.busy.awaitAnswer(c) // busypoll.go
	err = r.readHead(x.knownSID)
	e.busy.waitEnd()
	if err != nil {
		r.fail()
		return h1Response{}, false, orCtxErr(x.ctx, hasDeadline, err)
	}
	return r, false, nil
}

// ctxErr says whether err came from ctx or the deadline: ctx's error once it has ended,
// and context.DeadlineExceeded for a connection that hit the exchange's deadline.
func ctxErr(ctx context.Context, hasDeadline bool, err error) error {
	if e := ctx.Err(); e != nil {
		return e
	}
	if hasDeadline && errors.Is(err, os.ErrDeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return nil
}

// orCtxErr is ctxErr when err came from ctx or the deadline, err otherwise.
func orCtxErr(ctx context.Context, hasDeadline bool, err error) error {
	if cerr := ctxErr(ctx, hasDeadline, err); cerr != nil {
		return cerr
	}
	return err
}

func (e *h1Endpoint) drop(tr h1Tracker, c *h1Conn) {
	tr.track(c, nil, false)
	c.nc.Close()
}

// fail closes the connection: the exchange is broken or was cut short.
func (r *h1Response) fail() {
	if r.c != nil {
		r.ep.drop(r.tr, r.c)
		r.c = nil
	}
}

// done hands the connection back to the pool, or closes it when it cannot carry another
// request.
func (r *h1Response) done() {
	if r.c == nil {
		return
	}
	c := r.c
	r.c = nil
	if !r.tr.track(c, nil, false) {
		c.nc.Close() // die or interrupt took it: it is closed, or about to be
		return
	}
	if !r.reusable || c.br.Buffered() > 0 {
		c.nc.Close()
		return
	}
	if r.deadline && c.nc.SetDeadline(time.Time{}) != nil {
		c.nc.Close()
		return
	}
	r.ep.pool.put(c)
}

// readHead reads the answer's head, after any interim (1xx) ones, and decides how its body
// is framed. What is ambiguous is refused (docs/decisions.md, "What the upstream HTTP
// client refuses"): Content-Length given twice with different values, or not as digits;
// Transfer-Encoding other than one "chunked", or in an HTTP/1.0 answer; a 101; a field
// name or value net/http would refuse; more than h1MaxInterim interim answers. An answer
// with both Content-Length and chunked is read as chunked, and its connection closed.
func (r *h1Response) readHead(knownSID string) error {
	br := r.c.br
	total := 0
	for interim := 0; ; interim++ {
		line, err := readHeadLine(br, &total)
		if err != nil {
			return fmt.Errorf("read response: %w", err)
		}
		status, http11, ok := parseStatusLine(line)
		if !ok {
			return fmt.Errorf("malformed status line %q", truncate(line))
		}
		h := h1Head{knownSID: knownSID}
		if err := h.readFields(br, &total); err != nil {
			return err
		}
		r.status, r.eventStream, r.sessionID = status, h.eventStream, h.sessionID
		if h.sawTE && !http11 {
			// RFC 9112 6.1: the framing of such a message is faulty.
			return errors.New("Transfer-Encoding in an HTTP/1.0 answer")
		}
		if status == 101 {
			return errors.New("unexpected 101 Switching Protocols")
		}
		if status < 200 {
			// 1xx informational answers (100 Continue, 103 Early Hints) precede the real one.
			if interim == h1MaxInterim {
				return fmt.Errorf("more than %d informational (1xx) answers", h1MaxInterim)
			}
			continue
		}
		r.frame(&h, http11)
		return nil
	}
}

// h1Head is what the header fields of one answer head say about the answer.
type h1Head struct {
	knownSID string // the caller's session id, kept rather than copied when unchanged

	eventStream   bool
	sessionID     string
	length        int64 // Content-Length, when lengthDigits > 0
	lengthDigits  int   // how it was written: "2" and "02" are two values
	chunked       bool
	sawTE         bool
	close, keepOn bool // Connection: close, keep-alive
}

// readFields reads header lines up to the empty line that ends the head.
func (h *h1Head) readFields(br *bufio.Reader, total *int) error {
	for {
		line, err := readHeadLine(br, total)
		if err != nil {
			return fmt.Errorf("read response headers: %w", err)
		}
		if len(line) == 0 {
			return nil
		}
		i := bytes.IndexByte(line, ':')
		if i <= 0 || !isToken(line[:i]) {
			return fmt.Errorf("malformed header line %q", truncate(line))
		}
		val, ok := fieldValue(line[i+1:])
		if !ok {
			return fmt.Errorf("malformed header line %q", truncate(line))
		}
		if err := h.field(line[:i], val); err != nil {
			return err
		}
	}
}

// field takes in one header field: the ones that frame the body (and are refused when
// ambiguous), the media type, Connection and the session id.
func (h *h1Head) field(name, val []byte) error {
	switch {
	case asciiEqualFold(name, "content-type"):
		h.eventStream = hasMediaType(val, "text/event-stream")
	case asciiEqualFold(name, "content-length"):
		n, ok := parseLength(val)
		if !ok {
			return fmt.Errorf("malformed Content-Length %q", truncate(val))
		}
		if h.lengthDigits > 0 && (n != h.length || len(val) != h.lengthDigits) {
			return errors.New("two different Content-Length values")
		}
		h.length, h.lengthDigits = n, len(val)
	case asciiEqualFold(name, "transfer-encoding"):
		if h.sawTE {
			return errors.New("Transfer-Encoding given more than once")
		}
		h.sawTE = true
		if !asciiEqualFold(val, "chunked") {
			return fmt.Errorf("unsupported Transfer-Encoding %q", truncate(val))
		}
		h.chunked = true
	case asciiEqualFold(name, "connection"):
		h.close = h.close || containsToken(val, "close")
		h.keepOn = h.keepOn || containsToken(val, "keep-alive")
	case asciiEqualFold(name, "trailer"):
		if containsToken(val, "content-length") || containsToken(val, "transfer-encoding") || containsToken(val, "trailer") {
			return fmt.Errorf("the Trailer field %q names a field that frames the message", truncate(val))
		}
	case asciiEqualFold(name, "mcp-session-id"):
		if string(val) == h.knownSID {
			h.sessionID = h.knownSID
		} else {
			h.sessionID = string(val)
		}
	}
	return nil
}

// frame decides how the final answer's body is framed, and whether its connection can
// carry another request.
func (r *h1Response) frame(h *h1Head, http11 bool) {
	r.reusable = !h.close && (http11 || h.keepOn)
	r.chunked = false
	switch {
	case r.status == 204 || r.status == 304:
		// No body, whatever the head says; a head that says otherwise is not trusted
		// with another request.
		r.length = 0
		if h.chunked || h.length > 0 {
			r.reusable = false
		}
	case h.chunked:
		// RFC 9112 6.3: chunked wins over Content-Length, and the connection is not
		// reused.
		r.chunked, r.length = true, -1
		if h.lengthDigits > 0 {
			r.reusable = false
		}
	case h.lengthDigits > 0:
		r.length = h.length
	default:
		r.length = -1
		r.reusable = false // the body runs to the end of the connection
	}
}

// parseStatusLine reads "HTTP/1.x NNN[ reason]".
func parseStatusLine(line []byte) (status int, http11, ok bool) {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[7] != '0' && line[7] != '1' ||
		line[8] != ' ' || len(line) > 12 && line[12] != ' ' {
		return 0, false, false
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		status = status*10 + int(c-'0')
	}
	return status, line[7] == '1', status >= 100
}

// parseLength reads a Content-Length: digits only, at most 2^63-1.
func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

// readHeadLine returns one line without its CRLF (or bare LF), borrowed from br's buffer.
func readHeadLine(br *bufio.Reader, total *int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	*total += len(line)
	if err != nil {
		if err == bufio.ErrBufferFull {
			return nil, errors.New("header line too long")
		}
		if err == io.EOF && len(line) == 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if *total > h1MaxHeaderBytes {
		return nil, errors.New("response head too large")
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func hasMediaType(val []byte, mt string) bool {
	if i := bytes.IndexByte(val, ';'); i >= 0 {
		val = val[:i]
	}
	return asciiEqualFold(trimOWS(val), mt)
}

func containsToken(val []byte, tok string) bool {
	for len(val) > 0 {
		var part []byte
		if i := bytes.IndexByte(val, ','); i >= 0 {
			part, val = val[:i], val[i+1:]
		} else {
			part, val = val, nil
		}
		if asciiEqualFold(trimOWS(part), tok) {
			return true
		}
	}
	return false
}

// readBody reads the whole body (at most limit bytes) and lets the connection go.
func (r *h1Response) readBody(limit int64) ([]byte, error) {
	switch {
	case r.length == 0:
		r.done()
		return nil, nil
	case r.length > 0:
		if r.length > limit {
			r.fail()
			return nil, fmt.Errorf("response of %d bytes is over the limit of %d", r.length, limit)
		}
		buf := make([]byte, r.length)
		if _, err := io.ReadFull(r.c.br, buf); err != nil {
			r.fail()
			return nil, r.readErr(err)
		}
		r.done()
		return buf, nil
	}
	body := r.body().(*h1Body) // holds the connection from here on
	buf, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err == nil && int64(len(buf)) > limit {
		err = fmt.Errorf("response is over the limit of %d bytes", limit)
	}
	if err != nil {
		body.r.fail()
		return nil, body.r.readErr(err)
	}
	body.Close()
	return buf, nil
}

func (r *h1Response) readErr(err error) error {
	if e := ctxErr(r.ctx, r.deadline, err); e != nil {
		return e
	}
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// discard lets the connection go without the body: a small remaining body is read so the
// connection can be reused, a large or open-ended one closes it.
func (r *h1Response) discard() {
	if r.c == nil {
		return
	}
	if r.length >= 0 && r.length <= 4096 {
		if _, err := r.c.br.Discard(int(r.length)); err == nil {
			r.done()
			return
		}
	}
	r.fail()
}

// letGoOfCtx detaches the exchange from the ctx given to post: the body (an event
// stream) may outlive the call that asked for it and ends with the transport instead.
func (r *h1Response) letGoOfCtx() {
	if r.deadline && r.c != nil {
		_ = r.c.nc.SetDeadline(time.Time{})
		r.deadline = false
	}
	r.ctx = context.Background()
}

// body returns the body as a stream; closing it lets the connection go (back to the pool
// if the body was read to its end).
// The body takes the exchange over: r must not be used afterwards.
func (r *h1Response) body() io.ReadCloser {
	b := &h1Body{r: *r, left: r.length}
	if r.chunked {
		b.left = 0
	}
	r.c = nil
	return b
}

type h1Body struct {
	r        h1Response
	left     int64 // bytes left in the body (length-delimited) or in the current chunk
	overhead int64 // chunked: what chunk lines carried beyond their allowance
	crlfDue  bool  // chunked: the CRLF after a chunk's data is still to be read
	eof      bool
	err      error
	closed   bool
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.eof {
		return 0, io.EOF
	}
	r := &b.r
	if r.c == nil {
		return 0, errors.New("read on a closed body")
	}
	br := r.c.br
	switch {
	case r.chunked:
		if b.crlfDue {
			if err := readCRLF(br); err != nil {
				b.err = r.readErr(err)
				return 0, b.err
			}
			b.crlfDue = false
		}
		if b.left == 0 {
			n, err := b.nextChunk()
			if err == nil && n == 0 {
				err = readTrailers(br)
			}
			if err != nil {
				b.err = r.readErr(err)
				return 0, b.err
			}
			if n == 0 {
				b.eof = true
				return 0, io.EOF
			}
			b.left = n
		}
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
		n, err := br.Read(p)
		b.left -= int64(n)
		if err != nil {
			b.err = r.readErr(err)
			return n, b.err
		}
		if b.left == 0 {
			// Each chunk's data ends with CRLF: read now if it is here, else next time
			// rather than wait for it with data in hand.
			if br.Buffered() >= 2 {
				if err := readCRLF(br); err != nil {
					b.err = r.readErr(err)
					return n, b.err
				}
			} else {
				b.crlfDue = true
			}
		}
		return n, nil
	case r.length >= 0:
		if b.left == 0 {
			b.eof = true
			return 0, io.EOF
		}
		if int64(len(p)) > b.left {
			p = p[:b.left]
		}
		n, err := br.Read(p)
		b.left -= int64(n)
		if err != nil {
			b.err = r.readErr(err)
		}
		return n, b.err
	default:
		n, err := br.Read(p)
		if err == io.EOF {
			b.eof = true
		} else if err != nil {
			b.err = r.readErr(err)
			err = b.err
		}
		return n, err
	}
}

// nextChunk reads a chunk-size line (RFC 9112 7.1, as strictly as net/http): CRLF and no
// other CR, at most h1MaxChunkLine bytes, the size in 1 to 16 hex digits, extensions
// skipped, the lines' overhead bounded.
func (b *h1Body) nextChunk() (int64, error) {
	line, err := b.r.c.br.ReadSlice('\n')
	if err != nil {
		if err == bufio.ErrBufferFull {
			return 0, errors.New("chunk line too long")
		}
		return 0, err
	}
	if len(line) > h1MaxChunkLine {
		return 0, errors.New("chunk line too long")
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return 0, errors.New("malformed chunk line: it ends in a bare LF")
	}
	line = line[:len(line)-2]
	if bytes.IndexByte(line, '\r') >= 0 {
		return 0, errors.New("malformed chunk line: a CR inside")
	}
	b.overhead += int64(len(line)) + 2 // and the CRLF after the data
	// Trailing whitespace goes, leading does not (as net/http).
	size := line
	for len(size) > 0 && (size[len(size)-1] == ' ' || size[len(size)-1] == '\t') {
		size = size[:len(size)-1]
	}
	if i := bytes.IndexByte(size, ';'); i >= 0 {
		size = size[:i]
	}
	n, ok := parseChunkSize(size)
	if !ok {
		return 0, fmt.Errorf("malformed chunk size %q", truncate(size))
	}
	b.overhead = max(b.overhead-16-2*n, 0)
	if b.overhead > h1MaxChunkOverhead {
		return 0, errors.New("chunked body carries too much non-data")
	}
	return n, nil
}

// parseChunkSize reads 1 to 16 hex digits, at most 2^62.
func parseChunkSize(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 16 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		if n > (1<<62)>>4 {
			return 0, false
		}
		n = n<<4 | int64(c)
	}
	return n, true
}

// readTrailers reads the trailer section after the last chunk: field lines ending in
// CRLF, at most h1MaxTrailerBytes with the empty line that ends them.
func readTrailers(br *bufio.Reader) error {
	total := 0
	for {
		line, err := br.ReadSlice('\n')
		total += len(line)
		if err != nil {
			if err == bufio.ErrBufferFull {
				return errors.New("trailer section too long")
			}
			return err
		}
		if total > h1MaxTrailerBytes {
			return errors.New("trailer section too long")
		}
		if len(line) < 2 || line[len(line)-2] != '\r' {
			return errors.New("malformed trailer: a line ends in a bare LF")
		}
		line = line[:len(line)-2]
		if len(line) == 0 {
			return nil
		}
		i := bytes.IndexByte(line, ':')
		if _, ok := fieldValue(line[i+1:]); i <= 0 || !isToken(line[:i]) || !ok {
			return fmt.Errorf("malformed trailer line %q", truncate(line))
		}
	}
}

func readCRLF(br *bufio.Reader) error {
	c, err := br.ReadByte()
	if err == nil && c == '\r' {
		c, err = br.ReadByte()
		if err == nil && c == '\n' {
			return nil
		}
	}
	if err != nil {
		return err
	}
	return errors.New("malformed chunk: no CRLF after its data")
}

func (b *h1Body) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if b.eof && b.err == nil {
		b.r.done()
	} else {
		b.r.fail()
	}
	return nil
}

// wellFormedHeaders reports whether h is whole header lines: each "Name: value\r\n", with no
// other line break, so that extra headers cannot end the head or smuggle a request.
func wellFormedHeaders(h string) bool {
	for h != "" {
		i := strings.Index(h, "\r\n")
		if i <= 0 {
			return false
		}
		line := h[:i]
		if strings.ContainsAny(line, "\r\n") || !strings.Contains(line, ": ") {
			return false
		}
		h = h[i+2:]
	}
	return true
}
