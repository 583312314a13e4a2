package gateway

import (
	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/runners"
)

// useRunners gives g its runner hub and makes its registry's Dialer start the stdio
// servers of executors with a runner through it (docs/runners.md).
func useRunners(g *Gateway) {
	g.runners = runners.New(func() *config.Config {
		if p := g.pol.Load(); p != nil {
			return p.cfg
		}
		return g.cfg
	}, g.cfg.Upstream.MaxMessageBytes, g.log)
	g.reg.Dialer().Runners = g.runners
}

// Runners are the executors' runners and their state (the admin API's /api/runners).
func (g *Gateway) Runners() []runners.State { return g.runners.States() }

// RunnerStates are the executors' runners for the admin API (GET /api/runners).
func (p adminSessions) RunnerStates() any { return p.g.Runners() }
