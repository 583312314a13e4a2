package upstream

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The POSTs of streamable HTTP upstreams, every call's hot path, go through a small
// HTTP/1.1 client of the gateway's own instead of net/http's (docs/decisions.md, "Upstream
// POSTs"). The caller's goroutine writes the request and reads the answer itself, on a
// pooled keep-alive connection: no transport goroutines to hand the request and the answer
// over (two wake-ups per call less), no request object, header map or header clone per
// call. GET streams and DELETE stay on net/http, where their cost does not matter.

// h1Pool holds idle keep-alive connections by endpoint key (scheme and address).
type h1Pool struct {
	mu   sync.Mutex
	idle map[string][]*h1Conn
}

const (
	h1MaxIdlePerHost = 512
	// h1IdleTimeout closes connections idle for longer (net/http's default as well).
	h1IdleTimeout = 90 * time.Second
	// h1CheckAfter: a connection idle for longer is checked (a peek) before reuse, since
	// servers close idle connections after their own timeout (Node's is 5 s).
	h1CheckAfter = 500 * time.Millisecond
	// h1MaxHeaderBytes bounds a response head.
	h1MaxHeaderBytes = 1 << 20
)

var sharedH1Pool = &h1Pool{idle: map[string][]*h1Conn{}}

type h1Conn struct {
	nc   net.Conn
	br   *bufio.Reader
	key  string
	used time.Time
}

func (p *h1Pool) get(key string) *h1Conn {
	now := time.Now()
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
		if now.Sub(c.used) < h1CheckAfter || c.alive() {
			return c
		}
		c.nc.Close()
	}
}

func (p *h1Pool) put(c *h1Conn) {
	c.used = time.Now()
	p.mu.Lock()
	list := p.idle[c.key]
	// The oldest connection sits at the bottom: drop it once it has idled too long.
	if len(list) > 0 && c.used.Sub(list[0].used) > h1IdleTimeout {
		old := list[0]
		copy(list, list[1:])
		list[len(list)-1] = nil
		list = list[:len(list)-1]
		defer old.nc.Close()
	}
	if len(list) >= h1MaxIdlePerHost {
		p.mu.Unlock()
		c.nc.Close()
		return
	}
	p.idle[c.key] = append(list, c)
	p.mu.Unlock()
}

// alive peeks at an idle connection without blocking: a connection the server has closed
// reads EOF, one it has written to unasked is out of step; both are not reused.
func (c *h1Conn) alive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	nc := c.nc
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	ok = false
	var b [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
		return true
	})
	return ok
}

// h1Endpoint is one upstream URL, parsed once.
type h1Endpoint struct {
	key     string // scheme and address: the pool key
	addr    string // host:port to dial
	tlsConf *tls.Config
	// head is the request line and the headers every POST carries, ready to copy.
	head []byte
	pool *h1Pool
}

// newH1Endpoint prepares POSTs to rawURL with the given extra headers.
func newH1Endpoint(rawURL string, headers map[string]string) (*h1Endpoint, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Host == "" {
		return nil, fmt.Errorf("url %q has no host", rawURL)
	}
	host, port := u.Hostname(), u.Port()
	e := &h1Endpoint{pool: sharedH1Pool}
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
		e.tlsConf = &tls.Config{ServerName: host, NextProtos: []string{"http/1.1"}}
	default:
		return nil, fmt.Errorf("url %q: scheme must be http or https", rawURL)
	}
	e.addr = net.JoinHostPort(host, port)
	e.key = u.Scheme + "://" + e.addr
	uri := u.RequestURI()
	b := make([]byte, 0, 256)
	b = append(b, "POST "...)
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, u.Host...)
	b = append(b, "\r\n"...)
	ownUA := false
	for k := range headers {
		ownUA = ownUA || lower(k) == "user-agent"
	}
	if !ownUA {
		b = append(b, "User-Agent: mcpgw/"...)
		b = append(b, Version...)
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
		case "host", "content-length", "transfer-encoding", "connection", "content-type", "accept":
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

func containsCRLF(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			return true
		}
	}
	return false
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`()<>@,;:\"/[]?={}`), c) >= 0 {
			return false
		}
	}
	return true
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

