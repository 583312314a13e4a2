// Package h1test is the loopback HTTP peers of the tests that drive internal/httpclient: its own,
// and internal/upstream's, which send POSTs through it as the streamable transport does.
package httpclienttest

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
)

// NoProxy is a proxy setting that sends everything direct, whatever the environment says.
func NoProxy(*http.Request) (*url.URL, error) { return nil, nil }

// Ctx bounds a test's exchanges so that a hang fails instead of blocking.
func Ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ReadReq reads one request with its body, as a server would.
func ReadReq(br *bufio.Reader) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(req.Body)
	return req, body, err
}

// CountedServer is an httptest server that counts the TCP connections it accepts.
type CountedServer struct {
	*httptest.Server
	Conns atomic.Int32
	Quit  chan struct{} // closed when the test ends, before the server closes
}

// NewCountedServer starts a loopback server (TLS when useTLS) whose requests h answers; it
// is closed when the test ends.
func NewCountedServer(t *testing.T, useTLS bool, h func(cs *CountedServer, w http.ResponseWriter, r *http.Request)) *CountedServer {
	t.Helper()
	cs := &CountedServer{Quit: make(chan struct{})}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(cs, w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused TLS handshake
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			cs.Conns.Add(1)
		}
	}
	if useTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	cs.Server = srv
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(cs.Quit) }) // runs first: handlers waiting on Quit return
	return cs
}

// RawServer is a loopback listener whose connections are handled by hand.
type RawServer struct {
	ln       net.Listener
	Accepted atomic.Int32
	Quit     chan struct{} // closed when the test ends
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

// NewRawServer calls handle for each accepted connection (i counts from 0). Every
// connection gets an absolute deadline, and all are closed when the test ends.
func NewRawServer(t *testing.T, handle func(s *RawServer, i int, c net.Conn, br *bufio.Reader)) *RawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &RawServer{ln: ln, Quit: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			i := int(s.Accepted.Add(1)) - 1
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
		close(s.Quit)
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

// Addr is the server's host:port.
func (s *RawServer) Addr() string { return s.ln.Addr().String() }

// URL is the server's address with path.
func (s *RawServer) URL(path string) string { return "http://" + s.ln.Addr().String() + path }

// Sleep waits d or until the server is shut down; false when it was.
func (s *RawServer) Sleep(d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-s.Quit:
		return false
	}
}
