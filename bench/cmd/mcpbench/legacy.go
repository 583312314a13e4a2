package main

// Legacy HTTP+SSE (2024-11-05) sessions for the load client: mcp-hub, the aggregation
// gateway from npm, serves its combined endpoint only this way, so S1 and S2 compare it
// with mcpgw's own legacy endpoint (/sse), the same transport on both sides.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// sseConn is a legacy session's event stream and the endpoint its messages go to.
type sseConn struct {
	endpoint string
	msgs     chan []byte // message events, in order
	cancel   context.CancelFunc
}

// openLegacy opens the event stream, learns the POST endpoint, and initializes.
func (t *target) openLegacy(ctx context.Context) (*session, error) {
	sctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, t.URL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := t.stream.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%s: event stream: %w", t.Name, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%s: event stream: HTTP %d", t.Name, resp.StatusCode)
	}
	c := &sseConn{msgs: make(chan []byte, 64), cancel: cancel}
	first := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		defer close(c.msgs)
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		var event string
		var data []byte
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			line = bytes.TrimRight(line, "\r\n")
			switch {
			case len(line) == 0:
				if event == "endpoint" {
					select {
					case first <- string(data):
					default:
					}
				} else if len(data) > 0 {
					c.msgs <- data
				}
				event, data = "", nil
			case bytes.HasPrefix(line, []byte("event:")):
				event = strings.TrimSpace(string(line[6:]))
			case bytes.HasPrefix(line, []byte("data:")):
				data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
			}
		}
	}()
	select {
	case ep := <-first:
		u, err := url.Parse(t.URL)
		if err != nil {
			cancel()
			return nil, err
		}
		e, err := u.Parse(ep)
		if err != nil {
			cancel()
			return nil, err
		}
		c.endpoint = e.String()
	case <-time.After(10 * time.Second):
		cancel()
		return nil, fmt.Errorf("%s: no endpoint event within 10 s", t.Name)
	}
	s := &session{t: t, hdr: http.Header{"Content-Type": {"application/json"}}, sse: c}
	var buf bytes.Buffer
	legacyInit := strings.Replace(initBody, "2025-11-25", "2024-11-05", 1)
	if st, _, err := s.do(ctx, []byte(legacyInit), &buf); err != nil || st != http.StatusOK {
		cancel()
		return nil, fmt.Errorf("%s: initialize: HTTP %d %v: %.200s", t.Name, st, err, buf.Bytes())
	}
	if err := s.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		cancel()
		return nil, fmt.Errorf("%s: initialized: %w", t.Name, err)
	}
	return s, nil
}

// post sends one message to the session's endpoint; the answer comes on the stream.
func (s *session) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.sse.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = s.hdr
	resp, err := s.t.client.Do(req)
	if err != nil {
		return err
	}
	var sink [512]byte
	for {
		if _, err := resp.Body.Read(sink[:]); err != nil {
			break
		}
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: HTTP %d", s.sse.endpoint, resp.StatusCode)
	}
	return nil
}

var errStreamEnded = errors.New("event stream ended")

// doLegacy posts a request and waits for the next response on the stream (one request at a
// time per session), reporting it as an HTTP 200 with the message as the body.
func (s *session) doLegacy(ctx context.Context, body []byte, buf *bytes.Buffer) (int, http.Header, error) {
	if err := s.post(ctx, body); err != nil {
		return 0, nil, err
	}
	t := time.NewTimer(60 * time.Second)
	defer t.Stop()
	for {
		select {
		case m, ok := <-s.sse.msgs:
			if !ok {
				return 0, nil, errStreamEnded
			}
			if !bytes.Contains(m, []byte(`"id"`)) || bytes.Contains(m, []byte(`"method"`)) {
				continue // a notification or a request from the server
			}
			buf.Reset()
			buf.Write(m)
			return http.StatusOK, nil, nil
		case <-t.C:
			return 0, nil, errTimeout
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		}
	}
}
