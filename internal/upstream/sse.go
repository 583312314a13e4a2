package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// sseTransport is the legacy HTTP+SSE client side (2024-11-05): one GET stream carries
// everything the server sends; messages go out as POSTs to the endpoint it names.
type sseTransport struct {
	name    string
	url     string
	headers map[string]string
	client  *http.Client
	log     *slog.Logger
	// maxMessage bounds one event read from the upstream (Options.MaxMessageBytes; 0:
	// MaxMessageBytes).
	maxMessage int

	mu       sync.Mutex
	endpoint string
	ctx      context.Context
	cancel   context.CancelFunc
	doneCh   chan struct{}
	doneOnce sync.Once
	deadErr  error
}

// newSSE is a legacy SSE transport over client (the Dialer's).
func newSSE(name, u string, headers map[string]string, client *http.Client, log *slog.Logger) *sseTransport {
	ctx, cancel := context.WithCancel(context.Background())
	return &sseTransport{name: name, url: u, headers: headers, client: client, log: log,
		ctx: ctx, cancel: cancel, doneCh: make(chan struct{})}
}

func (t *sseTransport) start(deliver func([]byte, *Call)) error {
	req, err := http.NewRequestWithContext(t.ctx, http.MethodGet, t.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("connect %s: %w", t.url, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return fmt.Errorf("connect %s: HTTP %d", t.url, resp.StatusCode)
	}
	r := wire.NewSSEReader(resp.Body, eventLimit(t.maxMessage))
	first := make(chan error, 1)
	go func() {
		defer resp.Body.Close()
		defer func() {
			if p := recover(); p != nil { // the connection is lost, not the daemon
				t.die(fmt.Errorf("internal error reading the event stream: %v", p))
			}
		}()
		gotEndpoint := false
		for {
			ev, err := r.Next()
			if err != nil {
				if !gotEndpoint {
					first <- fmt.Errorf("upstream %s: stream ended before the endpoint event: %v", t.name, err)
				}
				t.die(fmt.Errorf("event stream ended: %v", err))
				return
			}
			switch ev.Name {
			case "endpoint":
				ep, err := t.endpointURL(ev.Data)
				if err != nil {
					if !gotEndpoint {
						first <- err
						t.die(err)
						return
					}
					// A later endpoint event that is refused changes nothing.
					t.log.Warn("legacy SSE upstream named a refused endpoint; keeping the one it named first",
						"server", t.name, "err", err)
					continue
				}
				t.mu.Lock()
				t.endpoint = ep
				t.mu.Unlock()
				if !gotEndpoint {
					gotEndpoint = true
					first <- nil
				}
			case "", "message":
				if len(bytes.TrimSpace(ev.Data)) > 0 {
					deliver(append([]byte(nil), ev.Data...), nil)
				}
			}
		}
	}()
	select {
	case err := <-first:
		if err != nil {
			t.die(err)
		}
		return err
	case <-time.After(30 * time.Second):
		err := fmt.Errorf("upstream %s: no endpoint event within 30s", t.name)
		t.die(err)
		return err
	}
}

// endpointURL reads the endpoint event: the URL to POST messages to, resolved against the
// SSE URL. It must be on the SSE URL's origin (scheme, host and port), since every POST
// carries the configured headers, credentials among them; and it may hold no control
// characters (CR and LF among them).
func (t *sseTransport) endpointURL(data []byte) (string, error) {
	raw := strings.Trim(string(data), " ")
	shown := raw
	if len(shown) > 200 {
		shown = shown[:200] + "..."
	}
	refuse := func(why string) (string, error) {
		return "", fmt.Errorf("upstream %s: refused the SSE endpoint event %q: %s", t.name, shown, why)
	}
	if raw == "" {
		return refuse("it is empty")
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c < 0x20 || c == 0x7f {
			return refuse("it holds control characters")
		}
	}
	base, err := url.Parse(t.url)
	if err != nil {
		return refuse(err.Error())
	}
	ref, err := url.Parse(raw)
	if err != nil {
		return refuse(err.Error())
	}
	ep := base.ResolveReference(ref)
	if !sameOrigin(base, ep) {
		return refuse(fmt.Sprintf("it is not on the origin of the SSE URL (%s://%s), and the configured headers would go with it",
			base.Scheme, base.Host))
	}
	return ep.String(), nil
}

// sameOrigin reports whether a and b have the same scheme, host and port (a missing port
// being the scheme's default).
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		switch strings.ToLower(u.Scheme) {
		case "http":
			return "80"
		case "https":
			return "443"
		}
		return ""
	}
	return a.Host != "" && strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func (t *sseTransport) die(err error) {
	t.doneOnce.Do(func() {
		t.mu.Lock()
		t.deadErr = err
		t.mu.Unlock()
		t.cancel()
		close(t.doneCh)
	})
}

func (t *sseTransport) send(ctx context.Context, msg []byte, _ *Call) error {
	select {
	case <-t.doneCh:
		return fmt.Errorf("%w: %v", ErrClosed, t.err())
	default:
	}
	t.mu.Lock()
	ep := t.endpoint
	t.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		if resp.StatusCode == http.StatusNotFound {
			t.die(errors.New("upstream ended the session (404)"))
		}
		return fmt.Errorf("upstream answered HTTP %d", resp.StatusCode)
	}
	return nil
}

func (t *sseTransport) afterInit(string) {}

func (t *sseTransport) interrupt(*Call) {}

func (t *sseTransport) close() error {
	t.die(ErrClosed)
	return nil
}

func (t *sseTransport) done() <-chan struct{} { return t.doneCh }

func (t *sseTransport) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.deadErr
}
