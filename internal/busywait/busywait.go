// Package busywait is the machine behind upstream.busy_poll, shared by the gateway's
// upstream calls (internal/upstream) and a host's plugin calls (internal/pluginproc).
package busywait

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Why a waiting call keeps its CPU busy, and why only the only one.
//
// A call that waits for an answer parks its thread: the thread sleeps, its virtual CPU goes
// idle, and the answer has to wake it with an inter-processor interrupt, which on the
// project's 2-vCPU machine costs more than the gateway's whole forwarding work
// (docs/performance.md, S1 and S13). So while exactly one call waits and the process has
// nothing else to do, the call keeps its CPU busy for up to the busy-poll time: it polls
// for the answer, yielding to the other goroutines and then to the machine's other
// threads (sched_yield) between two polls, so the CPU stays awake and goes to whichever
// thread is ready. A second call, another request, the answer or the time limit stop it.
// Under load nothing spins.

// Spinner is one setting of busy waiting, the back-off after it gave way, and how its
// waits ended. A nil *Spinner is not valid; its users keep nil for "never". Its methods
// are safe for concurrent use.
type Spinner struct {
	d atomic.Int64 // nanoseconds; 0: off
	// A wait that gave way pauses busy waiting until pauseUntil, on the monotonic clock
	// since epoch (BackoffAfterGiveWay).
	epoch      time.Time
	pauseUntil atomic.Int64
	// spins counts the waits started and spinning those running.
	spins, spinning atomic.Int64
	// How the waits ended: the answer came (caught), another call or request started
	// (gaveWay), or the time was up (timedOut).
	caught, gaveWay, timedOut atomic.Int64
}

// Stats counts the waits of a Spinner and how they ended.
type Stats struct {
	Waits    int64 // busy waits started
	Caught   int64 // ended by the answer
	GaveWay  int64 // ended by another call or request
	TimedOut int64 // ended by the time limit
}

// BackoffAfterGiveWay is how long busy waiting pauses after a wait gave way: it says the
// process is not serving one client at a time just now, and with two or three clients the
// next request would interrupt the wait anyway, after it took the CPU from them (at two
// clients that cost 7% of the throughput).
const BackoffAfterGiveWay = 50 * time.Millisecond

// New is busy waiting for up to d (SetDuration).
func New(d time.Duration) *Spinner {
	s := &Spinner{epoch: time.Now()}
	s.SetDuration(d)
	return s
}

// SetDuration sets how long the only waiting call keeps its CPU busy (d <= 0: never). A
// machine with one CPU never waits busily (the peer needs that CPU to answer), and
// neither does a system other than Linux (Supported).
func (s *Spinner) SetDuration(d time.Duration) {
	if d < 0 || runtime.NumCPU() < 2 || !Supported {
		d = 0
	}
	s.d.Store(int64(d))
	s.pauseUntil.Store(0)
}

// Duration is how long the only waiting call keeps its CPU busy (0: off).
func (s *Spinner) Duration() time.Duration { return time.Duration(s.d.Load()) }

// May reports whether a wait may start now: busy waiting is on, the process has two Ps,
// and it is not paused after giving way. The caller checks that the call is the only one
// and that the process is quiet.
func (s *Spinner) May() bool {
	return s.Duration() > 0 && runtime.GOMAXPROCS(0) >= 2 && int64(time.Since(s.epoch)) >= s.pauseUntil.Load()
}

// Wait keeps the CPU busy until ready reports true (the answer), giveWay reports true
// (another call or request: busy waiting then pauses for BackoffAfterGiveWay) or the
// busy-poll time has passed, yielding to goroutines and then threads between two tries;
// it reports whether ready did. The caller has checked May.
func (s *Spinner) Wait(ready, giveWay func() bool) bool {
	s.spins.Add(1)
	s.spinning.Add(1)
	defer s.spinning.Add(-1)
	d := s.Duration()
	start := time.Now()
	for {
		if ready() {
			s.caught.Add(1)
			return true
		}
		if giveWay() {
			if ready() { // the answer, read in between, ended the other's count
				s.caught.Add(1)
				return true
			}
			s.gaveWay.Add(1)
			s.pauseUntil.Store(int64(time.Since(s.epoch) + BackoffAfterGiveWay))
			return false
		}
		if time.Since(start) > d {
			s.timedOut.Add(1)
			return false
		}
		runtime.Gosched() // other goroutines of the process first,
		yieldCPU()        // then other threads on this CPU (the peer's, perhaps)
	}
}

// Spinning is how many waits are running.
func (s *Spinner) Spinning() int64 { return s.spinning.Load() }

// Stats is how many waits started and how they ended.
func (s *Spinner) Stats() Stats {
	return Stats{Waits: s.spins.Load(), Caught: s.caught.Load(), GaveWay: s.gaveWay.Load(), TimedOut: s.timedOut.Load()}
}

// PauseFor pauses busy waiting for d from now (for tests; 0 ends a pause).
func (s *Spinner) PauseFor(d time.Duration) {
	if d == 0 {
		s.pauseUntil.Store(0)
		return
	}
	s.pauseUntil.Store(int64(time.Since(s.epoch) + d))
}

// Paused reports whether busy waiting is paused after giving way.
func (s *Spinner) Paused() bool { return int64(time.Since(s.epoch)) < s.pauseUntil.Load() }
