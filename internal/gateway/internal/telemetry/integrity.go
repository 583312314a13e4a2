package telemetry

import (
	"sync/atomic"

	"github.com/mcpgw/mcpgw/internal/registry"

	"github.com/prometheus/client_golang/prometheus"
)

// integrityCollector serves the tool integrity series: holds, approvals and rejections
// as they happen, and the definitions held now, read from the registry at scrape time.
type integrityCollector struct {
	events *prometheus.CounterVec
	held   *prometheus.Desc
	reg    atomic.Pointer[registry.Registry]
}

func newIntegrityCollector() *integrityCollector {
	return &integrityCollector{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_integrity_events_total",
			Help: "Tool integrity events by server or plugin, action (held, approved, rejected) and, for held, reason (first_use, changed, new, suspicious, ambiguous)."},
			[]string{"server", "action", "reason"}),
		held: prometheus.NewDesc("mcpgw_integrity_held",
			"Definitions (tools, prompts, resource templates) held now until an admin approves them, by server or plugin.",
			[]string{"server"}, nil),
	}
}

func (c *integrityCollector) Describe(ch chan<- *prometheus.Desc) {
	c.events.Describe(ch)
	ch <- c.held
}

func (c *integrityCollector) Collect(ch chan<- prometheus.Metric) {
	c.events.Collect(ch)
	reg := c.reg.Load()
	if reg == nil {
		return
	}
	held := map[string]int{}
	for _, p := range reg.Integrity().Pins() {
		if p.Held != nil && !p.Held.Warned && !p.Held.Rejected {
			held[p.Server]++
		} else if _, ok := held[p.Server]; !ok && p.Kind == "server" {
			held[p.Server] = 0
		}
	}
	for server, n := range held {
		ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, float64(n), server)
	}
}

// IntegrityEvent counts one hold, approval or rejection.
func (m *Metrics) IntegrityEvent(server, action, reason string) {
	m.integrity.events.WithLabelValues(server, action, reason).Inc()
}