// dial connects, bounded by ctx and by deadline (zero: none), TLS handshake included.
func (e *h1Endpoint) dial(ctx context.Context, deadline time.Time) (*h1Conn, error) {
	d := net.Dialer{Deadline: deadline}
	nc, err := d.DialContext(ctx, "tcp", e.addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if e.tlsConf != nil {
		if !deadline.IsZero() {
			_ = nc.SetDeadline(deadline)
		}
		tc := tls.Client(nc, e.tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		_ = nc.SetDeadline(time.Time{})
		nc = tc
	}
	return &h1Conn{nc: nc, br: bufio.NewReaderSize(nc, 16<<10), key: e.key}, nil
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
	bp := bufPool.Get().(*[]byte)
	b := append((*bp)[:0], e.head...)
	if sid != "" {
		b = append(b, "Mcp-Session-Id: "...)
		b = append(b, sid...)
		b = append(b, "\r\n"...)
	}
	if version != "" {
		b = append(b, "Mcp-Protocol-Version: "...)
		b = append(b, version...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	inline := len(body) <= 64<<10
	if inline {
		b = append(b, body...)
	}
	defer func() {
		if cap(b) <= 256<<10 {
			*bp = b[:0]
			bufPool.Put(bp)
		}
	}()

	if containsCRLF(sid) || containsCRLF(version) {
		return h1Response{}, errors.New("session id or protocol version holds a line break")
	}
	hasDeadline := !deadline.IsZero()
	for attempt := 0; ; attempt++ {
		var c *h1Conn
		if attempt == 0 {
			c = e.pool.get(e.key) // a retry goes out on a new connection
		}
		reused := c != nil
		if c == nil {
			var err error
			if c, err = e.dial(ctx, deadline); err != nil {
				if err := ctxErr(ctx, hasDeadline, err); err != nil {
					return h1Response{}, err
				}
				return h1Response{}, err
			}
		}
		if !tr.track(c, k, true) {
			c.nc.Close()
			return h1Response{}, errTransportEnded
		}
		if hasDeadline {
			_ = c.nc.SetDeadline(deadline)
		}
		if err := ctx.Err(); err != nil {
			e.drop(tr, c)
			return h1Response{}, err
		}
		_, err := c.nc.Write(b)
		if err == nil && !inline {
			_, err = c.nc.Write(body)
		}
		if err != nil {
			e.drop(tr, c)
			if err := ctxErr(ctx, hasDeadline, err); err != nil {
				return h1Response{}, err
			}
			// A kept-alive connection the server closed a moment ago: the request did not
			// get through, so one more try on a new connection is safe. Not for a
			// connection closed under the write by interrupt: that call was abandoned.
			if reused && attempt == 0 && !errors.Is(err, net.ErrClosed) && (k == nil || !k.finished()) {
				continue
			}
			return h1Response{}, err
		}
		r := h1Response{ep: e, c: c, deadline: hasDeadline, tr: tr, ctx: ctx, length: -1}
		if err := r.readHead(knownSID); err != nil {
			r.fail()
			if err := ctxErr(ctx, hasDeadline, err); err != nil {
				return h1Response{}, err
			}
			return h1Response{}, err
		}
		return r, nil
	}
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

func (r *h1Response) readHead(knownSID string) error {
	br := r.c.br
	total := 0
	for {
		line, err := readHeadLine(br, &total)
		if err != nil {
			return fmt.Errorf("read response: %w", err)
		}
		// HTTP/1.x NNN reason
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return fmt.Errorf("malformed status line %q", truncate(line))
		}
		status, err := strconv.Atoi(string(line[9:12]))
		if err != nil || status < 100 {
			return fmt.Errorf("malformed status line %q", truncate(line))
		}
		r.status = status
		http11 := line[7] == '1'
		r.reusable = http11
		for {
			line, err := readHeadLine(br, &total)
			if err != nil {
				return fmt.Errorf("read response headers: %w", err)
			}
			if len(line) == 0 {
				break
			}
			i := bytes.IndexByte(line, ':')
			if i <= 0 {
				return fmt.Errorf("malformed header line %q", truncate(line))
			}
			name, val := line[:i], bytes.TrimSpace(line[i+1:])
			switch {
			case asciiEqualFold(name, "content-type"):
				r.eventStream = hasMediaType(val, "text/event-stream")
			case asciiEqualFold(name, "content-length"):
				n, err := strconv.ParseInt(string(val), 10, 64)
				if err != nil || n < 0 {
					return fmt.Errorf("malformed Content-Length %q", truncate(val))
				}
				r.length = n
			case asciiEqualFold(name, "transfer-encoding"):
				if asciiEqualFold(val, "chunked") {
					r.chunked = true
				} else if !asciiEqualFold(val, "identity") {
					return fmt.Errorf("unsupported Transfer-Encoding %q", truncate(val))
				}
			case asciiEqualFold(name, "connection"):
				if containsToken(val, "close") {
					r.reusable = false
				} else if containsToken(val, "keep-alive") && !http11 {
					r.reusable = true
				}
			case asciiEqualFold(name, "mcp-session-id"):
				if string(val) == knownSID {
					r.sessionID = knownSID
				} else {
					r.sessionID = string(val)
				}
			}
		}
		if status >= 200 || status == 101 {
			break
		}
		// 1xx informational answers (100 Continue, 103 Early Hints) precede the real one.
		r.eventStream, r.length, r.chunked, r.sessionID = false, -1, false, ""
	}
	if r.chunked {
		r.length = -1
	}
	if r.status == 204 || r.status == 304 {
		r.length = 0
	}
	if r.length < 0 && !r.chunked {
		r.reusable = false // the body runs to the end of the connection
	}
	return nil
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

// readHeadLine returns one line without its CRLF, borrowed from br's buffer.
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
	return asciiEqualFold(bytes.TrimSpace(val), mt)
}

func containsToken(val []byte, tok string) bool {
	for len(val) > 0 {
		var part []byte
		if i := bytes.IndexByte(val, ','); i >= 0 {
			part, val = val[:i], val[i+1:]
		} else {
			part, val = val, nil
		}
		if asciiEqualFold(bytes.TrimSpace(part), tok) {
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
	r      h1Response
	left   int64 // bytes left in the body (length-delimited) or in the current chunk
	eof    bool
	err    error
	closed bool
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
		if b.left == 0 {
			n, err := b.nextChunk()
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
			// Each chunk's data ends with CRLF.
			if _, err := readCRLF(br); err != nil {
				b.err = r.readErr(err)
				return n, b.err
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

// nextChunk reads a chunk-size line; at the last chunk it also reads the trailers.
func (b *h1Body) nextChunk() (int64, error) {
	br := b.r.c.br
	total := 0
	line, err := readHeadLine(br, &total)
	if err != nil {
		return 0, err
	}
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("malformed chunk size %q", truncate(line))
	}
	if n == 0 {
		for {
			t, err := readHeadLine(br, &total)
			if err != nil {
				return 0, err
			}
			if len(t) == 0 {
				break
			}
		}
	}
	return n, nil
}

func readCRLF(br *bufio.Reader) (int, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, err
	}
	if c == '\r' {
		if c, err = br.ReadByte(); err != nil {
			return 1, err
		}
	}
	if c != '\n' {
		return 1, errors.New("malformed chunk: no CRLF after its data")
	}
	return 2, nil
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
