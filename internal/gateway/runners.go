package gateway

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
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
	g.runners.OnConnect = g.runnerBack
	g.runners.Signins = runnerSignins{g}
	g.reg.Dialer().Runners = g.runners
}

// runnerSignins slows wrong runner keys with the gateway's one sign-in guard (signin.go),
// so a source guessing them is slowed as on the admin API and the local token.
type runnerSignins struct{ g *Gateway }

func (p runnerSignins) Slowed(r *http.Request) *auth.Failure { return p.g.gate.slowed(r) }

func (p runnerSignins) CredentialFailed(r *http.Request, where string) {
	p.g.gate.credentialFailed(r, where)
}

func (p runnerSignins) CredentialSucceeded(r *http.Request) {
	p.g.gate.signins.Succeeded(p.g.gate.sourceOf(r))
}

// runnerBack starts again, for every live session, the instances on executor's runner
// that are down: the registry's back-off gives up on an instance after a few tries, and a
// runner may be away longer. Each comes back into its session's view with
// notifications/tools/list_changed.
func (g *Gateway) runnerBack(executor string) {
	for _, s := range g.live.all() {
		for server, ov := range s.Rec.Overrides {
			if ov.Runner != executor || !s.Own.IsDown(server) {
				continue
			}
			go func() {
				ctx, cancel := context.WithTimeout(g.ctx, time.Minute)
				defer cancel()
				if _, err := s.Upstreams.Conn(ctx, server); err != nil {
					g.log.Warn("instance on a runner that came back did not start", "server", server, "session", s.ID, "executor", executor, "err", err)
				}
			}()
		}
	}
}

// Runners are the executors' runners and their state (the admin API's /api/runners).
func (g *Gateway) Runners() []runners.State { return g.runners.States() }

// RunnerStates are the executors' runners for the admin API (GET /api/runners).
func (p adminSessions) RunnerStates() any { return p.g.Runners() }
