package upstream

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient"
)

// An in-process upstream (transport "inprocess") is an MCP server that the process
// embedding the gateway serves itself: an http.Handler speaking MCP streamable HTTP. The
// gateway reaches it without a socket. Each instance gets an http.Server of its own that
// serves the handler on an in-memory listener, whose connections are net.Pipe ends; the
// streamable HTTP client side (http.go, and internal/httpclient for the POSTs) dials that listener
// instead of TCP. So every behaviour of an HTTP upstream (JSON and event-stream answers,
// the GET stream, session ids, DELETE on close, errors) is the same code, and only the
// dial differs (docs/decisions.md, "In-process MCP servers").

// InProcessURL is the URL an in-process server's requests carry: its handler sees Host
// localhost and path /mcp. Nothing is ever dialled at that address.
const InProcessURL = "http://localhost/mcp"

// InProcess is an MCP server served in the gateway's own process.
type InProcess struct {
	// Handler speaks MCP streamable HTTP (for instance a go-sdk StreamableHTTPHandler).
	Handler http.Handler
}

// errNoInProcess is the error of an inprocess server whose host gave no handler.
var errNoInProcess = errors.New("type inprocess, but no in-process server was given in code under this name (only a Go program embedding mcpgw can give one)")

// inprocTransport is the streamable HTTP transport over an in-memory listener served by
// its own http.Server.
type inprocTransport struct {
	*streamTransport
	ln  *memListener
	srv *http.Server
	rt  *http.Transport
}

func newInProcess(o Options, log *slog.Logger) (transport, error) {
	if o.InProcess == nil || o.InProcess.Handler == nil {
		return nil, errNoInProcess
	}
	ln := newMemListener()
	srv := &http.Server{Handler: o.InProcess.Handler, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() { _ = srv.Serve(ln) }()
	rt := &http.Transport{
		Proxy:               nil, // never through a proxy, whatever the environment says
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return ln.dial(ctx) },
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	st := newStreamable(o.Name, InProcessURL, o.Headers, &http.Client{Transport: rt}, log)
	st.maxMessage = o.MaxMessageBytes
	st.h1 = httpclient.Options{
		Proxy: func(*http.Request) (*url.URL, error) { return nil, nil },
		Pool:  &httpclient.Pool{},
		Dial:  ln.dial,
	}
	return &inprocTransport{streamTransport: st, ln: ln, srv: srv, rt: rt}, nil
}

// close ends the session (DELETE) and the transport's streams, then the server: its
// handlers have seen their connections close, so Shutdown only waits for them to return.
func (t *inprocTransport) close() error {
	err := t.streamTransport.close()
	t.rt.CloseIdleConnections()
	t.h1.Pool.CloseIdle()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if t.srv.Shutdown(ctx) != nil {
		_ = t.srv.Close()
	}
	return err
}

// memListener is a net.Listener whose connections are net.Pipe ends handed over by dial.
type memListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// dial connects to the listener: one end of a pipe is returned, the other accepted.
func (l *memListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
	client.Close()
	server.Close()
	return nil, errors.New("in-process server stopped")
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *memListener) Addr() net.Addr { return memAddr{} }

type memAddr struct{}

func (memAddr) Network() string { return "memory" }
func (memAddr) String() string  { return "inprocess" }
