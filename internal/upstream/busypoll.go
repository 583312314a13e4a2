package upstream

import (
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/busywait"
	"github.com/mcpgw/mcpgw/internal/httpclient"
)

// Busy polling for an upstream's answer (upstream.busy_poll): an HTTP upstream's socket
// (awaitAnswer), or the signal of the reader of a stdio or SSE upstream (awaitSignal).
//
// A sequential tool call waits on the upstream about as long as the upstream takes to
// answer, tens to hundreds of microseconds for a fast tool. Parked in the network poller,
// the waiting thread sleeps, its CPU goes idle, and the answer has to wake it again: on a
// virtual machine that wake-up is an inter-processor interrupt and costs more than the
// gateway's whole forwarding work (docs/performance.md, S1). So when busy polling is on
// and exactly one call of the gateway is waiting for an answer, it polls its socket
// without blocking for up to the busy-poll time, yielding its CPU to other threads and
// goroutines between two polls, and reads the answer the moment it is there. As soon as
// a second call waits, or the time is up, calls wait in the poller as before: under load,
// spinning would take CPU the upstream and the other calls need, and a slow tool is not
// worth it. It is off by default (docs/performance.md says why).

// BusyPoll is one gateway's busy polling: its setting and how its polls ended (a
// busywait.Spinner), and the calls and requests it counts. Each gateway has its own
// (Dialer.Busy); a nil *BusyPoll never polls. Its methods are safe for concurrent use.
type BusyPoll struct {
	// s is upstream.busy_poll, the back-off after a poll gave way, and the polls' ends.
	s *busywait.Spinner
	// waiting counts the calls waiting for an upstream's answer.
	waiting atomic.Int32
	// requests counts the requests the gateway is handling (RequestStarted, RequestEnded).
	// Polling needs the CPU to be otherwise idle, and with a second request in progress it
	// is not: at four sequential clients, polling whenever one call waited cost 15% of the
	// throughput (docs/performance.md).
	requests atomic.Int32
}

// BusyStats counts how one gateway's polls ended.
type BusyStats struct {
	Caught   int64 // the answer came while the call polled
	GaveWay  int64 // another call started waiting, or another request came
	TimedOut int64 // the busy-poll time was up first
}

// NewBusyPoll is busy polling for d (SetDuration).
func NewBusyPoll(d time.Duration) *BusyPoll { return &BusyPoll{s: busywait.New(d)} }

// SetDuration sets upstream.busy_poll (d <= 0 turns busy polling off). It applies from the
// next call; connections made while it was off are not polled (their upstream was never
// checked for being this process). Machines with one CPU never busy-poll (the upstream
// needs that CPU to answer), and neither do systems other than Linux (busywait.Supported).
func (b *BusyPoll) SetDuration(d time.Duration) { b.s.SetDuration(d) }

// Duration is how long the only waiting call polls (0: busy polling is off).
func (b *BusyPoll) Duration() time.Duration {
	if b == nil {
		return 0
	}
	return b.s.Duration()
}

// On reports whether busy polling is on.
func (b *BusyPoll) On() bool { return b.Duration() > 0 }

// Stats is how the polls ended so far.
func (b *BusyPoll) Stats() BusyStats {
	if b == nil {
		return BusyStats{}
	}
	st := b.s.Stats()
	return BusyStats{Caught: st.Caught, GaveWay: st.GaveWay, TimedOut: st.TimedOut}
}

// RequestStarted and RequestEnded bracket every request the gateway handles.
func (b *BusyPoll) RequestStarted() {
	if b != nil {
		b.requests.Add(1)
	}
}

// RequestEnded: see RequestStarted.
func (b *BusyPoll) RequestEnded() {
	if b != nil {
		b.requests.Add(-1)
	}
}

// Quiet reports whether the gateway handles at most one request: the only case in which
// it waits busily for an answer.
func (b *BusyPoll) Quiet() bool { return b == nil || b.requests.Load() <= 1 }

// waitStart and waitEnd bracket a call's wait for an upstream's answer head.
func (b *BusyPoll) waitStart() {
	if b != nil {
		b.waiting.Add(1)
	}
}

func (b *BusyPoll) waitEnd() {
	if b != nil {
		b.waiting.Add(-1)
	}
}

// awaitAnswer polls c until the answer's first bytes are there, the busy-poll time is
// up, or another call starts waiting; the caller has counted itself in waiting. It
// returns at once when busy polling is off, another call was already waiting, or data is
// buffered.
func (b *BusyPoll) awaitAnswer(c *httpclient.Conn) {
	if b == nil || !c.Pollable() || c.Buffered() > 0 || b.waiting.Load() != 1 {
		return
	}
	b.spin(c.Readable) // readable: the answer, its end, an error
}

// busyWaiter is a BusyPoll as the HTTP client's httpclient.Waiter.
type busyWaiter struct{ b *BusyPoll }

func (w busyWaiter) On() bool { return w.b.On() }
func (w busyWaiter) AwaitAnswer(c *httpclient.Conn) {
	w.b.waitStart()
	w.b.awaitAnswer(c)
}
func (w busyWaiter) Answered() { w.b.waitEnd() }

// awaitSignal busy-waits for the call's next message (a stdio or SSE upstream's, delivered
// by the connection's reader) while the call is the only one waiting for an answer, as
// awaitAnswer does for an HTTP upstream's socket; true when the message came. The reader
// is parked in the network poller, but a CPU kept busy, and handed to whichever thread is
// ready, needs no wake-up from idle when the answer arrives (docs/performance.md).
func (k *Call) awaitSignal() bool {
	b := k.conn.busy
	if !b.On() {
		return false
	}
	if ok, isB := k.conn.tr.(interface{ busyOK() bool }); !isB || !ok.busyOK() {
		return false
	}
	if b.waiting.Add(1) != 1 {
		b.waiting.Add(-1)
		return false
	}
	defer b.waiting.Add(-1)
	return b.spin(func() bool {
		select {
		case <-k.sig:
			return true
		default:
			return false
		}
	})
}

// spin polls ready until it reports true, another call waits (waiting is no longer 1),
// another request is in progress (Quiet) or the busy-poll time has passed (b.s.Wait); it
// reports whether ready did. It does not spin at all when busy polling is off, paused
// after giving way, or the process has one P.
func (b *BusyPoll) spin(ready func() bool) bool {
	if !b.s.May() || !b.Quiet() {
		return false
	}
	return b.s.Wait(ready, func() bool { return b.waiting.Load() != 1 || !b.Quiet() })
}

// busyOK: a stdio upstream is always another process.
func (t *stdioTransport) busyOK() bool { return true }

// busyOK: a streamable HTTP upstream reached directly over TCP (its answer streams come
// through the transport's reader); not through a proxy, and not an in-process server.
func (t *streamTransport) busyOK() bool { return t.ep.Direct() }
