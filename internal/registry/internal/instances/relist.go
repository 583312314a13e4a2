package instances

import (
	"context"
	"sync"
	"time"
)

// relister paces the re-lists one upstream connection's list_changed provokes: at most one
// every interval (upstream.relist_interval). A notification that comes while a re-list is
// due or running is coalesced into the next one, which runs once the interval is over, so
// the last notification is always honoured but an upstream that sends them as fast as it
// can gets one re-list per interval, not one per notification. The first notification
// after a quiet interval re-lists at once. Its zero value is ready; one per connection.
type relister struct {
	mu    sync.Mutex
	busy  bool      // a re-list is due or running
	again bool      // a notification came while busy: one more re-list is due
	last  time.Time // when the last re-list began
}

// notify asks for a re-list: run (in a goroutine of the relister's) now, or once the
// interval since the last one is over; nothing more while one is due. ctx ends the wait.
func (l *relister) notify(ctx context.Context, interval time.Duration, run func()) {
	l.mu.Lock()
	if l.busy {
		l.again = true
		l.mu.Unlock()
		return
	}
	l.busy = true
	l.mu.Unlock()
	go l.loop(ctx, interval, run)
}

func (l *relister) loop(ctx context.Context, interval time.Duration, run func()) {
	for {
		l.mu.Lock()
		wait := time.Until(l.last.Add(interval))
		l.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				l.mu.Lock()
				l.busy, l.again = false, false
				l.mu.Unlock()
				return
			case <-t.C:
			}
		}
		l.mu.Lock()
		l.again = false
		l.last = time.Now()
		l.mu.Unlock()
		run()
		l.mu.Lock()
		if !l.again {
			l.busy = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}
