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

	mu      sync.Mutex
	running int
	queue   []*waiter // FIFO; a granted or abandoned waiter leaves it
}

type waiter struct {
	ready   chan struct{} // closed when the waiter is given a slot
	granted bool
}

// BusyError is a request refused because the instance stayed busy: the queue was full, or
// the request waited the queue's whole timeout.
type BusyError struct {
	Ahead  int           // requests ahead of it (running and queued) when it gave up
	Waited time.Duration // how long it waited
}

func (e *BusyError) Error() string {
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

// Acquire takes a slot, waiting in FIFO order behind earlier requests. It returns nil with
// the slot held (Release gives it back), a *BusyError when the queue is full or the wait
// reached the queue's timeout, or ctx's error when ctx ended first (the request leaves the
// queue; it never reaches the upstream).
func (l *Limiter) Acquire(ctx context.Context) error {
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
	w := &waiter{ready: make(chan struct{})}
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
		w.granted = true
		close(w.ready)
	} else if l.running > 0 {
		l.running--
	}
	l.mu.Unlock()
}

// Waiting is the number of requests in the queue.
func (l *Limiter) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.queue)
}
