package upstream

import (
	"context"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/httpclient"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Call is one request in flight to the upstream. Related messages (notifications and
// requests the upstream sends on the request's stream or routed to it) and finally the
// response arrive on it in order.
type Call struct {
	ID     int64
	Method string
	// Owner is the downstream side of the call, as given to Begin (nil: none).
	Owner Owner
	conn  *Conn

	mu    sync.Mutex
	queue [][]byte
	sig   chan struct{}
	resp  []byte
	msg   wire.Msg // resp as the reader parsed it (Response)
	// parsed: msg holds resp
	parsed bool
	fin    bool
	err    error
	Start  time.Time
	// deadline bounds the call: the request on the wire and Next (zero: none).
	deadline time.Time
	// headers are extra header fields a streamable HTTP transport sends with the request
	// (the W3C trace context when tracing is on), checked when set (SetHeaders, in the
	// owner's Attach, before the request leaves); nil for nearly every call.
	headers []Header
}

// Header is one extra header field of a call's request.
type Header struct {
	Name, Value string
}

// SetHeaders gives the call extra header fields for a streamable HTTP upstream (other
// transports have no headers per request). A field that is not a token name with a value
// free of CR, LF and NUL, or one the HTTP client writes itself, is refused with an error,
// and then none is set. Call it from Attach, before the request leaves.
func (k *Call) SetHeaders(h []Header) error {
	for _, f := range h {
		if err := httpclient.CheckField(f.Name, f.Value); err != nil {
			return err
		}
	}
	k.headers = h
	return nil
}

func newCall(c *Conn, id int64, method string) *Call {
	return &Call{ID: id, Method: method, conn: c, sig: make(chan struct{}, 1), Start: time.Now()}
}

// MaxRelated bounds the related messages (progress, log lines, server requests) waiting
// for one call's client: an upstream that sends faster than a client reads must not grow
// the gateway's memory. Past it, Push refuses.
const MaxRelated = 1024

// Push queues a related message for the caller. It reports false, queueing nothing, when
// the call has ended or MaxRelated messages are already waiting (the client is not keeping
// up): the caller drops a notification and answers a request with an error.
func (k *Call) Push(raw []byte) bool {
	k.mu.Lock()
	ok := !k.fin && len(k.queue) < MaxRelated
	if ok {
		k.queue = append(k.queue, raw)
	}
	k.mu.Unlock()
	if ok {
		k.signal()
	}
	return ok
}

func (k *Call) signal() {
	select {
	case k.sig <- struct{}{}:
	default:
	}
}

func (k *Call) finish(resp []byte, err error) { k.finishWith(resp, nil, err) }

// finishWith ends the call with its response resp, which the reader parsed into m.
func (k *Call) finishWith(resp []byte, m *wire.Msg, err error) {
	k.mu.Lock()
	if k.fin {
		k.mu.Unlock()
		return
	}
	k.fin, k.resp, k.err = true, resp, err
	switch {
	case m != nil:
		k.msg, k.parsed = *m, true
	case resp != nil:
		k.parsed = wire.ParseInto(resp, &k.msg) == nil
	}
	k.mu.Unlock()
	k.signal()
}

// Response is the call's final response as the connection's reader parsed it, once Next
// has returned it: the answer is scanned once on its way, not again by the caller. nil
// before then, or when the call ended without one.
func (k *Call) Response() *wire.Msg {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.fin || !k.parsed {
		return nil
	}
	return &k.msg
}

// Next waits for the next related message (related=true) or the final response. It returns
// ctx's error if ctx ends first, context.DeadlineExceeded once the call's deadline has
// passed, and ErrClosed-wrapped errors when the connection dies. A timer for the deadline
// is made only if Next has to wait.
func (k *Call) Next(ctx context.Context) (raw []byte, final bool, err error) {
	var timer *time.Timer
	var expired <-chan time.Time
	spun := false
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		k.mu.Lock()
		if len(k.queue) > 0 {
			raw = k.queue[0]
			k.queue[0] = nil
			k.queue = k.queue[1:]
			k.mu.Unlock()
			return raw, false, nil
		}
		if k.fin {
			resp, err := k.resp, k.err
			k.mu.Unlock()
			return resp, true, err
		}
		k.mu.Unlock()
		if !spun {
			spun = true
			if k.awaitSignal() { // busypoll.go
				continue
			}
		}
		if timer == nil && !k.deadline.IsZero() {
			d := time.Until(k.deadline)
			if d <= 0 {
				return nil, false, context.DeadlineExceeded
			}
			timer = time.NewTimer(d)
			expired = timer.C
		}
		select {
		case <-k.sig:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-expired:
			return nil, false, context.DeadlineExceeded
		}
	}
}

// Conn returns the connection the call runs on.
func (k *Call) Conn() *Conn { return k.conn }
