package telemetry

import (
	"strconv"
	"strings"
	"sync"
)

// ListServed counts one tools/list page served to agent in form (full, thin): its bytes
// and estimated tokens (bytes/4) by agent and form, and for a thin page the tokens it
// saved: full is the size of the full form of the same page (same cursor and page size),
// or negative when it has none (a thin page whose cursor points into the gateway's own
// tools, which only thin lists carry). A thin page larger than its full form saves
// nothing (a counter cannot go down).
func (m *Metrics) ListServed(agent, form string, page, full int) {
	label := m.AgentLabel(agent)
	m.listBytes.WithLabelValues(label, form).Add(float64(page))
	m.listTokens.WithLabelValues(label, form).Add(float64(page / 4))
	if form != "thin" || full < 0 {
		return
	}
	if saved := full/4 - page/4; saved > 0 {
		m.listSaved.WithLabelValues(label).Add(float64(saved))
	}
}

// agentLabels bounds the agent label's cardinality: all, off, or the first N agents seen
// (the rest are "other").
type agentLabels struct {
	mode string
	max  int
	mu   sync.Mutex
	seen map[string]bool
}

func newAgentLabels(spec string) *agentLabels {
	a := &agentLabels{mode: spec, seen: map[string]bool{}}
	if n, ok := strings.CutPrefix(spec, "top:"); ok {
		a.mode = "top"
		a.max, _ = strconv.Atoi(n)
	}
	return a
}

func (a *agentLabels) label(agent string) string {
	switch a.mode {
	case "off":
		return ""
	case "all":
		return agent
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen[agent] {
		return agent
	}
	if len(a.seen) < a.max {
		a.seen[agent] = true
		return agent
	}
	return "other"
}
