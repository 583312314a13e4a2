// Package telemetry is what the gateway reports about itself: its Prometheus series, the
// ring of per-minute usage snapshots behind /api/usage, and its OpenTelemetry spans.
package telemetry

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/internal/registry"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Metrics are the gateway's Prometheus series (docs/metrics.md). Each gateway has its own
// registry, so tests can run several in one process. What a series counts comes in as
// plain values (agent, server and tool names, outcomes, durations).
type Metrics struct {
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
	unvalidated      *prometheus.CounterVec
	storeUp          prometheus.GaugeFunc
	storeProbe       atomic.Pointer[func() error] // the store's readiness probe (SetStoreProbe)
	queueDepth       *prometheus.GaugeVec
	queueWait        *prometheus.HistogramVec
	pools            *poolCollector           // collectors.go
	busy             *busyCollector           // collectors.go
	instanceStart    *prometheus.HistogramVec // collectors.go
	upStart          *prometheus.GaugeVec
	upMu             sync.Mutex
	upNow            map[string]bool        // servers up now, so that only a transition to up sets upStart
	integrity        *integrityCollector    // integrity.go
	own              []prometheus.Collector // the mcpgw_ series, as docs/metrics.md lists them
}

// AgentLabel is the agent label agent's series carry (auth.metrics.agent_label).
func (m *Metrics) AgentLabel(agent string) string { return m.agents.label(agent) }

// The handle caches are keyed by names, not by tool values: catalogues are rebuilt on
// every reload and per-session listing, and a key per tool value would keep each old
// catalogue's tools alive for ever. Names are as bounded as the series themselves.
type toolKey struct{ server, tool string }

type callKey struct {
	agent string
	toolKey
	outcome string
}

// ObserveCall counts one tool call of agent to server's tool and its duration. The series
// handles are cached per (agent, tool, outcome), so the call path does no label hashing.
func (m *Metrics) ObserveCall(agent, server, tool, outcome string, seconds float64) {
	tk := toolKey{server, tool}
	k := callKey{m.AgentLabel(agent), tk, outcome}
	c, ok := m.callHandles.Load(k)
	if !ok {
		c, _ = m.callHandles.LoadOrStore(k, m.calls.WithLabelValues(k.agent, server, tool, outcome))
	}
	c.(prometheus.Counter).Inc()
	h, ok := m.durHandles.Load(tk)
	if !ok {
		h, _ = m.durHandles.LoadOrStore(tk, m.callSeconds.WithLabelValues(server, tool))
	}
	h.(prometheus.Observer).Observe(seconds)
}

// CountCall counts a tool call that never reached its tool (no duration is observed).
func (m *Metrics) CountCall(agent, server, tool, outcome string) {
	m.calls.WithLabelValues(m.AgentLabel(agent), server, tool, outcome).Inc()
}

