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
// S13). So while exactly one call to any plugin is in flight, a goroutine keeps this
// process's CPU busy for up to busyPoll: it yields to the other goroutines, then to the
// machine's other threads (sched_yield), the plugin's among them. The CPU stays awake
// and goes to whichever thread is ready, and the same round trip took 29 µs. A second
// call in flight, the call's end or the time limit stop it. Under load nothing spins.
//
// The plugin packages import nothing else of the module, so this mirrors the setting,
// the pause and the yield of internal/upstream/busypoll.go rather than sharing them.

var busyPoll atomic.Int64 // nanoseconds; 0: off

// quiet reports whether the host has no other request in progress (nil: assume so); a
// busy wait needs the CPU to be otherwise idle.
var quiet atomic.Pointer[func() bool]

func isQuiet() bool {
	q := quiet.Load()
	return q == nil || (*q)()
}

// inFlight counts the unary calls to plugins in flight in this process.
var inFlight atomic.Int32

// SetBusyPoll sets how long the only plugin call in flight keeps the CPU busy (d <= 0:
// never), while isQuiet (nil: always) reports that the host has no other request in
// progress. One CPU, or a system other than Linux, never busy-waits.
func SetBusyPoll(d time.Duration, isQuiet func() bool) {
	if d < 0 || runtime.NumCPU() < 2 || !busyPollSupported {
		d = 0
	}
	busyPoll.Store(int64(d))
	pauseUntil.Store(0)
	if isQuiet == nil {
		quiet.Store(nil)
	} else {
		quiet.Store(&isQuiet)
	}
}

// busyUnary is the host's unary interceptor: it counts the call and, when it is the only
// one, keeps the CPU busy while it is in flight.
func busyUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	n := inFlight.Add(1)
	defer inFlight.Add(-1)
	if d := time.Duration(busyPoll.Load()); d > 0 && n == 1 && runtime.GOMAXPROCS(0) >= 2 && isQuiet() &&
		int64(time.Since(epoch)) >= pauseUntil.Load() {
		done := new(atomic.Bool)
		defer done.Store(true)
		go busyWait(done, d)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// A busy wait that gave way (a second call, another request) pauses busy waiting for
// backoffAfterGiveWay (until pauseUntil, monotonic since epoch): with two or three clients
// the next request would interrupt it anyway, after it took the CPU from them.
const backoffAfterGiveWay = 50 * time.Millisecond

var (
	epoch      = time.Now()
	pauseUntil atomic.Int64
)

// spins counts the busy waits started and spinning those running, for tests.
var spins, spinning atomic.Int64

func busyWait(done *atomic.Bool, d time.Duration) {
	spins.Add(1)
	spinning.Add(1)
	defer spinning.Add(-1)
	start := time.Now()
	for !done.Load() && time.Since(start) < d {
		if inFlight.Load() > 1 || !isQuiet() {
			if !done.Load() { // not the call's own end, read in between
				pauseUntil.Store(int64(time.Since(epoch) + backoffAfterGiveWay))
			}
			return
		}
		runtime.Gosched()
		yieldCPU()
	}
}
