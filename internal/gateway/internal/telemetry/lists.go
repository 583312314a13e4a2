package telemetry

import (
	"strconv"
	"strings"
	"sync"
)

// ListCount is the size of a served list page: its bytes and its tokens, counted in
// o200k_base (registry.CountTokens) once, when the page was built and cached.
type ListCount struct{ Bytes, Tokens int }

// ListPageServed counts one tools/list page served to agent in form (full, thin, search): its
// bytes and tokens by agent and form, and for a thin or search page the tokens it saved: full
// is the full form of the same page (same cursor and page size; for a search page, the whole
// full list it stands for), or the zero ListCount when it has none (a thin page whose cursor
// points into the gateway's own tools, which only thin lists carry). A page with more tokens
// than its full form saves nothing (a counter cannot go down). It only adds numbers: nothing is tokenized here.
func (m *Metrics) ListPageServed(agent, form string, page, full ListCount) {
	label := m.AgentLabel(agent)
	m.listBytes.WithLabelValues(label, form).Add(float64(page.Bytes))
	m.listTokens.WithLabelValues(label, form).Add(float64(page.Tokens))
	if (form != "thin" && form != "search") || full.Bytes <= 0 {
		return
	}
	if saved := full.Tokens - page.Tokens; saved > 0 {
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
