package gateway

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/registry"
)

// busyCollector serves how the gateway's busy polls ended (mcpgw_busy_poll_total), read
// from its registry at scrape time: the counts are the registry's own (its upstream
// dialer's and its plugin host's), so two gateways in one process report their own.
type busyCollector struct {
	desc *prometheus.Desc
	reg  atomic.Pointer[registry.Registry]
}

func newBusyCollector() *busyCollector {
	return &busyCollector{desc: prometheus.NewDesc("mcpgw_busy_poll_total",
		"Busy polls for an answer (upstream.busy_poll) by path (upstream: an upstream's answer; plugin: an out-of-process plugin call) and outcome: caught (the answer came while polling), gave_way (a second call or request came), timed_out (busy_poll passed first).",
		[]string{"path", "outcome"}, nil)}
}

func (b *busyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- b.desc }

func (b *busyCollector) Collect(ch chan<- prometheus.Metric) {
	reg := b.reg.Load()
	if reg == nil {
		return
	}
	up, pl := reg.Dialer().Busy.Stats(), reg.PluginBusyStats()
	for _, s := range []struct {
		path, outcome string
		n             int64
	}{
		{"upstream", "caught", up.Caught}, {"upstream", "gave_way", up.GaveWay}, {"upstream", "timed_out", up.TimedOut},
		{"plugin", "caught", pl.Caught}, {"plugin", "gave_way", pl.GaveWay}, {"plugin", "timed_out", pl.TimedOut},
	} {
		ch <- prometheus.MustNewConstMetric(b.desc, prometheus.CounterValue, float64(s.n), s.path, s.outcome)
	}
}
