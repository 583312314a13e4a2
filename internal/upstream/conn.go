// Package upstream connects the gateway to one upstream MCP server over stdio, streamable
// HTTP or legacy SSE, and relays JSON-RPC messages as raw bytes.
package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// ErrClosed is returned for calls on a connection that has ended.
var ErrClosed = errors.New("upstream connection closed")

// ErrStreamEnded is a call whose response stream the upstream ended before the response,
// with no event id to resume it from (SSE polling without an event store, SEP-1699): the
// response is lost upstream. It comes wrapped in ErrClosed.
var ErrStreamEnded = errors.New("upstream ended the response stream without a result")

// Handler receives what an upstream sends that is not the response to a call: notifications
// and server-to-client requests. rel is the call the message belongs to when the transport
// knows it (a streamable HTTP response stream), else nil. Handlers run on the connection's
// reader; they must not block.
type Handler func(c *Conn, m *wire.Msg, raw []byte, rel *Call)

// transport moves raw messages to and from one upstream.
type transport interface {
	// start begins delivering inbound messages.
	start(deliver func(raw []byte, rel *Call)) error
	// send writes one message. For a request, rel is its call; transports that answer on the
	// request's own stream (streamable HTTP) deliver that stream's messages with rel.
	send(ctx context.Context, msg []byte, rel *Call) error
	// afterInit is told the initialize result (session id captured by HTTP transports).
	afterInit(protocolVersion string)
	// interrupt stops waiting on the wire for k's answer (k was abandoned), where the
	// transport waits per request (streamable HTTP); others do nothing.
	interrupt(k *Call)
	close() error
	done() <-chan struct{}
	// err says why the transport ended.
	err() error
}

// Conn is a JSON-RPC connection to one upstream instance.
type Conn struct {
	Name    string
	tr      transport
	handler Handler
	log     *slog.Logger

	nextID atomic.Int64
	mu     sync.Mutex
	calls  map[int64]*Call
	closed bool

	// InitResult is the raw initialize result; ServerCaps its capabilities member.
	InitResult      json.RawMessage
	ServerCaps      Capabilities
	ProtocolVersion string
	// Instructions from the upstream's initialize result.
	Instructions string
	// Limit bounds the client requests in flight on this instance (nil: no limit). The
	// caller takes a slot before BeginUntil and releases it when the call ends.
	Limit *Limiter
	// Stateless is set when the upstream speaks the stateless revision (2026-07-28,
	// stateless.go): every request then carries statelessMeta in params._meta.
	Stateless     bool
	statelessMeta json.RawMessage
	// paramHeaders are the x-mcp-header bindings of the server's tools, by tool name, as
	// the last tools/list of any of its connections from the same Dialer returned them
	// (paramheaders.go): a per_session instance is called with the tools another
	// connection listed. Nil for a Conn no Dialer made (tests).
	paramHeaders *toolBindings

	// busy is the gateway's busy polling (Dialer.Busy; nil: never), version its version
	// (clientInfo.version).
	busy    *BusyPoll
	version string
	// probe bounds the server/discover of protocol_version auto over stdio and SSE (0:
	// the connect timeout alone); Dialer.DiscoverProbe.
	probe time.Duration
	// probed: server/discover was asked and failed before initialize (protocol_version auto).
	probed bool
}

// Capabilities is the part of an upstream's capabilities the gateway acts on.
type Capabilities struct {
	Tools       *struct{ ListChanged bool }            `json:"tools,omitempty"`
	Prompts     *struct{ ListChanged bool }            `json:"prompts,omitempty"`
	Resources   *struct{ Subscribe, ListChanged bool } `json:"resources,omitempty"`
	Logging     json.RawMessage                        `json:"logging,omitempty"`
	Completions json.RawMessage                        `json:"completions,omitempty"`
	// Extensions are the server extensions the upstream declares (2026-07-28 capability
	// map: extension id → settings), passed on to clients (internal/gateway/extensions.go).
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
	// Tasks is the upstream's MCP tasks capability (SEP-1686: list, cancel,
	// requests.tools.call), merged into the gateway's (internal/gateway/mcptasks.go).
	Tasks json.RawMessage `json:"tasks,omitempty"`
}

