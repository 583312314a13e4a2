package instances

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff paces the restarts of an upstream, by the registry's Timing: a shared server's
// supervision and a per_session instance brought back after it exited both wait with it,
// from BackoffMin doubling up to BackoffMax, jittered so that a fleet of gateways (or of
// sessions) does not restart in lock-step.
type backoff struct {
	t   Timing
	cur time.Duration
}

func newBackoff(t Timing) backoff { return backoff{t: t, cur: t.BackoffMin} }

// current is the back-off the next sleep is drawn from.
func (b *backoff) current() time.Duration { return b.cur }

// stable starts the back-off over when the upstream ran for Timing.StableAfter.
func (b *backoff) stable(ranFor time.Duration) {
	if ranFor >= b.t.StableAfter {
		b.cur = b.t.BackoffMin
	}
}

// sleep waits between half and all of the current back-off, then doubles it (up to
// BackoffMax). It reports false when ctx ended first.
func (b *backoff) sleep(ctx context.Context) bool {
	d := b.cur/2 + time.Duration(rand.Int64N(int64(b.cur/2)+1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	if b.cur *= 2; b.cur > b.t.BackoffMax {
		b.cur = b.t.BackoffMax
	}
	return true
}
