package gateway

import (
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/registry"

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

// watchInstances connects the registry's pools and instance starts to the metrics.
func (m *metrics) watchInstances(reg *registry.Registry) {
	f := reg.Pools
	m.pools.pools.Store(&f)
	m.busy.reg.Store(reg)
	reg.OnInstanceStart = func(server string, d time.Duration) {
		m.instanceStart.WithLabelValues(server).Observe(d.Seconds())
	}
}
