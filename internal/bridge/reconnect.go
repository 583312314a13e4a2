package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

func isDialError(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// waitForGateway blocks until a reconnect attempt finishes; it reports whether the
// gateway is reachable again.
func (b *Bridge) waitForGateway() bool {
	b.reconnect()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reachable
}

type sessionLost struct{ gen int }

func (e *sessionLost) Error() string { return "session not found on the gateway" }

func isUnreachable(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &oe) || errors.As(err, &ne) || strings.Contains(err.Error(), "connection refused")
}

// reinitialize replays the client's initialize to open a new session, unless another
// goroutine already did since generation gen.
func (b *Bridge) reinitialize(gen int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen != gen {
		return nil
	}
	if b.init == nil {
		return errors.New("no initialize to replay")
	}
	req, err := http.NewRequestWithContext(b.ctx, http.MethodPost, b.url, bytes.NewReader(b.init))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range map[string]string{"X-Agent-ID": b.o.Agent, "X-Conversation-ID": b.o.Conversation, "X-Task-ID": b.o.Task, "X-Executor-ID": b.o.Executor} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	if b.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+b.o.Token)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		return fmt.Errorf("re-initialize: HTTP %d", resp.StatusCode)
	}
	b.sid = resp.Header.Get("Mcp-Session-Id")
	b.gen++
	b.log.Info("gateway session replaced", "session", b.sid)
	if b.inited != nil {
		go func(line []byte) {
			m, _ := wire.Parse(line)
			if m != nil {
				_ = b.post(m, line, func() {})
			}
		}(b.inited)
	}
	go b.startListen()
	return nil
}

// reconnect waits for the daemon to come back (bounded), then resumes the session or
// replays initialize. Concurrent callers share one attempt and all wait for it.
func (b *Bridge) reconnect() {
	b.mu.Lock()
	if b.reconnDone != nil {
		done := b.reconnDone
		b.mu.Unlock()
		<-done
		return
	}
	done := make(chan struct{})
	b.reconnDone = done
	gen := b.gen
	b.reachable = false
	b.mu.Unlock()
	ok := b.tryReconnect(gen)
	b.gaveUp.Store(!ok)
	b.mu.Lock()
	b.reachable = ok
	b.reconnDone = nil
	b.mu.Unlock()
	close(done)
}

func (b *Bridge) tryReconnect(gen int) bool {
	deadline := time.Now().Add(b.o.ReconnectFor)
	backoff := 100 * time.Millisecond
	var lastErr error
	for time.Now().Before(deadline) && b.ctx.Err() == nil {
		req, _, err := b.newRequest(b.ctx, http.MethodPost, wire.Request(wire.Quote("mcpgw-bridge-ping"), "ping", nil))
		if err == nil {
			resp, err := b.client.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
				resp.Body.Close()
				if resp.StatusCode == http.StatusNotFound && req.Header.Get("Mcp-Session-Id") != "" {
					if err := b.reinitialize(gen); err == nil {
						return true
					} else {
						lastErr = err
					}
				} else {
					// Any other answer is a gateway that is there (a ping without a session
					// gets 400; a remote gateway may want a credential): the request that
					// waited goes now and gets the gateway's own answer.
					if req.Header.Get("Mcp-Session-Id") != "" {
						b.log.Info("gateway back; session resumed", "at", b.where())
						b.startListen()
					} else {
						b.log.Info("gateway reachable", "at", b.where())
					}
					return true
				}
			} else {
				lastErr = err
				b.log.Debug("gateway unreachable; retrying", "at", b.where(), "err", err, "in", backoff)
			}
		}
		select {
		case <-time.After(backoff):
		case <-b.ctx.Done():
		}
		if backoff < 2*time.Second {
			backoff *= 2
		}
	}
	if b.ctx.Err() == nil {
		b.mu.Lock()
		b.lastErr = lastErr
		b.mu.Unlock()
		b.log.Error("gave up waiting for the gateway", "at", b.where(), "waited", b.o.ReconnectFor, "err", lastErr)
	}
	return false
}
