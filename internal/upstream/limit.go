package upstream

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Limiter bounds the requests one upstream instance serves at once (servers.<name>.
// max_concurrency). Requests beyond the limit wait in a bounded FIFO queue; a request that
// waits longer than the queue's timeout, or finds the queue full, fails with a BusyError.
// A waiter is one small struct and one channel, made only when the request has to wait:
// no goroutine per call, and nothing at all when a slot is free.
type Limiter struct {
	max     int
	maxWait int
	timeout time.Duration
	// MaxWaitPerOwner bounds the requests of one owner (the gateway: one agent) waiting
	// in the queue, so that one owner cannot fill it and make every other wait or be
	// refused (servers.<name>.queue.max_per_agent). Zero: no bound but the queue's own.
	// Set it before the limiter is used.
	MaxWaitPerOwner int

	mu      sync.Mutex
	running int
	queue   []*waiter      // FIFO; a granted or abandoned waiter leaves it
	owners  map[string]int // waiters in the queue by owner (only with MaxWaitPerOwner)
}

type waiter struct {
	ready   chan struct{} // closed when the waiter is given a slot
	granted bool
	owner   string
}

// BusyError is a request refused because the instance stayed busy: the queue was full, or
// the request waited the queue's whole timeout.
type BusyError struct {
	Ahead  int           // requests ahead of it (running and queued) when it gave up
	Waited time.Duration // how long it waited
	// Owner, OwnerWaiting and OwnerShare are set when the request was refused because
	// its owner already had its whole share of the queue waiting.
	Owner        string
	OwnerWaiting int
	OwnerShare   int
}

func (e *BusyError) Error() string {
	if e.OwnerShare > 0 {
		return fmt.Sprintf("server busy: %q already has %d calls waiting for this instance, its whole share of the queue (%d)", e.Owner, e.OwnerWaiting, e.OwnerShare)
	}
	return fmt.Sprintf("server busy: %d calls ahead, waited %.1fs", e.Ahead, e.Waited.Seconds())
}

// NewLimiter returns a limiter of max requests at once, with at most maxQueue waiting for
// timeout each. max <= 0 means no limit: it returns nil, and a nil *Limiter is not
// consulted (callers check for nil, so an unlimited instance costs nothing).
func NewLimiter(max, maxQueue int, timeout time.Duration) *Limiter {
	if max <= 0 {
		return nil
	}
	return &Limiter{max: max, maxWait: maxQueue, timeout: timeout}
}

// Max is the number of requests served at once.
func (l *Limiter) Max() int { return l.max }

// TryAcquire takes a slot if one is free and nobody is waiting (FIFO: a newcomer does not
// overtake the queue).
func (l *Limiter) TryAcquire() bool {
	l.mu.Lock()
	ok := l.running < l.max && len(l.queue) == 0
	if ok {
		l.running++
	}
	l.mu.Unlock()
	return ok
}

// Free reports whether a request arriving now would get a slot at once: one is free and
// nobody waits (as TryAcquire, without taking it). The answer may be stale by the time the
// caller acts on it; it is a hint for choosing where to send a request, never a promise.
func (l *Limiter) Free() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running < l.max && len(l.queue) == 0
}

// Acquire takes a slot, waiting in FIFO order behind earlier requests. It returns nil with
// the slot held (Release gives it back), a *BusyError when the queue is full or the wait
// reached the queue's timeout, or ctx's error when ctx ended first (the request leaves the
// queue; it never reaches the upstream).
func (l *Limiter) Acquire(ctx context.Context) error { return l.AcquireAs(ctx, "") }

// AcquireAs is Acquire for a request of owner: when owner already has MaxWaitPerOwner
// requests waiting, it is refused at once with a *BusyError naming owner.
func (l *Limiter) AcquireAs(ctx context.Context, owner string) error {
	start := time.Now()
	l.mu.Lock()
	if l.running < l.max && len(l.queue) == 0 {
		l.running++
		l.mu.Unlock()
		return nil
	}
	if len(l.queue) >= l.maxWait {
		ahead := l.running + len(l.queue)
		l.mu.Unlock()
		return &BusyError{Ahead: ahead}
	}
	if share := l.MaxWaitPerOwner; share > 0 {
		if n := l.owners[owner]; n >= share {
			ahead := l.running + len(l.queue)
			l.mu.Unlock()
			return &BusyError{Ahead: ahead, Owner: owner, OwnerWaiting: n, OwnerShare: share}
		}
		if l.owners == nil {
			l.owners = map[string]int{}
		}
		l.owners[owner]++
	}
	w := &waiter{ready: make(chan struct{}), owner: owner}
	l.queue = append(l.queue, w)
	l.mu.Unlock()

	var expired <-chan time.Time
	if l.timeout > 0 {
		t := time.NewTimer(l.timeout)
		defer t.Stop()
		expired = t.C
	}
	var err error
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
	}
	l.mu.Lock()
	if w.granted {
		l.mu.Unlock()
		if err != nil {
			// Given a slot as the client went away: pass it on, the request is not sent.
			l.Release()
			return err
		}
		// Given a slot as the timeout fired: keep it (the caller releases it as usual).
		return nil
	}
	ahead := l.running
	for i, q := range l.queue {
		if q == w {
			ahead += i
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			l.leftQueue(w)
			break
		}
	}
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return &BusyError{Ahead: ahead, Waited: time.Since(start)}
}

// Release gives a slot back: to the first waiter, else to the pool.
func (l *Limiter) Release() {
	l.mu.Lock()
	if len(l.queue) > 0 {
		w := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		l.leftQueue(w)
		w.granted = true
		close(w.ready)
	} else if l.running > 0 {
		l.running--
	}
	l.mu.Unlock()
}

// leftQueue uncounts a waiter that left the queue (under mu).
func (l *Limiter) leftQueue(w *waiter) {
	if l.MaxWaitPerOwner <= 0 {
		return
	}
	if n := l.owners[w.owner]; n <= 1 {
		delete(l.owners, w.owner)
	} else {
		l.owners[w.owner] = n - 1
	}
}

// Waiting is the number of requests in the queue.
func (l *Limiter) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}
