package upstream

import (
	"bufio"
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/h1"
)

// The HTTP peers and helpers of the tests that send POSTs through internal/h1 as the
// streamable HTTP transport does (busy polling, TLS settings, the hand-off of taken
// connections). internal/h1 has its own for the client's behaviour.

// testTracker holds every connection and never abandons a request.
type testTracker struct{}

func (*testTracker) Track(*h1.Conn, any, bool) bool { return true }
func (*testTracker) Abandoned(any) bool             { return false }

// newTestEndpoint is an endpoint for rawURL with a pool of its own, emptied when the test
// ends, never through a proxy.
func newTestEndpoint(t *testing.T, rawURL string, o h1.Options) *h1.Endpoint {
	t.Helper()
	if o.Pool == nil {
		o.Pool = &h1.Pool{}
	}
	o.Proxy = noProxy
	ep, err := h1.NewEndpoint(rawURL, nil, o)
	if err != nil {
		t.Fatalf("h1.NewEndpoint(%q): %v", rawURL, err)
	}
	t.Cleanup(o.Pool.CloseIdle)
	return ep
}

// doPost sends body as the transport sends a message without a session: bounded by ctx's
// deadline.
func doPost(ctx context.Context, ep *h1.Endpoint, tr h1.Tracker, body []byte) (*h1.Response, error) {
	deadline, _ := ctx.Deadline()
	req := h1.Request{Method: http.MethodPost, Body: body, Deadline: deadline}
	postHeader(&req.Header, nil, "", "", body)
	r, err := ep.RoundTrip(ctx, tr, &req)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

const okJSON = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"

func mustPost(t *testing.T, ep *h1.Endpoint, tr h1.Tracker, body string) *h1.Response {
	t.Helper()
	r, err := doPost(testCtx(t), ep, tr, []byte(body))
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	return r
}

func mustReadBody(t *testing.T, r *h1.Response, want string) {
	t.Helper()
	got, err := r.ReadBody(1 << 20)
	if err != nil {
		t.Fatalf("ReadBody: %v", err)
	}
	if string(got) != want {
		t.Fatalf("body = %q, want %q", got, want)
	}
}

// readReq reads one request with its body, as a server would.
func readReq(br *bufio.Reader) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(req.Body)
	return req, body, err
}

// noProxy is a proxy setting that sends everything direct, whatever the environment says.
func noProxy(*http.Request) (*url.URL, error) { return nil, nil }

// testCtx bounds a test's exchanges so that a hang fails instead of blocking.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// countedServer is an httptest server that counts the TCP connections it accepts.
type countedServer struct {
	*httptest.Server
	conns atomic.Int32
	quit  chan struct{} // closed when the test ends, before the server closes
}

func newCountedServer(t *testing.T, useTLS bool, h func(cs *countedServer, w http.ResponseWriter, r *http.Request)) *countedServer {
	t.Helper()
	cs := &countedServer{quit: make(chan struct{})}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(cs, w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused TLS handshake
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			cs.conns.Add(1)
		}
	}
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	cs.Server = srv
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(cs.quit) }) // runs first: handlers waiting on quit return
	return cs
}

// rawServer is a loopback listener whose connections are handled by hand.
type rawServer struct {
	ln       net.Listener
	accepted atomic.Int32
	quit     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

// newRawServer calls handle for each accepted connection (i counts from 0). Every
// connection gets an absolute deadline, and all are closed when the test ends.
func newRawServer(t *testing.T, handle func(s *rawServer, i int, c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, quit: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			i := int(s.accepted.Add(1)) - 1
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(s, i, c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() {
		close(s.quit)
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawServer) url(path string) string { return "http://" + s.ln.Addr().String() + path }

// sleep waits d or until the server is shut down.
func (s *rawServer) sleep(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-s.quit:
		return false
	}
}
