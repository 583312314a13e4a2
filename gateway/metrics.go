package gateway

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/registry"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the gateway's Prometheus series (docs/metrics.md). Each gateway has its own
// registry, so tests can run several in one process.
type metrics struct {
	reg              *prometheus.Registry
	calls            *prometheus.CounterVec
	callSeconds      *prometheus.HistogramVec
	sessions         *prometheus.GaugeVec
	upstreamUp       *prometheus.GaugeVec
	upstreamRestarts *prometheus.CounterVec
	upstreamStarts   *prometheus.CounterVec
	listBytes        *prometheus.CounterVec
	listTokens       *prometheus.CounterVec
	listSaved        *prometheus.CounterVec
	listChanged      prometheus.Counter
	unusedSessions   prometheus.Counter
	sessionsEvicted  *prometheus.CounterVec
	denials          *prometheus.CounterVec
	handshakes       *prometheus.CounterVec
	agents           *agentLabels
	callHandles      sync.Map // callKey → prometheus.Counter
	durHandles       sync.Map // toolKey → prometheus.Observer
	unroutable       *prometheus.CounterVec
	answersDropped   *prometheus.CounterVec
	resumeReplayed   prometheus.Counter
	resumeDropped    *prometheus.CounterVec
	storeUp          prometheus.GaugeFunc
	storeProbe       atomic.Pointer[func() error] // set by New; the store's readiness probe
	queueDepth       *prometheus.GaugeVec
	queueWait        *prometheus.HistogramVec
	pools            *poolCollector           // poolmetrics.go
	busy             *busyCollector           // busymetrics.go
	instanceStart    *prometheus.HistogramVec // poolmetrics.go
	upStart          *prometheus.GaugeVec
	upMu             sync.Mutex
	upNow            map[string]bool        // servers up now, so that only a transition to up sets upStart
	own              []prometheus.Collector // the mcpgw_ series, as docs/metrics.md lists them
}

func (m *metrics) agentLabel(agent string) string { return m.agents.label(agent) }

// The handle caches are keyed by names, not by *registry.Tool: catalogues are rebuilt on
// every reload and per-session listing, and a key per tool value would keep each old
// catalogue's tools alive for ever. Names are as bounded as the series themselves.
type toolKey struct{ server, tool string }

type callKey struct {
	agent string
	toolKey
	outcome string
}

// observeCall counts one tool call. The series handles are cached per (agent, tool,
// outcome), so the call path does no label hashing.
func (m *metrics) observeCall(agent string, t *registry.Tool, outcome string, seconds float64) {
	tk := toolKey{t.Server, t.Name}
	k := callKey{m.agentLabel(agent), tk, outcome}
	c, ok := m.callHandles.Load(k)
	if !ok {
		c, _ = m.callHandles.LoadOrStore(k, m.calls.WithLabelValues(k.agent, t.Server, t.Name, outcome))
	}
	c.(prometheus.Counter).Inc()
	h, ok := m.durHandles.Load(tk)
	if !ok {
		h, _ = m.durHandles.LoadOrStore(tk, m.callSeconds.WithLabelValues(t.Server, t.Name))
	}
	h.(prometheus.Observer).Observe(seconds)
}

