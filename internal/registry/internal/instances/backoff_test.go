package instances

import (
	"context"
	"testing"
	"time"
)

// TestBackoffPaces: each sleep lasts between half and all of the current back-off, which
// doubles up to BackoffMax, starts over after a stable run, and ends early with ctx.
func TestBackoffPaces(t *testing.T) {
	tm := Timing{BackoffMin: 4 * time.Millisecond, BackoffMax: 16 * time.Millisecond, StableAfter: time.Second}
	b := newBackoff(tm)
	want := []time.Duration{4, 8, 16, 16}
	for i, w := range want {
		w *= time.Millisecond
		if got := b.current(); got != w {
			t.Fatalf("step %d: back-off %v, want %v", i, got, w)
		}
		start := time.Now()
		if !b.sleep(context.Background()) {
			t.Fatalf("step %d: sleep ended as if cancelled", i)
		}
		if d := time.Since(start); d < w/2 {
			t.Fatalf("step %d: slept %v, less than half of %v", i, d, w)
		}
	}
	b.stable(time.Millisecond)
	if b.current() != tm.BackoffMax {
		t.Fatalf("a short run reset the back-off to %v", b.current())
	}
	b.stable(time.Second)
	if b.current() != tm.BackoffMin {
		t.Fatalf("a stable run left the back-off at %v, want %v", b.current(), tm.BackoffMin)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	long := newBackoff(Timing{BackoffMin: time.Hour, BackoffMax: time.Hour})
	if long.sleep(ctx) {
		t.Fatal("sleep with an ended context reported a full wait")
	}
	if long.current() != time.Hour {
		t.Fatalf("a cancelled sleep doubled the back-off to %v", long.current())
	}
}