// Owner is the downstream side of a call: the client request it serves. The connection
// hands it the call before the request is sent, since the call's first notification may
// beat Begin's return; Tenant names the client session the request came from, so what
// arrives on the call's stream reaches that session and no other.
type Owner interface {
	Attach(*Call)
	Tenant() string
}

func newConn(name string, tr transport, h Handler, log *slog.Logger) *Conn {
	return &Conn{Name: name, tr: tr, handler: h, log: log, calls: map[int64]*Call{}}
}

func (c *Conn) start() error {
	if err := c.tr.start(c.deliver); err != nil {
		return err
	}
	go func() {
		<-c.tr.done()
		c.failAll(c.tr.err())
	}()
	return nil
}

func (c *Conn) failAll(err error) {
	if err == nil {
		err = ErrClosed
	}
	c.mu.Lock()
	c.closed = true
	calls := c.calls
	c.calls = map[int64]*Call{}
	c.mu.Unlock()
	for _, k := range calls {
		k.finish(nil, fmt.Errorf("%w: %v", ErrClosed, err))
	}
}

// Done is closed when the connection has ended. A Conn that never had a transport (a
// zero Conn, as unit tests make) has ended from the start.
func (c *Conn) Done() <-chan struct{} {
	if c.tr == nil {
		ended := make(chan struct{})
		close(ended)
		return ended
	}
	return c.tr.done()
}

// Err says why the connection ended.
func (c *Conn) Err() error { return c.tr.err() }

// Close ends the connection (and, for stdio, the process).
func (c *Conn) Close() error {
	err := c.tr.close()
	c.failAll(ErrClosed)
	return err
}

// deliver routes one inbound message: responses to their call, everything else to the
// handler.
func (c *Conn) deliver(raw []byte, rel *Call) {
	defer func() {
		// A message that trips a bug is lost, not the connection and every session on it.
		if p := recover(); p != nil {
			c.log.Error("panic while routing an upstream message", "server", c.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	var m wire.Msg
	if err := wire.ParseInto(raw, &m); err != nil {
		c.log.Warn("upstream sent malformed JSON-RPC", "server", c.Name, "err", err)
		return
	}
	if m.IsResponse() {
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			c.log.Debug("upstream response with foreign id", "server", c.Name, "id", string(m.ID))
			return
		}
		c.mu.Lock()
		k := c.calls[id]
		delete(c.calls, id)
		c.mu.Unlock()
		if k != nil {
			k.finishWith(raw, &m, nil)
		}
		return
	}
	if m.Method == "" {
		return
	}
	if m.IsRequest() && m.Method == "ping" {
		// Off the reader: an upstream that is not reading its input must not stop the
		// gateway reading its output.
		go c.Reply(append(json.RawMessage(nil), m.ID...), json.RawMessage(`{}`), nil)
		return
	}
	if c.handler != nil {
		hm := m // only what goes to the handler leaves this frame
		c.handler(c, &hm, raw, rel)
	}
}

// Begin sends a request and returns its call. params are raw JSON (or nil). owner (may be
// nil) is given the call before the request is sent. ctx's deadline, if any, bounds the
// call.
func (c *Conn) Begin(ctx context.Context, method string, params json.RawMessage, owner Owner) (*Call, error) {
	d, _ := ctx.Deadline()
	return c.BeginUntil(ctx, d, method, params, owner)
}

// BeginUntil is Begin with the call bounded by deadline (zero: none) instead of by a
// context of its own: ctx is then only the caller's (its end still ends the wait). The
// forwarding path uses it to spare a derived context per call.
func (c *Conn) BeginUntil(ctx context.Context, deadline time.Time, method string, params json.RawMessage, owner Owner) (*Call, error) {
	id := c.nextID.Add(1)
	k := newCall(c, id, method)
	k.deadline = deadline
	k.Owner = owner
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w: %v", ErrClosed, c.tr.err())
	}
	c.calls[id] = k
	c.mu.Unlock()
	if owner != nil {
		// Before the request leaves: its first notification may beat Begin's return.
		owner.Attach(k)
	}
	if c.statelessMeta != nil {
		params = withMeta(params, c.statelessMeta)
	}
	if err := c.tr.send(ctx, wire.Request(wire.IntID(id), method, params), k); err != nil {
		c.mu.Lock()
		_, pending := c.calls[id]
		delete(c.calls, id)
		c.mu.Unlock()
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			// ctx ended while the request was on its way or waiting for its answer's head:
			// the upstream may be working on it, and a dropped connection is not a
			// cancellation, so say so (unless Abandon already did).
			if e := ctx.Err(); e != nil {
				err = e
			}
			k.finish(nil, err)
			if pending {
				reason := "cancelled"
				if errors.Is(err, context.DeadlineExceeded) {
					reason = "timeout"
				}
				c.notifyCancelled(id, reason)
			}
			return nil, err
		}
		return nil, err
	}
	return k, nil
}

