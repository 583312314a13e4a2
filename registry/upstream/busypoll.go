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

// spin calls ready until it reports true, another call waits (waiting is no longer 1) or
// busyPoll has passed, yielding to goroutines and then threads between two tries; it
// reports whether ready did. It does not spin at all when busy polling is off or the
// process has one P.
func spin(ready func() bool) bool {
	d := time.Duration(busyPoll.Load())
	if d <= 0 || runtime.GOMAXPROCS(0) < 2 {
		return false
	}
	start := time.Now()
	for {
		if ready() {
			busyStats.caught.Add(1)
			return true
		}
		if waiting.Load() != 1 {
			busyStats.gaveWay.Add(1)
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
