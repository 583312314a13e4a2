package httpclient

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
	"strconv"
	"strings"
	"time"
)

// Endpoint is one upstream URL, parsed once, with the header fields every request to it
// carries.
type Endpoint struct {
	key     string // the pool key: scheme and address, TLS settings and proxy
	addr    string // host:port of the upstream
	tlsConf *tls.Config
	// head is what follows the method in every request: the target, the version, Host and
	// the endpoint's own header fields, ready to copy.
	head []byte
	pool *Pool

	// Through a proxy: the proxy's host:port, its TLS configuration when it is spoken to
	// over TLS, and the Proxy-Authorization value for its URL's user info. An https
	// upstream is reached through a CONNECT tunnel; an http one gets its requests in
	// absolute form.
	proxyAddr string
	proxyTLS  *tls.Config
	proxyAuth string
	tunnel    bool
	// checkAlways: every reuse of a pooled connection is peeked first, not only after
	// the pool's CheckAfter. So for requests through a proxy: tinyproxy, for one, closes
	// the connection after each answer without saying "Connection: close", and the next
	// request on it, moments later, would fail.
	checkAlways bool
	// dialIn makes connections to an in-process server (Options.Dial; nil: TCP).
	dialIn func(ctx context.Context) (net.Conn, error)
	// busy may poll for answers (nil: never).
	busy Waiter
	// userAgent goes with CONNECT requests too.
	userAgent string
}

// Options is how an endpoint connects, besides its URL; the zero value is the defaults.
type Options struct {
	// TLS is the TLS configuration of an https upstream (nil: the system's roots). The
	// endpoint uses a clone, with the URL's host as ServerName unless TLS sets one.
	TLS *tls.Config
	// TLSID tells connections made with different TLS settings apart in the pool ("": the
	// defaults).
	TLSID string
	// Proxy picks the proxy for the upstream's URL (nil: http.ProxyFromEnvironment, that is
	// HTTPS_PROXY, HTTP_PROXY and NO_PROXY, read once per process).
	Proxy func(*http.Request) (*url.URL, error)
	// Pool holds the idle connections (nil: a pool of the endpoint's own).
	Pool *Pool
	// Dial, when set, makes the endpoint's connections instead of TCP (an in-process
	// server). Such connections are never polled.
	Dial func(ctx context.Context) (net.Conn, error)
	// Busy may poll for answers (nil: never).
	Busy Waiter
	// UserAgent is the User-Agent of requests that do not set one in the endpoint's
	// header fields, and of CONNECT requests ("": none).
	UserAgent string
}

// Waiter is told when a request waits for its answer, and may poll the connection for it
// instead of letting the goroutine park (busy polling).
type Waiter interface {
	// On reports whether polling is on.
	On() bool
	// AwaitAnswer is called once the request is written, before its answer is read: it
	// may poll c (Conn.Pollable, Conn.Readable) until the answer is there.
	AwaitAnswer(c *Conn)
	// Answered ends the wait AwaitAnswer began, when the answer's head is read.
	Answered()
}

