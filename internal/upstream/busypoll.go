package upstream

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/h1"
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

// BusyPoll is one gateway's busy polling: its setting, the calls and requests it counts,
// and how its polls ended. Each gateway has its own (Dialer.Busy); a nil *BusyPoll never
// polls. Its methods are safe for concurrent use.
type BusyPoll struct {
	// d is how long the only waiting call polls (0: never), upstream.busy_poll.
	d atomic.Int64
	// waiting counts the calls waiting for an upstream's answer.
	waiting atomic.Int32
	// requests counts the requests the gateway is handling (RequestStarted, RequestEnded).
	// Polling needs the CPU to be otherwise idle, and with a second request in progress it
	// is not: at four sequential clients, polling whenever one call waited cost 15% of the
	// throughput (docs/performance.md).
	requests atomic.Int32
	// Polling that gave way to another request pauses until pauseUntil, on the monotonic
	// clock since epoch (backoffAfterGiveWay).
	epoch      time.Time
	pauseUntil atomic.Int64
	// How polls ended: the answer came (caught), another call or request started
	// (gaveWay), or the time was up (timedOut).
	caught, gaveWay, timedOut atomic.Int64
}

// BusyStats counts how one gateway's polls ended.
type BusyStats struct {
	Caught   int64 // the answer came while the call polled
	GaveWay  int64 // another call started waiting, or another request came
	TimedOut int64 // the busy-poll time was up first
}

// NewBusyPoll is busy polling for d (SetDuration).
func NewBusyPoll(d time.Duration) *BusyPoll {
	b := &BusyPoll{epoch: time.Now()}
	b.SetDuration(d)
	return b
}

// SetDuration sets upstream.busy_poll (d <= 0 turns busy polling off). It applies from the
// next call; connections made while it was off are not polled (their upstream was never
// checked for being this process). Machines with one CPU never busy-poll (the upstream
// needs that CPU to answer), and neither do systems other than Linux (busypoll_other.go).
func (b *BusyPoll) SetDuration(d time.Duration) {
	if d < 0 || runtime.NumCPU() < 2 || !busyPollSupported {
		d = 0
	}
	b.d.Store(int64(d))
	b.pauseUntil.Store(0)
}

// Duration is how long the only waiting call polls (0: busy polling is off).
func (b *BusyPoll) Duration() time.Duration {
	if b == nil {
		return 0
	}
	return time.Duration(b.d.Load())
}

// On reports whether busy polling is on.
func (b *BusyPoll) On() bool { return b.Duration() > 0 }

// Stats is how the polls ended so far.
func (b *BusyPoll) Stats() BusyStats {
	if b == nil {
		return BusyStats{}
	}
	return BusyStats{Caught: b.caught.Load(), GaveWay: b.gaveWay.Load(), TimedOut: b.timedOut.Load()}
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

// Polling that gave way to another request says the gateway is not serving one client
// at a time just now: polling then stops for backoffAfterGiveWay, so that two or three
// clients do not pay for a poll that the next request interrupts (at two clients that
// cost 7% of the throughput).
const backoffAfterGiveWay = 50 * time.Millisecond

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
func (b *BusyPoll) awaitAnswer(c *h1.Conn) {
	if b == nil || !c.Pollable() || c.Buffered() > 0 || b.waiting.Load() != 1 {
		return
	}
	b.spin(c.Readable) // readable: the answer, its end, an error
}

// busyWaiter is a BusyPoll as the HTTP client's h1.Waiter.
type busyWaiter struct{ b *BusyPoll }

func (w busyWaiter) On() bool { return w.b.On() }
func (w busyWaiter) AwaitAnswer(c *h1.Conn) {
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

// spin calls ready until it reports true, another call waits (waiting is no longer 1),
// another request is in progress (Quiet) or the busy-poll time has passed, yielding to
// goroutines and then threads between two tries; it reports whether ready did. It does
// not spin at all when busy polling is off or the process has one P.
func (b *BusyPoll) spin(ready func() bool) bool {
	d := b.Duration()
	if d <= 0 || runtime.GOMAXPROCS(0) < 2 || !b.Quiet() || int64(time.Since(b.epoch)) < b.pauseUntil.Load() {
		return false
	}
	start := time.Now()
	for {
		if ready() {
			b.caught.Add(1)
			return true
		}
		if b.waiting.Load() != 1 || !b.Quiet() {
			b.gaveWay.Add(1)
			b.pauseUntil.Store(int64(time.Since(b.epoch) + backoffAfterGiveWay))
			return false
		}
		if time.Since(start) > d {
			b.timedOut.Add(1)
			return false
		}
		runtime.Gosched() // other goroutines of the gateway first,
		yieldCPU()        // then other threads on this CPU (the upstream's, perhaps)
	}
}

// busyOK: a stdio upstream is always another process.
func (t *stdioTransport) busyOK() bool { return true }

// busyOK: a streamable HTTP upstream reached directly over TCP (its answer streams come
// through the transport's reader); not through a proxy, and not an in-process server.
func (t *streamTransport) busyOK() bool { return t.ep.Direct() }
