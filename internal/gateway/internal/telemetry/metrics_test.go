package telemetry

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// TestUpstreamStateStartTime: the start time is set when a server comes up, kept while it
// stays up (a repeated "up", as a catalogue refresh reports, is no restart), and set again
// when it comes back after going down; mcpgw_upstream_up follows every report.
func TestUpstreamStateStartTime(t *testing.T) {
	m := NewMetrics("all")
	read := func() (start, up float64) {
		var a, b dto.Metric
		_ = m.upStart.WithLabelValues("s").Write(&a)
		_ = m.upstreamUp.WithLabelValues("s").Write(&b)
		return a.GetGauge().GetValue(), b.GetGauge().GetValue()
	}
	t0 := time.Unix(1000, 0)
	for i, step := range []struct {
		up        bool
		at        int64
		wantStart float64
	}{{true, 1000, 1000}, {true, 1060, 1000}, {false, 1100, 1000}, {true, 1200, 1200}} {
		m.upstreamState("s", step.up, t0.Add(time.Duration(step.at-1000)*time.Second))
		start, up := read()
		wantUp := 0.0
		if step.up {
			wantUp = 1
		}
		if start != step.wantStart || up != wantUp {
			t.Errorf("step %d (up %v at %d): start %v, up %v; want %v, %v", i, step.up, step.at, start, up, step.wantStart, wantUp)
		}
	}
}
