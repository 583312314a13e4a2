package pluginproc

import (
	"context"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/mcpgw/mcpgw/internal/busywait"
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
// It is off unless the host turns it on. The machine (the setting, the back-off after
// giving way, the yield, the counts) is internal/busywait's, as for upstream calls.

// BusyWait is one host's busy waiting for plugin calls: its setting, the calls in flight
// it counts and how its waits ended. A host (the gateway's registry) gives the same one to
// every plugin it launches (Command.BusyWait); a nil *BusyWait never waits busily. Its
// methods are safe for concurrent use.
type BusyWait struct {
	s *busywait.Spinner
	// quiet reports whether the host has no other request in progress (nil: assume so);
	// a busy wait needs the CPU to be otherwise idle.
	quiet func() bool
	// inFlight counts the host's unary calls to plugins in flight.
	inFlight atomic.Int32
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
	return &BusyWait{s: busywait.New(d), quiet: quiet}
}

// SetDuration sets how long the only plugin call in flight keeps the CPU busy (d <= 0:
// never). One CPU, or a system other than Linux, never busy-waits.
func (b *BusyWait) SetDuration(d time.Duration) { b.s.SetDuration(d) }

// Stats is how many busy waits started and how they ended.
func (b *BusyWait) Stats() BusyStats {
	if b == nil {
		return BusyStats{}
	}
	st := b.s.Stats()
	return BusyStats{Waits: st.Waits, Caught: st.Caught, GaveWay: st.GaveWay, TimedOut: st.TimedOut}
}

func (b *BusyWait) isQuiet() bool { return b.quiet == nil || b.quiet() }

// unary is the host's unary interceptor: it counts the call and, when it is the only
// one, keeps the CPU busy while it is in flight (until a second call or another request
// of the host).
func (b *BusyWait) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	n := b.inFlight.Add(1)
	defer b.inFlight.Add(-1)
	if n == 1 && b.s.May() && b.isQuiet() {
		done := new(atomic.Bool)
		defer done.Store(true)
		go b.s.Wait(done.Load, func() bool { return b.inFlight.Load() > 1 || !b.isQuiet() })
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}