// notifyCancelled tells the upstream a call was abandoned. It is sent off the caller's
// path: the client's answer (a timeout, a cancellation) must not wait for an upstream that
// may be the reason for it.
func (c *Conn) notifyCancelled(id int64, reason string) {
	p, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
	msg := wire.Notification("notifications/cancelled", p)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.tr.send(ctx, msg, nil)
	}()
}

// Abandon forgets a call (after a timeout or cancellation) and tells the upstream.
func (c *Conn) Abandon(k *Call, reason string) {
	c.mu.Lock()
	_, ok := c.calls[k.ID]
	delete(c.calls, k.ID)
	c.mu.Unlock()
	k.finish(nil, context.Canceled)
	c.tr.interrupt(k)
	if ok {
		c.notifyCancelled(k.ID, reason)
	}
}

// fail ends one call with err.
func (c *Conn) fail(k *Call, err error) {
	c.mu.Lock()
	delete(c.calls, k.ID)
	c.mu.Unlock()
	k.finish(nil, fmt.Errorf("%w: %w", ErrClosed, err))
}

// InFlight returns the calls currently waiting for a response, oldest first.
func (c *Conn) InFlight() []*Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Call, 0, len(c.calls))
	for _, k := range c.calls {
		if k.Method == methodListen {
			continue // the connection's own notification stream (stateless.go), no client's request
		}
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b *Call) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Request sends a request and waits for its result, discarding related messages.
func (c *Conn) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	k, err := c.Begin(ctx, method, params, nil)
	if err != nil {
		return nil, err
	}
	for {
		_, final, err := k.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				c.Abandon(k, "timeout")
			}
			return nil, err
		}
		if !final {
			continue
		}
		m := k.Response()
		if m == nil {
			return nil, errors.New("malformed response")
		}
		if m.Error != nil {
			e := wire.ParseError(m.Error)
			return nil, &RPCError{Code: e.Code, Message: e.Message, Raw: m.Error}
		}
		return m.Result, nil
	}
}

// RPCError is a JSON-RPC error returned by an upstream.
type RPCError struct {
	Code    int
	Message string
	Raw     json.RawMessage
}

func (e *RPCError) Error() string { return fmt.Sprintf("upstream error %d: %s", e.Code, e.Message) }

// Notify sends a notification.
func (c *Conn) Notify(ctx context.Context, method string, params json.RawMessage) error {
	return c.tr.send(ctx, wire.Notification(method, params), nil)
}

// Reply answers a request the upstream sent. Exactly one of result and errObj is set.
func (c *Conn) Reply(id json.RawMessage, result json.RawMessage, errObj json.RawMessage) error {
	var msg []byte
	if errObj != nil {
		msg = wire.RawError(id, errObj)
	} else {
		msg = wire.Result(id, result)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.tr.send(ctx, msg, nil)
}

// SendRaw writes an already-built message (used to relay notifications upstream).
func (c *Conn) SendRaw(ctx context.Context, msg []byte) error { return c.tr.send(ctx, msg, nil) }
