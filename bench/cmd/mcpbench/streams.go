package main

// GET streams held open on raw TCP connections: no client goroutine per stream, so 10,000
// of them cost the bench little.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type rawStream struct {
	c net.Conn
}

func openStream(ctx context.Context, s *session) (*rawStream, error) {
	u, err := url.Parse(s.t.URL)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n", u.RequestURI(), u.Host, s.id)
	for k, v := range s.t.Header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(b.String())); err != nil {
		c.Close()
		return nil, err
	}
	// Read the status line and headers only; the body stays unread in the socket.
	br := bufio.NewReaderSize(c, 1024)
	status, err := br.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, err
	}
	if !strings.Contains(status, " 200 ") {
		c.Close()
		return nil, fmt.Errorf("GET stream: %s", strings.TrimSpace(status))
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, err
		}
		if line == "\r\n" {
			break
		}
	}
	_ = c.SetDeadline(time.Time{})
	return &rawStream{c: c}, nil
}

// openStreams opens one GET stream per session, par at a time.
func openStreams(ctx context.Context, ss []*session, par int) ([]*rawStream, error) {
	out := make([]*rawStream, len(ss))
	var next atomic.Int64
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < par; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ss) || ctx.Err() != nil {
					return
				}
				st, err := openStream(ctx, ss[i])
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				out[i] = st
			}
		}()
	}
	wg.Wait()
	var opened []*rawStream
	for _, s := range out {
		if s != nil {
			opened = append(opened, s)
		}
	}
	if firstErr == nil && len(opened) < len(ss) {
		firstErr = errors.New("not every stream opened")
	}
	return opened, firstErr
}

// countOpen counts streams whose connection is still open: a read with an instant
// deadline times out on a live connection and fails on a closed one.
func countOpen(streams []*rawStream) int {
	n := 0
	buf := make([]byte, 4096)
	for _, s := range streams {
		_ = s.c.SetReadDeadline(time.Now().Add(time.Millisecond))
		alive := true
		for {
			_, err := s.c.Read(buf)
			if err == nil {
				continue // keep-alive comments or queued events
			}
			var ne net.Error
			alive = errors.As(err, &ne) && ne.Timeout()
			break
		}
		if alive {
			n++
		}
	}
	return n
}

func closeStreams(streams []*rawStream) {
	for _, s := range streams {
		if s != nil {
			s.c.Close()
		}
	}
}
