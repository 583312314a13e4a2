package telemetry

import (
	"math"
	"testing"
	"time"
)

// TestUsageQuantile: p50 and p99 come from a histogram's bucket counts as Prometheus's
// histogram_quantile reads them, and only from the calls of the window (a later reading
// less an earlier one).
func TestUsageQuantile(t *testing.T) {
	earlier := &usageHist{bounds: []float64{0.01, 0.1, 1, math.Inf(1)}, counts: []float64{5, 5, 5, 5}, total: 5}
	// Since then: 100 calls, 50 in (0, 0.01], 48 in (0.01, 0.1], 2 in (0.1, 1].
	now := &usageHist{bounds: earlier.bounds, counts: []float64{55, 103, 105, 105}, total: 105}
	d := now.minus(earlier)
	if got := d.quantile(0.5); math.Abs(got-0.01) > 1e-9 {
		t.Errorf("p50 = %v, want 0.01 (the 50th of 100 calls is the last of the first bucket)", got)
	}
	if got, want := d.quantile(0.99), 0.1+(1-0.1)*(99-98)/2.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("p99 = %v, want %v", got, want)
	}
	if got := (&usageHist{bounds: earlier.bounds, counts: []float64{0, 0, 0, 0}}).quantile(0.5); !math.IsNaN(got) {
		t.Errorf("no calls: %v, want NaN", got)
	}
	over := &usageHist{bounds: earlier.bounds, counts: []float64{0, 0, 0, 3}, total: 3}
	if got := over.quantile(0.99); got != 1 {
		t.Errorf("all calls above the last finite bound: %v, want that bound (1)", got)
	}
}

// TestUsageRing keeps the last usageKeep snapshots and finds the one a window starts at.
func TestUsageRing(t *testing.T) {
	u := NewUsage(nil)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range usageKeep + 10 {
		u.add(&usageSnap{at: t0.Add(time.Duration(i) * time.Minute)})
	}
	if len(u.snaps) != usageKeep {
		t.Fatalf("ring holds %d, want %d", len(u.snaps), usageKeep)
	}
	got := u.since(t0.Add(40 * time.Minute))
	if len(got) == 0 || !got[0].at.Equal(t0.Add(40*time.Minute)) {
		t.Errorf("since 00:40 starts at %v", got[0].at)
	}
	if got := u.since(t0); !got[0].at.Equal(t0.Add(10 * time.Minute)) {
		t.Errorf("since before the oldest starts at %v, want the oldest (00:10)", got[0].at)
	}
}
