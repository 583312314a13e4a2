package telemetry

import (
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/registry"

	"github.com/prometheus/client_golang/prometheus"
)

// poolCollector serves the warm pools' counts (mcpgw_pool_instances), read from the
// registry at scrape time: the pool changes on its own goroutines and keeps no gauges.
type poolCollector struct {
	desc  *prometheus.Desc
	pools atomic.Pointer[func() map[string]registry.PoolStats]
}

func newPoolCollector() *poolCollector {
	return &poolCollector{desc: prometheus.NewDesc("mcpgw_pool_instances",
		"Instances of a server's warm pool by state: ready (started, initialized, unused), in_use (taken by a session or agent), starting.",
		[]string{"server", "state"}, nil)}
}

func (p *poolCollector) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

func (p *poolCollector) Collect(ch chan<- prometheus.Metric) {
	f := p.pools.Load()
	if f == nil {
		return
	}
	for server, st := range (*f)() {
		ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, float64(st.Ready), server, "ready")
		ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, float64(st.InUse), server, "in_use")
		ch <- prometheus.MustNewConstMetric(p.desc, prometheus.GaugeValue, float64(st.Starting), server, "starting")
	}
}

func newStartHistogram() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpgw_upstream_instance_start_seconds",
		Help:    "Time from starting an upstream instance (per_session, per_agent, per_call or pooled) to its initialize answer.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}},
		[]string{"server"})
}

// WatchInstances connects the registry's pools, busy polls and instance starts to the
// metrics.
func (m *Metrics) WatchInstances(reg *registry.Registry) {
	f := reg.Pools
	m.pools.pools.Store(&f)
	m.busy.reg.Store(reg)
	m.integrity.reg.Store(reg)
	reg.OnInstanceStart = func(server string, d time.Duration) {
		m.instanceStart.WithLabelValues(server).Observe(d.Seconds())
	}
}

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
