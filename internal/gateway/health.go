package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// health is the gateway's health endpoints (/healthz, /readyz) and the store probe its
// metrics take.
type health struct{ g *Gateway }

// serveHealthz says the process is alive.
func (hc health) serveHealthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte("ok\n"))
}

// serveReadyz reports the store, every upstream and every plugin. It answers 503 when the
// store is unreachable, or a plugin marked required is not up; upstreams and other plugins
// that are down are reported but do not make the gateway unready, since sessions keep
// working without them.
func (hc health) serveReadyz(w http.ResponseWriter, r *http.Request) {
	g := hc.g
	type ready struct {
		Ready     bool              `json:"ready"`
		Store     string            `json:"store"`
		Sessions  int               `json:"sessions"`
		Upstreams []registry.Status `json:"upstreams"`
		Plugins   []pluginRow       `json:"plugins"`
		// Starting: servers or plugins are still coming up the first time.
		Starting bool `json:"starting,omitempty"`
	}
	out := ready{Ready: true, Store: "ok", Upstreams: g.reg.Statuses(), Plugins: g.admin.PluginRows()}
	if err := hc.probeStore(); err != nil {
		out.Ready, out.Store = false, err.Error()
	}
	if hc.starting(out.Upstreams, out.Plugins) {
		out.Ready, out.Starting = false, true
	}
	detail := hc.readyDetail(r)
	// A plugin that is not up is reported; it makes the gateway unready only when its
	// definition says required: true.
	for _, p := range out.Plugins {
		if p.Required && p.State != registry.StateUp {
			out.Ready = false
		}
	}
	out.Sessions = g.live.sessionCount()
	var b []byte
	if detail {
		b, _ = json.MarshalIndent(out, "", "  ")
	} else {
		// Upstreams' errors name commands and addresses, plugins their connections: for an
		// admin only. Everyone else learns ready or not.
		short := map[string]bool{"ready": out.Ready}
		if out.Starting {
			short["starting"] = true
		}
		b, _ = json.Marshal(short)
	}
	w.Header().Set("Content-Type", "application/json")
	if !out.Ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write(append(b, '\n'))
}

// starting reports whether servers or plugins are still coming up the first time: the
// gateway serves meanwhile (with what is up so far), but is not ready, so that a load
// balancer or an orchestrator sends it traffic once its catalogue is whole. It says so
// only within StartWindow of Start, whatever is still starting then.
func (hc health) starting(ups []registry.Status, plugins []pluginRow) bool {
	g := hc.g
	if g.startedAt.IsZero() || time.Since(g.startedAt) >= StartWindow(g.policy().cfg) {
		return false
	}
	return slices.ContainsFunc(ups, func(s registry.Status) bool { return s.State == registry.StateStarting }) ||
		slices.ContainsFunc(plugins, func(p pluginRow) bool { return p.State == registry.StateStarting })
}

// StartWindow is how long the servers and plugins of cfg may take to first come up: the
// longest connect timeout, plus a second.
func StartWindow(cfg *config.Config) time.Duration {
	wait := cfg.Upstream.ConnectTimeout
	for _, d := range cfg.Servers {
		if d.Timeouts.Connect > wait {
			wait = d.Timeouts.Connect
		}
	}
	return wait + time.Second
}

// readyDetail reports whether r may read /readyz's detail: the admin API's callers (an
// admin credential, or the local owner where the admin API lets it in). A wrong
// credential here counts against its source as it does on the admin API, so /readyz is
// no oracle for guessing.
func (hc health) readyDetail(r *http.Request) bool {
	g := hc.g
	if tok, has := auth.BearerToken(r.Header.Get("Authorization")); has {
		if g.gate.slowed(r) != nil {
			return false
		}
		if _, ok, _ := g.gate.adminCredential(r.Context(), tok); ok {
			return true
		}
		g.gate.credentialFailed(r, "readyz")
		return false
	}
	cfg := g.policy().cfg
	if cfg.Auth.AdminToken != "" || cfg.Auth.Mode != "none" {
		return false
	}
	_, ok := g.gate.localOwner(r)
	return ok
}

// metricsGate admits to /metrics (agent and tool names, in its labels) whom the admin API
// admits in auth mode none: the gateway's own user, or a caller with an admin credential
// (a Prometheus running as another user scrapes with one as its bearer token:
// docs/metrics.md). In the other modes /metrics stays as it was, open to whoever reaches
// the listener.
func metricsGate(g *Gateway, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cfg := g.policy().cfg
		if cfg.Auth.Mode == "none" && !(health{g}).readyDetail(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcpgw"`)
			http.Error(w, "/metrics is the gateway owner's: scrape as the user that runs the gateway, or with an admin credential as the bearer token (the local token in state_dir/local-token, or mcpgw token create-key --admin)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// probeStore reads a key that never exists: nil when the store answers (not found is an
// answer) and the last write succeeded. /readyz and the mcpgw_store_up gauge use it. A
// store that answers reads while its writes fail (a full disk) is not ready until a
// write succeeds again.
func (hc health) probeStore() error {
	g := hc.g
	if _, err := g.store.Get("readyz-probe"); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if err := g.writes.WriteError(); err != nil {
		return fmt.Errorf("the last write failed: %w", err)
	}
	return nil
}
