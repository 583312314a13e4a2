package external

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
)

// Busy waiting while a plugin call is in flight (the gateway's upstream.busy_poll).
//
// A tool call of an out-of-process plugin is one gRPC round trip, and the host waits for
// it. Between the request and the answer the host's threads have nothing to do: they
// sleep, their virtual CPU goes idle, and the answer has to wake one with an
// inter-processor interrupt. On the project's 2-vCPU machine a bare round trip took 89 µs
// at p50 that way, and 21 µs with both processes pinned to one CPU (docs/performance.md,
// S13). So while exactly one call to any of the host's plugins is in flight, a goroutine
// keeps this process's CPU busy for up to the busy-poll time: it yields to the other goroutines, then to the
// machine's other threads (sched_yield), the plugin's among them. The CPU stays awake
// and goes to whichever thread is ready, and the same round trip took 29 µs. A second
// call in flight, the call's end or the time limit stop it. Under load nothing spins.
//
// It is off unless the host turns it on. The plugin packages import nothing else of the
// module, so this mirrors the setting, the pause and the yield of
// internal/upstream/busypoll.go rather than sharing them.

// BusyWait is one host's busy waiting for plugin calls: its setting, the calls in flight
// it counts and how its waits ended. A host (the gateway's registry) gives the same one to
// every plugin it launches (Command.BusyWait); a nil *BusyWait never waits busily. Its
// methods are safe for concurrent use.
type BusyWait struct {
	d atomic.Int64 // nanoseconds; 0: off
	// quiet reports whether the host has no other request in progress (nil: assume so);
	// a busy wait needs the CPU to be otherwise idle.
	quiet func() bool
	// inFlight counts the host's unary calls to plugins in flight.
	inFlight atomic.Int32
	// A busy wait that gave way pauses busy waiting until pauseUntil, monotonic since
	// epoch (backoffAfterGiveWay).
	epoch      time.Time
	pauseUntil atomic.Int64
	// spins counts the busy waits started and spinning those running.
	spins, spinning atomic.Int64
	// How the busy waits ended: with the call (caught), for another call or request
	// (gaveWay), or at the time limit (timedOut).
	caught, gaveWay, timedOut atomic.Int64
}

// BusyStats counts one host's busy waits and how they ended.
type BusyStats struct {
	Waits    int64 // busy waits started
	Caught   int64 // ended by the call's answer
	GaveWay  int64 // ended by a second call in flight or another request of the host
	TimedOut int64 // ended by the time limit
}

// NewBusyWait is busy waiting for up to d per call (SetDuration) while quiet (nil:
// always) reports that the host has no other request in progress.
func NewBusyWait(d time.Duration, quiet func() bool) *BusyWait {
	b := &BusyWait{quiet: quiet, epoch: time.Now()}
	b.SetDuration(d)
	return b
}

// SetDuration sets how long the only plugin call in flight keeps the CPU busy (d <= 0:
// never). One CPU, or a system other than Linux, never busy-waits.
func (b *BusyWait) SetDuration(d time.Duration) {
	if d < 0 || runtime.NumCPU() < 2 || !busyPollSupported {
		d = 0
	}
	b.d.Store(int64(d))
	b.pauseUntil.Store(0)
}

// Stats is how many busy waits started and how they ended.
func (b *BusyWait) Stats() BusyStats {
	if b == nil {
		return BusyStats{}
	}
	return BusyStats{Waits: b.spins.Load(), Caught: b.caught.Load(), GaveWay: b.gaveWay.Load(), TimedOut: b.timedOut.Load()}
}

func (b *BusyWait) isQuiet() bool { return b.quiet == nil || b.quiet() }

// unary is the host's unary interceptor: it counts the call and, when it is the only
// one, keeps the CPU busy while it is in flight.
func (b *BusyWait) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	n := b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	if d := time.Duration(b.d.Load()); d > 0 && n == 1 && runtime.GOMAXPROCS(0) >= 2 && b.isQuiet() &&
		int64(time.Since(b.epoch)) >= b.pauseUntil.Load() {
		done := new(atomic.Bool)
		defer done.Store(true)
		go b.wait(done, d)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// A busy wait that gave way (a second call, another request) pauses busy waiting for
// backoffAfterGiveWay: with two or three clients the next request would interrupt it
// anyway, after it took the CPU from them.
const backoffAfterGiveWay = 50 * time.Millisecond

func (b *BusyWait) wait(done *atomic.Bool, d time.Duration) {
	b.spins.Add(1)
	b.spinning.Add(1)
	defer b.spinning.Add(-1)
	start := time.Now()
	for !done.Load() {
		if time.Since(start) >= d {
			b.timedOut.Add(1)
			return
		}
		if b.inFlight.Load() > 1 || !b.isQuiet() {
			if !done.Load() { // not the call's own end, read in between
				b.gaveWay.Add(1)
				b.pauseUntil.Store(int64(time.Since(b.epoch) + backoffAfterGiveWay))
				return
			}
			break
		}
		runtime.Gosched()
		yieldCPU()
	}
	b.caught.Add(1)
}
