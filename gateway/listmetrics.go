package gateway

import "github.com/mcpgw/mcpgw/registry"

// countList counts one tools/list page served to s in form (full, thin): its bytes and
// estimated tokens (bytes/4) by agent and form, and for a thin page the tokens it saved,
// the full form of the same page (same cursor and page size) less the thin one. The full
// page comes from the view's page cache, so a thin listing renders it at most once per
// view. A thin page whose cursor points into the gateway's own tools (which only thin
// lists carry) has no full counterpart and saves nothing; nor does a thin page larger
// than its full form (a counter cannot go down).
func (g *Gateway) countList(s *Session, v *registry.View, form, cursor string, page []byte) {
	agent := g.metrics.agentLabel(s.rec.Agent)
	g.metrics.listBytes.WithLabelValues(agent, form).Add(float64(len(page)))
	g.metrics.listTokens.WithLabelValues(agent, form).Add(float64(len(page) / 4))
	if form != "thin" {
		return
	}
	full, ok := v.ListPage("tools", false, cursor, g.cfg.HTTP.PageSize)
	if !ok {
		return
	}
	if saved := len(full)/4 - len(page)/4; saved > 0 {
		g.metrics.listSaved.WithLabelValues(agent).Add(float64(saved))
	}
}
