package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/registry/wire"
)

// SharedHTTPClient is the client used for upstream HTTP traffic: many idle connections per
// host, since every session's calls to a shared upstream go through it.
var SharedHTTPClient = &http.Client{Transport: &http.Transport{
	Proxy:               nil,
	MaxIdleConns:        1024,
	MaxIdleConnsPerHost: 512,
	IdleConnTimeout:     90 * time.Second,
	ForceAttemptHTTP2:   false,
}}

// streamTransport is the streamable HTTP client side (2025-03-26 and later).
type streamTransport struct {
	name     string
	endpoint string
	headers  map[string]string
	client   *http.Client
	log      *slog.Logger

	mu        sync.Mutex
	sessionID string
	version   string
	base      http.Header
	sidHdr    []string
	verHdr    []string
	deliver   func([]byte, *Call)
	ctx       context.Context
	cancel    context.CancelFunc
	doneCh    chan struct{}
	doneOnce  sync.Once
	deadErr   error
}

func newStreamable(name, endpoint string, headers map[string]string, log *slog.Logger) *streamTransport {
	ctx, cancel := context.WithCancel(context.Background())
	return &streamTransport{name: name, endpoint: endpoint, headers: headers, client: SharedHTTPClient,
		log: log, ctx: ctx, cancel: cancel, doneCh: make(chan struct{})}
}

func (t *streamTransport) start(deliver func([]byte, *Call)) error {
	t.deliver = deliver
	return nil
}

func (t *streamTransport) die(err error) {
	t.doneOnce.Do(func() {
		t.mu.Lock()
		t.deadErr = err
		t.mu.Unlock()
		t.cancel()
		close(t.doneCh)
	})
}

func (t *streamTransport) done() <-chan struct{} { return t.doneCh }

func (t *streamTransport) err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.deadErr
}

func (t *streamTransport) afterInit(version string) {
	t.mu.Lock()
	t.version = version
	t.mu.Unlock()
	go t.listen()
}

func (t *streamTransport) setHeaders(h http.Header) {
	for k, v := range t.headers {
		h.Set(k, v)
	}
	t.mu.Lock()
	if t.sessionID != "" {
		h["Mcp-Session-Id"] = []string{t.sessionID}
	}
	if t.version != "" {
		h["Mcp-Protocol-Version"] = []string{t.version}
	}
	t.mu.Unlock()
}

// postHeaders builds a POST's headers from a prepared base: one map clone per request
// and no key canonicalisation on the call path.
func (t *streamTransport) postHeaders() http.Header {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.base == nil {
		b := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		for k, v := range t.headers {
			b.Set(k, v)
		}
		t.base = b
	}
	h := make(http.Header, len(t.base)+2)
	for k, v := range t.base {
		h[k] = v
	}
	if t.sessionID != "" {
		if t.sidHdr == nil {
			t.sidHdr = []string{t.sessionID}
		}
		h["Mcp-Session-Id"] = t.sidHdr
	}
	if t.version != "" {
		if t.verHdr == nil {
			t.verHdr = []string{t.version}
		}
		h["Mcp-Protocol-Version"] = t.verHdr
	}
	return h
}