func newMetrics(agentLabel string) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), agents: newAgentLabels(agentLabel)}
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_tool_calls_total",
		Help: "Tool calls by agent, upstream server, upstream tool name and outcome (ok, tool_error, error, unavailable, busy, timeout, cancelled)."},
		[]string{"agent", "server", "tool", "outcome"})
	m.callSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpgw_tool_call_duration_seconds",
		Help:    "Tool call duration through the gateway, from request to response.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}},
		[]string{"server", "tool"})
	m.sessions = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpgw_sessions_active", Help: "Live sessions by agent and client transport."}, []string{"agent", "transport"})
	m.upstreamUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpgw_upstream_up", Help: "1 while a shared upstream is connected (per_session: while its catalogue is known)."}, []string{"server"})
	m.upstreamRestarts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_upstream_restarts_total", Help: "Upstream reconnects and restarts after a failure."}, []string{"server"})
	m.upstreamStarts = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_upstream_instances_started_total", Help: "Per-session upstream instances started."}, []string{"server"})
	m.listBytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_tools_list_bytes_total", Help: "Bytes of tools/list results served, by agent and form (full, thin)."}, []string{"agent", "form"})
	m.listTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_tools_list_estimated_tokens_total", Help: "Estimated tokens (bytes/4) of tools/list results served, by agent and form (full, thin)."}, []string{"agent", "form"})
	m.listSaved = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_tools_list_tokens_saved_total",
		Help: "Estimated tokens thin tools/list pages saved, by agent: the full form of the same page less the thin page."}, []string{"agent"})
	m.denials = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_denials_total", Help: "Refused requests and tool calls by agent and reason."}, []string{"agent", "reason"})
	m.handshakes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_handshakes_total", Help: "tools/list forms decided per session and view (full, thin)."}, []string{"form"})
	m.listChanged = prometheus.NewCounter(prometheus.CounterOpts{Name: "mcpgw_list_changed_sent_total", Help: "tools/list_changed notifications sent to sessions."})
	m.unusedSessions = prometheus.NewCounter(prometheus.CounterOpts{Name: "mcpgw_sessions_unused_ended_total", Help: "Sessions ended because they made no request after initialize within http.unused_session_timeout."})
	m.sessionsEvicted = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_sessions_evicted_total",
		Help: "Sessions ended by the gateway to keep its limits (reason: agent_limit, http.max_sessions_per_agent; total_limit, http.max_sessions; stateless_variants, a stateless caller's variants; identity, its agent was deleted or disabled)."},
		[]string{"reason"})
	m.unroutable = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_unroutable_messages_total",
		Help: "Upstream messages whose session could not be known for certain (kind: request, answered with an error; notification, dropped) or that a slow client had no room for (kind: overflow)."},
		[]string{"server", "kind"})
	m.answersDropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_client_responses_dropped_total",
		Help: "Client answers to server-to-client requests that were dropped (reason: unknown, no request waits under that id; wrong_session, the request was sent to another session)."},
		[]string{"reason"})
	m.resumeReplayed = prometheus.NewCounter(prometheus.CounterOpts{Name: "mcpgw_resume_events_replayed_total",
		Help: "Events of POST event streams replayed to clients that resumed with Last-Event-ID."})
	m.resumeDropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_resume_buffers_dropped_total",
		Help: "Replay buffers that lost events (reason: size, over http.resume_buffer_bytes, oldest dropped; memory, over http.resume_max_bytes) or were discarded whole (age, http.resume_for after the stream ended; streams, the session's oldest past the per-session count)."},
		[]string{"reason"})
	// Probed at scrape time, like /readyz: a store outage shows on the next scrape, and
	// alerting rules need no HTTP probe of /readyz (deploy/prometheus/mcpgw-rules.yml).
	m.storeUp = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcpgw_store_up",
		Help: "1 while the session store answers (the probe /readyz makes), 0 while it is unreachable."},
		func() float64 {
			if p := m.storeProbe.Load(); p != nil && (*p)() != nil {
				return 0
			}
			return 1
		})
	m.queueDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpgw_upstream_queue_depth",
		Help: "Requests waiting for a slot of an upstream instance with max_concurrency (summed over the server's instances)."},
		[]string{"server"})
	m.queueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "mcpgw_upstream_queue_wait_seconds",
		Help:    "Time requests to an instance with max_concurrency waited for a slot (0 when one was free; busy refusals included).",
		Buckets: []float64{.001, .005, .01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}},
		[]string{"server"})
	m.pools, m.instanceStart, m.busy = newPoolCollector(), newStartHistogram(), newBusyCollector()
	m.upStart = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "mcpgw_upstream_start_time_seconds",
		Help: "Unix time a server last came up (shared: connected; per_session: its catalogue known; plugins: loaded); time() minus it is how long it has been up."},
		[]string{"server"})
	m.upNow = map[string]bool{}
	m.own = []prometheus.Collector{m.pools, m.busy, m.instanceStart, m.calls, m.callSeconds, m.sessions, m.upstreamUp, m.upstreamRestarts, m.upstreamStarts,
		m.listBytes, m.listTokens, m.listSaved, m.listChanged, m.unusedSessions, m.sessionsEvicted, m.denials, m.handshakes, m.unroutable, m.answersDropped,
		m.resumeReplayed, m.resumeDropped, m.storeUp, m.queueDepth, m.queueWait, m.upStart}
	m.reg.MustRegister(m.own...)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// sessionGauge is the mcpgw_sessions_active series of s. The agent label is sticky
// (agentLabels never forgets an agent it let in), so the series a session was counted in
// at its start is the one its end decrements.
func (m *metrics) sessionGauge(s *Session) prometheus.Gauge {
	return m.sessions.WithLabelValues(m.agentLabel(s.rec.Agent), s.Transport)
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// upstreamState records a server's state on mcpgw_upstream_up and, when it comes up after
// being anything else, its start time.
func (m *metrics) upstreamState(server string, up bool, now time.Time) {
	m.upMu.Lock()
	was := m.upNow[server]
	m.upNow[server] = up
	m.upMu.Unlock()
	if up {
		m.upstreamUp.WithLabelValues(server).Set(1)
		if !was {
			m.upStart.WithLabelValues(server).Set(float64(now.UnixNano()) / 1e9)
		}
		return
	}
	m.upstreamUp.WithLabelValues(server).Set(0)
}