// NewEndpoint prepares requests to rawURL (http or https) with the given header fields,
// which may not be the ones the client sets itself (Host, Content-Length,
// Transfer-Encoding, Connection, Proxy-Authorization).
func NewEndpoint(rawURL string, headers map[string]string, o Options) (*Endpoint, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Host == "" {
		return nil, fmt.Errorf("url %q has no host", rawURL)
	}
	host, port := u.Hostname(), u.Port()
	e := &Endpoint{pool: o.Pool, dialIn: o.Dial, busy: o.Busy, userAgent: o.UserAgent}
	if e.pool == nil {
		e.pool = &Pool{}
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
		if o.TLS != nil {
			e.tlsConf = o.TLS.Clone()
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
	if e.tlsConf != nil && o.TLSID != "" {
		e.key += " tls " + o.TLSID
	}
	if err := e.useProxy(u, o.Proxy); err != nil {
		return nil, err
	}
	if e.head, err = e.buildHead(u, headers); err != nil {
		return nil, err
	}
	return e, nil
}

// buildHead is what follows the method in each request to u: the target (in absolute
// form for a proxy), the version, Host, Proxy-Authorization, User-Agent and headers.
func (e *Endpoint) buildHead(u *url.URL, headers map[string]string) ([]byte, error) {
	target := u.RequestURI()
	if e.proxyAddr != "" && !e.tunnel {
		target = "http://" + u.Host + target // absolute form, for the proxy
	}
	b := make([]byte, 0, 256)
	b = append(b, ' ')
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
	if !ownUA && e.userAgent != "" {
		b = append(b, "User-Agent: "...)
		b = append(b, e.userAgent...)
		b = append(b, "\r\n"...)
	}
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	sortStrings(names)
	for _, k := range names {
		v := headers[k]
		if !validHeaderName(k) || !validValue(v) {
			return nil, fmt.Errorf("header %q: not a valid HTTP header", k)
		}
		if setByClient(k) {
			return nil, fmt.Errorf("header %q is set by the gateway", k)
		}
		b = append(b, k...)
		b = append(b, ": "...)
		b = append(b, v...)
		b = append(b, "\r\n"...)
	}
	return b, nil
}

// setByClient reports whether name is a field the client writes itself.
func setByClient(name string) bool {
	for _, f := range [...]string{"host", "content-length", "transfer-encoding", "connection", "proxy-authorization"} {
		if len(name) == len(f) && strings.EqualFold(name, f) {
			return true
		}
	}
	return false
}

// validValue reports whether v may be sent as a field value: no CR, LF or NUL.
func validValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == '\r' || c == '\n' || c == 0 {
			return false
		}
	}
	return true
}

// Direct reports whether the endpoint's connections go straight over TCP to the upstream
// (no proxy, not an in-process server): only their answers may be polled for. A program
// that serves an upstream itself adds it in process (no TCP), so a direct connection's
// peer is another process.
func (e *Endpoint) Direct() bool { return e.proxyAddr == "" && e.dialIn == nil }

// useProxy asks proxy (nil: the environment) whether u goes through a proxy, and sets
// the endpoint up for it: http and https proxies, with user info as Basic credentials.
func (e *Endpoint) useProxy(u *url.URL, proxy func(*http.Request) (*url.URL, error)) error {
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

// headerChars classes the bytes of a head: field-name characters (RFC 9110 token) and
// field-value characters (VCHAR, obs-text, SP, HTAB), as net/textproto has them.
var headerChars = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c == ' ' || c == '\t' || c >= 0x21 && c != 0x7f:
			t[c] |= valueChar
		}
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z',
			bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), byte(c)) >= 0:
			t[c] |= tokenChar
		}
	}
	return t
}()

const (
	tokenChar = 1 << iota
	valueChar
)

func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if headerChars[c]&tokenChar == 0 {
			return false
		}
	}
	return true
}

func validHeaderName(k string) bool { return isToken([]byte(k)) }

// fieldValue checks a header value's bytes and trims the whitespace around it.
func fieldValue(v []byte) ([]byte, bool) {
	for _, c := range v {
		if headerChars[c]&valueChar == 0 {
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
func (e *Endpoint) dial(ctx context.Context, deadline time.Time) (*Conn, error) {
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
	if e.proxyAddr == "" && e.tlsConf == nil {
		c := newConn(nc, nc, e.key)
		c.busy = e.busy != nil
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
	c := newConn(nc, raw, e.key)
	c.busy = e.proxyAddr == "" && e.busy != nil
	return c, nil
}

func (e *Endpoint) handshakes(ctx context.Context, nc net.Conn) (net.Conn, error) {
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
func (e *Endpoint) connect(nc net.Conn) error {
	req := "CONNECT " + e.addr + " HTTP/1.1\r\nHost: " + e.addr + "\r\n"
	if e.userAgent != "" {
		req += "User-Agent: " + e.userAgent + "\r\n"
	}
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

// dialInProcess is dial for an in-process server (Options.Dial). Its connections are
// never polled: the answer comes from this process.
func (e *Endpoint) dialInProcess(ctx context.Context) (*Conn, error) {
	nc, err := e.dialIn(ctx)
	if err != nil {
		return nil, err
	}
	return newConn(nc, nc, e.key), nil
}
