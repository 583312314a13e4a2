package bridge

import (
	"bytes"
	"context"
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// startListen (re)opens the GET stream for server-initiated messages.
func (b *Bridge) startListen() {
	b.mu.Lock()
	if b.getStop != nil {
		b.getStop()
	}
	ctx, cancel := context.WithCancel(b.ctx)
	b.getStop = cancel
	b.mu.Unlock()
	go b.listen(ctx)
}

func (b *Bridge) listen(ctx context.Context) {
	backoff := 200 * time.Millisecond
	for ctx.Err() == nil {
		req, _, err := b.newRequest(ctx, http.MethodGet, nil)
		if err != nil {
			return
		}
		resp, err := b.client.Do(req)
		if err == nil {
			if resp.StatusCode == http.StatusOK {
				backoff = 200 * time.Millisecond
				rd := wire.NewSSEReader(resp.Body, b.o.MaxMessage)
				for {
					ev, err := rd.Next()
					if err != nil {
						break
					}
					if len(bytes.TrimSpace(ev.Data)) > 0 {
						b.write(append([]byte(nil), ev.Data...))
					}
				}
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusConflict {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}