func (t *streamTransport) send(ctx context.Context, msg []byte, rel *Call) error {
	select {
	case <-t.doneCh:
		return fmt.Errorf("%w: %v", ErrClosed, t.err())
	default:
	}
	// The request's own stream may outlive ctx (a long call); it ends with the transport.
	reqCtx := ctx
	if rel != nil {
		reqCtx = t.ctx
	}
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, t.endpoint, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header = t.postHeaders()
	resp, err := t.client.Do(req)
	if err != nil {
		if t.ctx.Err() != nil {
			return fmt.Errorf("%w: %v", ErrClosed, t.err())
		}
		t.die(fmt.Errorf("unreachable: %v", err))
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		t.mu.Lock()
		if t.sessionID == "" {
			t.sessionID = sid
		}
		t.mu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusAccepted:
		resp.Body.Close()
		return nil
	case resp.StatusCode == http.StatusNotFound && t.hasSession():
		resp.Body.Close()
		t.die(errors.New("upstream ended the session (404)"))
		return fmt.Errorf("%w: session ended by upstream", ErrClosed)
	case resp.StatusCode >= 300:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		// A JSON-RPC error body answers the request only if it carries the request's id;
		// an id-less error (as some servers send for an unknown session) does not.
		if rel != nil && len(body) > 0 && body[0] == '{' {
			if m, err := wire.Parse(body); err == nil && m.IsResponse() && string(m.ID) == strconv.FormatInt(rel.ID, 10) {
				t.deliver(body, rel)
				return nil
			}
		}
		if resp.StatusCode == http.StatusBadRequest && t.hasSession() && strings.Contains(strings.ToLower(string(body)), "session") {
			t.die(fmt.Errorf("upstream no longer knows the session: HTTP 400: %s", strings.TrimSpace(string(body))))
			return fmt.Errorf("%w: session lost by upstream", ErrClosed)
		}
		return fmt.Errorf("upstream answered HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		go t.readStream(resp, rel)
		return nil
	default:
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessageBytes))
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("read upstream response: %w", err)
		}
		if len(bytes.TrimSpace(body)) > 0 {
			t.deliver(body, rel)
		}
		return nil
	}
}

func (t *streamTransport) hasSession() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessionID != ""
}

// readStream relays a POST's event stream. If the stream ends before the call's response
// (SSE polling, SEP-1699), it resumes with GET and Last-Event-ID.
func (t *streamTransport) readStream(resp *http.Response, rel *Call) {
	defer func() {
		if rel != nil && !rel.finished() {
			rel.conn.fail(rel, errors.New("upstream ended the response stream without a result"))
		}
	}()
	lastID, retry := t.relayEvents(resp, rel)
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
		id, retry = t.relayEvents(r2, rel)
		if id != "" {
			lastID = id
		}
	}
}

func (k *Call) finished() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.fin
}

func (t *streamTransport) relayEvents(resp *http.Response, rel *Call) (lastID string, retry int) {
	defer resp.Body.Close()
	r := wire.NewSSEReader(resp.Body, MaxMessageBytes)
	for {
		ev, err := r.Next()
		if err != nil {
			return lastID, retry
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
				t.relayEvents(resp, nil)
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

func (t *streamTransport) close() error {
	t.mu.Lock()
	sid := t.sessionID
	t.mu.Unlock()
	if sid != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, t.endpoint, nil)
		if err == nil {
			t.setHeaders(req.Header)
			if resp, err := t.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}
		cancel()
	}
	t.die(ErrClosed)
	return nil
}

// sseTransport is the legacy HTTP+SSE client side (2024-11-05): one GET stream carries
// everything the server sends; messages go out as POSTs to the endpoint it names.
type sseTransport struct {
	name    string
	url     string
	headers map[string]string
	client  *http.Client
	log     *slog.Logger

	mu       sync.Mutex
	endpoint string
	ctx      context.Context
	cancel   context.CancelFunc
	doneCh   chan struct{}
	doneOnce sync.Once
	deadErr  error
}

func newSSE(name, u string, headers map[string]string, log *slog.Logger) *sseTransport {
	ctx, cancel := context.WithCancel(context.Background())
	return &sseTransport{name: name, url: u, headers: headers, client: SharedHTTPClient, log: log,
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
	r := wire.NewSSEReader(resp.Body, MaxMessageBytes)
	first := make(chan error, 1)
	go func() {
		defer resp.Body.Close()
		gotEndpoint := false
		for {
			ev, err := r.Next()
			if err != nil {
				if !gotEndpoint {
					first <- fmt.Errorf("stream ended before the endpoint event: %v", err)
				}
				t.die(fmt.Errorf("event stream ended: %v", err))
				return
			}
			switch ev.Name {
			case "endpoint":
				base, _ := url.Parse(t.url)
				ep, err := base.Parse(strings.TrimSpace(string(ev.Data)))
				if err != nil {
					if !gotEndpoint {
						first <- fmt.Errorf("bad endpoint event %q", ev.Data)
					}
					continue
				}
				t.mu.Lock()
				t.endpoint = ep.String()
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
		t.die(errors.New("no endpoint event within 30s"))
		return errors.New("no endpoint event within 30s")
	}
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