// NewMetrics builds a gateway's registry; agentLabel is auth.metrics.agent_label.
func NewMetrics(agentLabel string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), agents: newAgentLabels(agentLabel)}
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
	m.listBytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_tools_list_bytes_total", Help: "Bytes of tools/list results served, by agent and form (full, thin, search)."}, []string{"agent", "form"})
	m.listTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_tools_list_estimated_tokens_total", Help: "Tokens of tools/list results served, by agent and form (full, thin, search): counted in o200k_base once per cached page; other models' tokenizers count differently."}, []string{"agent", "form"})
	m.listSaved = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_tools_list_tokens_saved_total",
		Help: "Tokens (o200k_base) thin and search tools/list pages saved, by agent: the full form of the same page (for search, the whole full list) less the page served."}, []string{"agent"})
	m.denials = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_denials_total", Help: "Refused requests and tool calls by agent and reason."}, []string{"agent", "reason"})
	m.handshakes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_handshakes_total", Help: "tools/list forms decided per session and view (full, thin, search)."}, []string{"form"})
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
	m.unvalidated = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcpgw_unvalidated_calls_total",
		Help: "Tool calls passed on with arguments not checked against the tool's input schema, by server or plugin (reason: schema, the schema cannot be validated within bounds; arguments, this call's validation would pass the work bound)."},
		[]string{"server", "reason"})
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
	m.integrity = newIntegrityCollector()
	m.own = []prometheus.Collector{m.pools, m.busy, m.integrity, m.instanceStart, m.calls, m.callSeconds, m.sessions, m.upstreamUp, m.upstreamRestarts, m.upstreamStarts,
		m.listBytes, m.listTokens, m.listSaved, m.listChanged, m.unusedSessions, m.sessionsEvicted, m.denials, m.handshakes, m.unroutable, m.answersDropped,
		m.resumeReplayed, m.resumeDropped, m.unvalidated, m.storeUp, m.queueDepth, m.queueWait, m.upStart}
	m.reg.MustRegister(m.own...)
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Collectors are the mcpgw_ series, as docs/metrics.md lists them (the Go and process
// collectors aside).
func (m *Metrics) Collectors() []prometheus.Collector {
	return append([]prometheus.Collector(nil), m.own...)
}

// Gather reads every series of the registry, as a scrape does.
func (m *Metrics) Gather() ([]*dto.MetricFamily, error) { return m.reg.Gather() }

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// SetStoreProbe gives mcpgw_store_up the store's readiness probe, called at scrape time.
func (m *Metrics) SetStoreProbe(probe func() error) { m.storeProbe.Store(&probe) }

// SessionStarted and SessionEnded move mcpgw_sessions_active. The agent label is sticky
// (agentLabels never forgets an agent it let in), so the series a session was counted in
// at its start is the one its end decrements.
func (m *Metrics) SessionStarted(agent, transport string) {
	m.sessions.WithLabelValues(m.AgentLabel(agent), transport).Inc()
}

// SessionEnded: see SessionStarted.
func (m *Metrics) SessionEnded(agent, transport string) {
	m.sessions.WithLabelValues(m.AgentLabel(agent), transport).Dec()
}

// ServerState records a registry state report (registry.Registry.OnState) of server.
func (m *Metrics) ServerState(server, state string) {
	switch state {
	case registry.StateUp:
		m.upstreamState(server, true, time.Now())
	case registry.StateDown, registry.StateStopped:
		m.upstreamState(server, false, time.Now())
	case "restart":
		m.upstreamRestarts.WithLabelValues(server).Inc()
	}
}

// upstreamState records a server's state on mcpgw_upstream_up and, when it comes up after
// being anything else, its start time.
func (m *Metrics) upstreamState(server string, up bool, now time.Time) {
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

// InstanceStarted counts a per-session (per_agent, per_call) instance of server started.
func (m *Metrics) InstanceStarted(server string) { m.upstreamStarts.WithLabelValues(server).Inc() }

// Denied counts a refused request or tool call under an agent label already decided
// (AgentLabel, or "unauthenticated" and "unknown" for callers with no agent of the config).
func (m *Metrics) Denied(label, reason string) { m.denials.WithLabelValues(label, reason).Inc() }

// Handshake counts a tools/list form decided for a session and view.
func (m *Metrics) Handshake(form string) { m.handshakes.WithLabelValues(form).Inc() }

// ListChanged counts a tools/list_changed notification sent.
func (m *Metrics) ListChanged() { m.listChanged.Inc() }

// UnusedSessionEnded counts a session ended for making no request after initialize.
func (m *Metrics) UnusedSessionEnded() { m.unusedSessions.Inc() }

// Evicted counts a session ended to keep a limit (reason: agent_limit, total_limit,
// stateless_variants, identity).
func (m *Metrics) Evicted(reason string) { m.sessionsEvicted.WithLabelValues(reason).Inc() }

// Unroutable counts an upstream message of server whose session was not known for
// certain, or that a slow client had no room for (kind: request, notification, overflow).
func (m *Metrics) Unroutable(server, kind string) { m.unroutable.WithLabelValues(server, kind).Inc() }

// AnswerDropped counts a client answer to a server-to-client request that was dropped.
func (m *Metrics) AnswerDropped(reason string) { m.answersDropped.WithLabelValues(reason).Inc() }

// UnvalidatedCall counts a tool call passed on with its arguments not checked against the
// tool's input schema (reason: schemabound.ReasonSchema or ReasonArguments).
func (m *Metrics) UnvalidatedCall(server, reason string) {
	m.unvalidated.WithLabelValues(server, reason).Inc()
}

// ResumeReplayed counts n events replayed to a client that resumed its stream.
func (m *Metrics) ResumeReplayed(n int) { m.resumeReplayed.Add(float64(n)) }

// ResumeDropped counts a replay buffer that lost events or was discarded (reason: size,
// memory, age, streams).
func (m *Metrics) ResumeDropped(reason string) { m.resumeDropped.WithLabelValues(reason).Inc() }

// QueueWait is server's mcpgw_upstream_queue_wait_seconds, and QueueDepth its
// mcpgw_upstream_queue_depth: handles a waiting request holds while it waits.
func (m *Metrics) QueueWait(server string) prometheus.Observer {
	return m.queueWait.WithLabelValues(server)
}

// QueueDepth: see QueueWait.
func (m *Metrics) QueueDepth(server string) prometheus.Gauge {
	return m.queueDepth.WithLabelValues(server)
}
