package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// streamTransport is the streamable HTTP client side (2025-03-26 and later).
type streamTransport struct {
	name     string
	endpoint string
	headers  map[string]string
	client   *http.Client
	h1       httpclient.Options // how the POSTs connect: TLS settings (tls.go), proxy, pool
	log      *slog.Logger
	// maxMessage bounds one event read from the upstream (Options.MaxMessageBytes; 0:
	// MaxMessageBytes).
	maxMessage int
	// auth gives requests their Authorization header (Options.Authorizer; nil: none).
	auth Authorizer

	mu        sync.Mutex
	sessionID string
	version   string
	deliver   func([]byte, *Call)
	ep        *httpclient.Endpoint
	active    map[*httpclient.Conn]*Call
	ctx       context.Context
	cancel    context.CancelFunc
	doneCh    chan struct{}
	doneOnce  sync.Once
	deadErr   error
	// reattached: the session is another connection's (Dialer.Reattach); keepUntil: a
	// task keeps the session until then (Conn.KeepSession). Either way close sends no
	// DELETE (reattach.go).
	reattached bool
	keepUntil  time.Time
}

// newStreamable is a streamable HTTP transport whose GET streams and DELETE go through
// client (the Dialer's).
func newStreamable(name, endpoint string, headers map[string]string, client *http.Client, log *slog.Logger) *streamTransport {
	ctx, cancel := context.WithCancel(context.Background())
	return &streamTransport{name: name, endpoint: endpoint, headers: headers, client: client,
		log: log, ctx: ctx, cancel: cancel, doneCh: make(chan struct{})}
}

func (t *streamTransport) start(deliver func([]byte, *Call)) error {
	for k := range t.headers {
		if strings.EqualFold(k, "Content-Type") || strings.EqualFold(k, "Accept") {
			return fmt.Errorf("header %q is set by the gateway", k)
		}
	}
	if t.h1.UserAgent == "" {
		t.h1.UserAgent = "mcpgw/" + DefaultVersion
	}
	ep, err := httpclient.NewEndpoint(t.endpoint, t.headers, t.h1)
	if err != nil {
		return err
	}
	t.ep = ep
	t.active = map[*httpclient.Conn]*Call{}
	t.deliver = deliver
	return nil
}

// Track keeps the connections the transport's POSTs hold, and their calls, so that die
// and interrupt can end them (httpclient.Tracker). Adding fails once the transport has ended;
// removing reports whether c was still held, i.e. not taken away (and closed) by die or
// interrupt, so that only such a connection goes back to the pool.
func (t *streamTransport) Track(c *httpclient.Conn, owner any, add bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !add {
		_, held := t.active[c]
		delete(t.active, c)
		return held
	}
	if t.active == nil {
		return false // ended
	}
	k, _ := owner.(*Call)
	t.active[c] = k
	return true
}

// Abandoned reports whether the call a POST is for was given up (httpclient.Tracker).
func (t *streamTransport) Abandoned(owner any) bool {
	k, _ := owner.(*Call)
	return k != nil && k.finished()
}

// interrupt closes the connection a call's POST is waiting on (a cancelled call).
func (t *streamTransport) interrupt(k *Call) {
	t.mu.Lock()
	var held *httpclient.Conn
	for c, kk := range t.active {
		if kk == k {
			held = c
			delete(t.active, c)
			break
		}
	}
	t.mu.Unlock()
	if held != nil {
		held.Close()
	}
}

