package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// readStream relays a POST's event stream. If the stream ends before the call's response
// (SSE polling, SEP-1699), it resumes with GET and Last-Event-ID.
func (t *streamTransport) readStream(body io.ReadCloser, rel *Call) {
	defer func() {
		if rel != nil && !rel.finished() {
			rel.conn.fail(rel, ErrStreamEnded)
		}
	}()
	lastID, retry, err := t.relayEvents(body, rel)
	if errors.Is(err, wire.ErrEventTooLarge) {
		// Reading the stream again would meet the same event: the call fails saying why.
		if rel != nil {
			rel.conn.fail(rel, fmt.Errorf("the upstream sent a message larger than %d bytes (upstream.max_message_bytes)", eventLimit(t.maxMessage)))
		}
		return
	}
	for attempt := 0; rel != nil && !rel.finished() && lastID != "" && attempt < 10; attempt++ {
		if retry <= 0 {
			retry = 100
		}
		select {
		case <-time.After(time.Duration(retry) * time.Millisecond):
		case <-t.ctx.Done():
			return
		}
		req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, t.endpoint, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Last-Event-ID", lastID)
		t.setHeaders(req.Header)
		r2, err := t.client.Do(req)
		if err != nil {
			return
		}
		if r2.StatusCode != http.StatusOK {
			r2.Body.Close()
			return
		}
		var id string
		id, retry, err = t.relayEvents(r2.Body, rel)
		if id != "" {
			lastID = id
		}
		if errors.Is(err, wire.ErrEventTooLarge) && rel != nil {
			rel.conn.fail(rel, fmt.Errorf("the upstream sent a message larger than %d bytes (upstream.max_message_bytes)", eventLimit(t.maxMessage)))
			return
		}
	}
}

func (k *Call) finished() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.fin
}

func (t *streamTransport) relayEvents(body io.ReadCloser, rel *Call) (lastID string, retry int, err error) {
	defer body.Close()
	defer func() {
		if p := recover(); p != nil { // the stream is lost, not the daemon
			err = fmt.Errorf("internal error reading the upstream's stream: %v", p)
		}
	}()
	r := wire.NewSSEReader(body, eventLimit(t.maxMessage))
	for {
		ev, err := r.Next()
		if err != nil {
			return lastID, retry, err
		}
		if ev.ID != "" {
			lastID = ev.ID
		}
		if ev.Retry > 0 {
			retry = ev.Retry
		}
		if (ev.Name == "" || ev.Name == "message") && len(bytes.TrimSpace(ev.Data)) > 0 {
			t.deliver(append([]byte(nil), ev.Data...), rel)
		}
	}
}

// listen keeps the standalone GET stream open for server-initiated messages. A server
// that answers 405 has none; one that drops the stream is reconnected with back-off.
func (t *streamTransport) listen() {
	backoff := 250 * time.Millisecond
	for t.ctx.Err() == nil {
		req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, t.endpoint, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		t.setHeaders(req.Header)
		resp, err := t.client.Do(req)
		if err != nil {
			if t.ctx.Err() != nil {
				return
			}
			// The upstream is gone: end the connection so that supervision notices,
			// takes its tools out of views and reconnects.
			t.die(fmt.Errorf("unreachable: %v", err))
			return
		} else {
			switch {
			case resp.StatusCode == http.StatusOK:
				started := time.Now()
				t.relayEvents(resp.Body, nil)
				if time.Since(started) > 10*time.Second {
					backoff = 250 * time.Millisecond
				}
			case (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusBadRequest) && t.hasSession():
				resp.Body.Close()
				t.die(fmt.Errorf("upstream ended the session (HTTP %d)", resp.StatusCode))
				return
			default:
				resp.Body.Close()
				return // 405 and friends: no standalone stream
			}
		}
		select {
		case <-time.After(backoff):
		case <-t.ctx.Done():
			return
		}
		if backoff < 30*time.Second {
			backoff *= 2
		}
	}
}
