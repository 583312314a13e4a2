package telemetry

import (
	"context"
	"math"
	"sort"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// The Usage page draws the last hour from the gateway's own metrics: no Prometheus server
// is needed. Once a minute the counters are read into a snapshot (usageEvery); a ring
// keeps the last usageKeep of them. The page compares the counters now with the snapshot
// an hour ago (or the oldest one), and consecutive snapshots give the per-minute bars.

const (
	usageEvery = time.Minute
	usageKeep  = 61 // an hour of minutes, and the one it starts from
)

// usageCall keys a tool call counter.
type usageCall struct{ agent, server, tool, outcome string }

// usageSnap is the cumulative counters at one moment.
type usageSnap struct {
	at      time.Time
	calls   map[usageCall]float64
	buckets map[toolKey]*usageHist
	tokens  map[string]float64 // tools/list tokens by form (full, thin)
	// agentTokens are tools/list tokens by agent and form; saved, by agent, the tokens
	// thin lists saved.
	agentTokens map[[2]string]float64
	saved       map[string]float64
}

func newUsageSnap(at time.Time) *usageSnap {
	return &usageSnap{at: at, calls: map[usageCall]float64{}, buckets: map[toolKey]*usageHist{}, tokens: map[string]float64{},
		agentTokens: map[[2]string]float64{}, saved: map[string]float64{}}
}

// usageHist is a cumulative histogram: counts[i] calls took at most bounds[i] seconds.
type usageHist struct {
	bounds []float64
	counts []float64
	total  float64
}

// Usage is the ring of per-minute snapshots of a gateway's metrics.
type Usage struct {
	m     *Metrics
	mu    sync.Mutex
	snaps []*usageSnap
}

// NewUsage is an empty ring over m's counters. Take its first snapshot (Snap) before
// anything is served.
func NewUsage(m *Metrics) *Usage { return &Usage{m: m} }

// Snap adds a snapshot taken now.
func (u *Usage) Snap(now time.Time) { u.add(u.m.snapshot(now)) }

// snapshot reads the counters the Usage page needs.
func (m *Metrics) snapshot(now time.Time) *usageSnap {
	s := newUsageSnap(now)
	fams, err := m.reg.Gather()
	if err != nil && len(fams) == 0 {
		return s
	}
	label := func(mt *dto.Metric, name string) string {
		for _, l := range mt.GetLabel() {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	for _, f := range fams {
		switch f.GetName() {
		case "mcpgw_tool_calls_total":
			for _, mt := range f.GetMetric() {
				k := usageCall{label(mt, "agent"), label(mt, "server"), label(mt, "tool"), label(mt, "outcome")}
				s.calls[k] += mt.GetCounter().GetValue()
			}
		case "mcpgw_tool_call_duration_seconds":
			for _, mt := range f.GetMetric() {
				h := mt.GetHistogram()
				u := &usageHist{total: float64(h.GetSampleCount())}
				for _, b := range h.GetBucket() {
					u.bounds = append(u.bounds, b.GetUpperBound())
					u.counts = append(u.counts, float64(b.GetCumulativeCount()))
				}
				s.buckets[toolKey{label(mt, "server"), label(mt, "tool")}] = u
			}
		case "mcpgw_tools_list_estimated_tokens_total":
			for _, mt := range f.GetMetric() {
				v := mt.GetCounter().GetValue()
				s.tokens[label(mt, "form")] += v
				s.agentTokens[[2]string{label(mt, "agent"), label(mt, "form")}] += v
			}
		case "mcpgw_tools_list_tokens_saved_total":
			for _, mt := range f.GetMetric() {
				s.saved[label(mt, "agent")] += mt.GetCounter().GetValue()
			}
		}
	}
	return s
}

func (u *Usage) add(s *usageSnap) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.snaps = append(u.snaps, s)
	if len(u.snaps) > usageKeep {
		u.snaps = append([]*usageSnap(nil), u.snaps[len(u.snaps)-usageKeep:]...)
	}
}

// since returns the snapshots from the last one at or before from (or the oldest) on.
func (u *Usage) since(from time.Time) []*usageSnap {
	u.mu.Lock()
	defer u.mu.Unlock()
	i := 0
	for j, s := range u.snaps {
		if !s.at.After(from) {
			i = j
		}
	}
	return append([]*usageSnap(nil), u.snaps[i:]...)
}

// Run takes a snapshot every usageEvery until ctx is done. The first one is taken (Snap)
// before anything is served (a goroutine that started late would count the first
// requests into the baseline and lose them from every window).
func (u *Usage) Run(ctx context.Context) {
	t := time.NewTicker(usageEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			u.Snap(now)
		}
	}
}

// UsageRow is one agent, tool or (server, tool) over the window.
type UsageRow struct {
	Agent, Server, Tool string
	Calls, Errors       float64
	P50, P99            float64 // seconds; NaN without calls
}

// UsageMinute is one minute of the window.
type UsageMinute struct {
	At                     time.Time
	Calls, Errors          float64
	FullTokens, ThinTokens float64
	SearchTokens           float64
}

// UsageReport is the Usage page's data.
type UsageReport struct {
	From, To               time.Time
	Calls, Errors          float64
	FullTokens, ThinTokens float64
	SearchTokens           float64
	SavedTokens            float64 // tokens thin and search lists saved (mcpgw_tools_list_tokens_saved_total)
	ByAgent, ByTool        []UsageRow
	ByAgentTokens          []UsageTokens
	ByAgentTool            []UsageRow
	Minutes                []UsageMinute
}

// Report is the last window (at most an hour) of tool calls and tools/list tokens.
func (u *Usage) Report(window time.Duration) *UsageReport {
	now := time.Now()
	snaps := u.since(now.Add(-window))
	if len(snaps) == 0 { // no snapshot yet: everything counted so far
		snaps = []*usageSnap{newUsageSnap(now)}
	}
	snaps = append(snaps, u.m.snapshot(now))
	base, last := snaps[0], snaps[len(snaps)-1]
	rep := &UsageReport{From: base.at, To: now}
	agents, tools, agentTools := map[string]*UsageRow{}, map[toolKey]*UsageRow{}, map[[3]string]*UsageRow{}
	for k, v := range last.calls {
		d := v - base.calls[k]
		if d <= 0 {
			continue
		}
		isErr := k.outcome != "ok"
		for _, r := range []*UsageRow{
			getRow(agents, k.agent, UsageRow{Agent: k.agent}),
			getRow(tools, toolKey{k.server, k.tool}, UsageRow{Server: k.server, Tool: k.tool}),
			getRow(agentTools, [3]string{k.agent, k.server, k.tool}, UsageRow{Agent: k.agent, Server: k.server, Tool: k.tool}),
		} {
			r.Calls += d
			if isErr {
				r.Errors += d
			}
		}
		rep.Calls += d
		if isErr {
			rep.Errors += d
		}
	}
	for k, r := range tools {
		r.P50, r.P99 = math.NaN(), math.NaN()
		if h := last.buckets[k]; h != nil {
			d := h.minus(base.buckets[k])
			r.P50, r.P99 = d.quantile(0.5), d.quantile(0.99)
		}
	}
	rep.FullTokens = last.tokens["full"] - base.tokens["full"]
	rep.ThinTokens = last.tokens["thin"] - base.tokens["thin"]
	rep.SearchTokens = last.tokens["search"] - base.tokens["search"]
	rep.ByAgentTokens = agentTokenRows(base, last)
	for _, r := range rep.ByAgentTokens {
		rep.SavedTokens += r.Saved
	}
	for i := 1; i < len(snaps); i++ {
		a, b := snaps[i-1], snaps[i]
		m := UsageMinute{At: b.at, FullTokens: b.tokens["full"] - a.tokens["full"], ThinTokens: b.tokens["thin"] - a.tokens["thin"],
			SearchTokens: b.tokens["search"] - a.tokens["search"]}
		for k, v := range b.calls {
			d := v - a.calls[k]
			m.Calls += d
			if k.outcome != "ok" {
				m.Errors += d
			}
		}
		rep.Minutes = append(rep.Minutes, m)
	}
	rep.ByAgent, rep.ByTool, rep.ByAgentTool = sortedRows(agents), sortedRows(tools), sortedRows(agentTools)
	return rep
}

func getRow[K comparable](m map[K]*UsageRow, k K, zero UsageRow) *UsageRow {
	r := m[k]
	if r == nil {
		r = &zero
		m[k] = r
	}
	return r
}

func sortedRows[K comparable](m map[K]*UsageRow) []UsageRow {
	out := make([]UsageRow, 0, len(m))
	for _, r := range m {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Calls != out[j].Calls {
			return out[i].Calls > out[j].Calls
		}
		return out[i].Agent+"\x00"+out[i].Server+"\x00"+out[i].Tool < out[j].Agent+"\x00"+out[j].Server+"\x00"+out[j].Tool
	})
	return out
}

// minus is h less an earlier reading of the same histogram (nil: nothing before).
func (h *usageHist) minus(prev *usageHist) *usageHist {
	d := &usageHist{bounds: h.bounds, counts: append([]float64(nil), h.counts...), total: h.total}
	if prev != nil && len(prev.counts) == len(h.counts) {
		for i := range d.counts {
			d.counts[i] -= prev.counts[i]
		}
		d.total -= prev.total
	}
	return d
}

// quantile estimates the q-quantile as Prometheus's histogram_quantile does: linear
// within the bucket it falls in; above the last finite bound, that bound.
func (h *usageHist) quantile(q float64) float64 {
	if h.total <= 0 {
		return math.NaN()
	}
	rank := q * h.total
	lower, prevCount := 0.0, 0.0
	for i, b := range h.bounds {
		if h.counts[i] >= rank {
			if math.IsInf(b, 1) {
				return lower
			}
			in := h.counts[i] - prevCount
			if in <= 0 {
				return b
			}
			return lower + (b-lower)*(rank-prevCount)/in
		}
		lower, prevCount = b, h.counts[i]
	}
	return lower
}