func (t *streamTransport) die(err error) {
	t.doneOnce.Do(func() {
		t.mu.Lock()
		t.deadErr = err
		active := t.active
		t.active = nil
		t.mu.Unlock()
		for c := range active {
			c.Close()
		}
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
	if version == StatelessVersion {
		return // the stateless revision has no GET stream
	}
	go t.listen()
}

func (t *streamTransport) setHeaders(h http.Header) {
	for k, v := range t.headers {
		h.Set(k, v)
	}
	if t.auth != nil {
		// A GET stream or DELETE without a usable token goes without one: the upstream
		// refuses it, and the next POST says why.
		if v, err := t.auth.Header(t.ctx); err == nil {
			h.Set("Authorization", v)
		}
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

// send POSTs one message. ctx bounds the exchange until the answer's head (and a JSON
// body) has arrived: when it ends first the connection is closed and ctx's error returned.
// An event-stream answer is read on its own goroutine and ends with the stream or the
// transport.
func (t *streamTransport) send(ctx context.Context, msg []byte, rel *Call) error {
	select {
	case <-t.doneCh:
		return fmt.Errorf("%w: %v", ErrClosed, t.err())
	default:
	}
	if t.auth == nil {
		return t.post(ctx, msg, rel, "")
	}
	return t.sendAuthorized(ctx, msg, rel)
}

// post POSTs one message, with authz as its Authorization header when not "".
func (t *streamTransport) post(ctx context.Context, msg []byte, rel *Call, authz string) error {
	t.mu.Lock()
	sid, version := t.sessionID, t.version
	t.mu.Unlock()
	deadline, _ := ctx.Deadline()
	if rel != nil && !rel.deadline.IsZero() {
		deadline = rel.deadline
	}
	req := httpclient.Request{Method: http.MethodPost, Body: msg, Deadline: deadline, Owner: rel, Keep: "mcp-session-id", Known: sid}
	postHeader(&req.Header, rel, sid, version, msg)
	if authz != "" {
		req.Header.Add("Authorization", authz)
	}
	resp, err := t.ep.RoundTrip(ctx, t, &req)
	if err != nil {
		return t.postFailed(err, rel)
	}
	if resp.Kept != "" && sid == "" {
		t.mu.Lock()
		if t.sessionID == "" {
			t.sessionID = resp.Kept
		}
		t.mu.Unlock()
	}
	switch {
	case resp.Status == http.StatusAccepted:
		resp.Discard()
		return nil
	case t.auth != nil && (resp.Status == http.StatusUnauthorized || resp.Status == http.StatusForbidden):
		resp.Discard()
		return &refused{status: resp.Status, challenges: resp.Challenges}
	case resp.Status == http.StatusNotFound && t.hasSession():
		resp.Discard()
		if err := t.lostSession(resp.Status, nil); err != nil {
			return err
		}
		t.die(errors.New("upstream ended the session (404)"))
		return fmt.Errorf("%w: session ended by upstream", ErrClosed)
	case resp.Status >= 300:
		return t.errorAnswer(&resp, rel)
	case resp.EventStream:
		resp.LetGoOfCtx()
		go t.readStream(resp.Body(), rel)
		return nil
	default:
		return t.jsonAnswer(&resp, rel)
	}
}

// postHeader adds to h the header fields of a POST of body: its media types, the session
// id and protocol version when set (and the stateless revision's Mcp-Method, Mcp-Name and
// a tools/call's Mcp-Param-*), and the call's own (the trace context).
func postHeader(h *httpclient.Header, k *Call, sid, version string, body []byte) {
	h.Add("Content-Type", "application/json")
	h.Add("Accept", "application/json, text/event-stream")
	if sid != "" {
		h.Add("Mcp-Session-Id", sid)
	}
	if version != "" {
		h.Add("Mcp-Protocol-Version", version)
		if version == StatelessVersion {
			addStatelessHeaders(h, body, k)
		}
	}
	if k != nil {
		for _, f := range k.headers {
			h.Add(f.Name, f.Value)
		}
	}
}

// postFailed says why a POST got no answer: the call's context, the call abandoned, the
// transport ended; anything else means the upstream cannot be reached, and the transport
// ends.
func (t *streamTransport) postFailed(err error, rel *Call) error {
	switch {
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case rel != nil && rel.finished():
		return context.Canceled // abandoned, and its connection closed by interrupt
	case t.ctx.Err() != nil || errors.Is(err, httpclient.ErrUntracked):
		return fmt.Errorf("%w: %v", ErrClosed, t.err())
	}
	t.die(fmt.Errorf("unreachable: %v", err))
	return fmt.Errorf("%w: %v", ErrClosed, err)
}

// errorAnswer handles an answer of status 300 or more: a JSON-RPC error for the request
// is delivered; a 400 that says the session is unknown ends the transport; anything else
// fails the request with the status and the start of the body.
func (t *streamTransport) errorAnswer(resp *httpclient.Response, rel *Call) error {
	b := resp.Body()
	body, _ := io.ReadAll(io.LimitReader(b, 4096))
	b.Close()
	if err := t.lostSession(resp.Status, body); err != nil {
		return err
	}
	// A JSON-RPC error body answers the request only if it carries the request's id;
	// an id-less error (as some servers send for an unknown session) does not.
	if rel != nil && len(body) > 0 && body[0] == '{' {
		if m, err := wire.Parse(body); err == nil && m.IsResponse() && string(m.ID) == strconv.FormatInt(rel.ID, 10) {
			t.deliver(body, rel)
			return nil
		}
	}
	if resp.Status == http.StatusBadRequest && t.hasSession() && strings.Contains(strings.ToLower(string(body)), "session") {
		t.die(fmt.Errorf("upstream no longer knows the session: HTTP 400: %s", strings.TrimSpace(string(body))))
		return fmt.Errorf("%w: session lost by upstream", ErrClosed)
	}
	return fmt.Errorf("upstream answered HTTP %d: %s", resp.Status, strings.TrimSpace(string(body)))
}

// jsonAnswer reads a JSON answer's body (bounded by the transport's message size) and
// delivers it.
func (t *streamTransport) jsonAnswer(resp *httpclient.Response, rel *Call) error {
	body, err := resp.ReadBody(int64(eventLimit(t.maxMessage)))
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if rel != nil && rel.finished() {
			return context.Canceled
		}
		return fmt.Errorf("read upstream response: %w", err)
	}
	if len(bytes.TrimSpace(body)) > 0 {
		t.deliver(body, rel)
	}
	return nil
}

func (t *streamTransport) hasSession() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessionID != ""
}

func (t *streamTransport) close() error {
	t.mu.Lock()
	sid := t.sessionID
	t.mu.Unlock()
	if sid != "" && !t.keeps() {
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

// eventLimit is the bound of one event read from an upstream: n, or MaxMessageBytes
// when n is not set.
func eventLimit(n int) int {
	if n <= 0 {
		return MaxMessageBytes
	}
	return n
}
