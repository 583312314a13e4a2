package upstream

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Busy polling for an upstream's answer (upstream.busy_poll): an HTTP upstream's socket
// (awaitAnswer), or the signal of the reader of a stdio or SSE upstream (awaitSignal).
//
// A sequential tool call waits on the upstream about as long as the upstream takes to
// answer, tens to hundreds of microseconds for a fast tool. Parked in the network poller,
// the waiting thread sleeps, its CPU goes idle, and the answer has to wake it again: on a
// virtual machine that wake-up is an inter-processor interrupt and costs more than the
// gateway's whole forwarding work (docs/performance.md, S1). So when exactly one call is
// waiting for an answer in the whole process, it polls its socket without blocking for up
// to busyPoll, yielding its CPU to other threads and goroutines between two polls, and
// reads the answer the moment it is there. As soon as a second call waits, or the time is
// up, calls wait in the poller as before: under load, spinning would take CPU the upstream
// and the other calls need, and a slow tool is not worth it.

// busyPoll is how long the only waiting call polls (0: never), upstream.busy_poll.
var busyPoll atomic.Int64

// waiting counts the calls waiting for an HTTP upstream's answer head.
var waiting atomic.Int32

// requests counts the requests the gateway is handling (RequestStarted, RequestEnded).
// Polling needs the CPU to be otherwise idle, and with a second request in progress it
// is not: at four sequential clients, polling whenever one call waited cost 15% of the
// throughput (docs/performance.md).
var requests atomic.Int32

// RequestStarted and RequestEnded bracket every request the gateway handles.
func RequestStarted() { requests.Add(1) }

// RequestEnded: see RequestStarted.
func RequestEnded() { requests.Add(-1) }

// Quiet reports whether the gateway handles at most one request: the only case in which
// it waits busily for an answer.
func Quiet() bool { return requests.Load() <= 1 }

// Polling that gave way to another request says the gateway is not serving one client
// at a time just now: polling then stops for backoffAfterGiveWay (until pauseUntil, on
// the monotonic clock since epoch), so that two or three clients do not pay for a poll
// that the next request interrupts (at two clients that cost 7% of the throughput).
const backoffAfterGiveWay = 50 * time.Millisecond

var (
	epoch      = time.Now()
	pauseUntil atomic.Int64
)

// busyStats counts how polls ended: the answer came (caught), another call started
// waiting (gaveWay), or the time was up (timedOut).
var busyStats struct{ caught, gaveWay, timedOut atomic.Int64 }

// SetBusyPoll sets upstream.busy_poll for the process (d <= 0 turns busy polling off).
// It applies from the next call. Machines with one CPU never busy-poll (the upstream
// needs that CPU to answer), and neither do systems other than Linux (busypoll_other.go).
func SetBusyPoll(d time.Duration) {
	if d < 0 || runtime.NumCPU() < 2 || !busyPollSupported {
		d = 0
	}
	busyPoll.Store(int64(d))
	pauseUntil.Store(0)
}

// awaitAnswer polls c until the answer's first bytes are there, the busy-poll time is
// up, or another call starts waiting; the caller has counted itself in waiting. It
// returns at once when busy polling is off, another call was already waiting, or data is
// buffered.
func (c *h1Conn) awaitAnswer() {
	if !c.busy || c.raw == nil || c.br.Buffered() > 0 || waiting.Load() != 1 {
		return
	}
	spin(func() bool {
		c.peekOK = false
		return c.raw.Read(c.peekFn) != nil || !c.peekOK // readable: the answer, its end, an error
	})
}

// awaitSignal busy-waits for the call's next message (a stdio or SSE upstream's, delivered
// by the connection's reader) while the call is the only one waiting for an answer, as
// awaitAnswer does for an HTTP upstream's socket; true when the message came. The reader
// is parked in the network poller, but a CPU kept busy, and handed to whichever thread is
// ready, needs no wake-up from idle when the answer arrives (docs/performance.md).
func (k *Call) awaitSignal() bool {
	if b, ok := k.conn.tr.(interface{ busyOK() bool }); !ok || !b.busyOK() {
		return false
	}
	if waiting.Add(1) != 1 {
		waiting.Add(-1)
		return false
	}
	defer waiting.Add(-1)
	return spin(func() bool {
		select {
		case <-k.sig:
			return true
		default:
			return false
		}
	})
}

// spin calls ready until it reports true, another call waits (waiting is no longer 1),
// another request is in progress (Quiet) or busyPoll has passed, yielding to goroutines and then threads between two tries; it
// reports whether ready did. It does not spin at all when busy polling is off or the
// process has one P.
func spin(ready func() bool) bool {
	d := time.Duration(busyPoll.Load())
	if d <= 0 || runtime.GOMAXPROCS(0) < 2 || !Quiet() || int64(time.Since(epoch)) < pauseUntil.Load() {
		return false
	}
	start := time.Now()
	for {
		if ready() {
			busyStats.caught.Add(1)
			return true
		}
		if waiting.Load() != 1 || !Quiet() {
			busyStats.gaveWay.Add(1)
			pauseUntil.Store(int64(time.Since(epoch) + backoffAfterGiveWay))
			return false
		}
		if time.Since(start) > d {
			busyStats.timedOut.Add(1)
			return false
		}
		runtime.Gosched() // other goroutines of the gateway first,
		yieldCPU()        // then other threads on this CPU (the upstream's, perhaps)
	}
}

// busyOK: a stdio upstream is always another process.
func (t *stdioTransport) busyOK() bool { return true }

// busyOK: a streamable HTTP upstream that another process serves, directly (its answer
// streams come through the transport's reader).
func (t *streamTransport) busyOK() bool { return t.ep.proxyAddr == "" && t.ep.here.Load() == 2 }

// isServedHere is servedHere; the tests of busy polling, whose upstreams are in the test
// process, replace it.
var isServedHere = servedHere
