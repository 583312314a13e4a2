package gateway

import (
	"net/http"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// apiRoutes is the admin API's route table (admin.API.Routes).
func apiRoutes(g *Gateway) []admin.Route { return g.admin.Routes() }

// pluginRow is a plugin as the admin API and the readiness answer show it.
type pluginRow = admin.PluginRow

// AgentView is the explanation of what an agent (with a task and executor) may see.
type AgentView struct {
	Agent     string                   `json:"agent"`
	Task      string                   `json:"task,omitempty"`
	Executor  string                   `json:"executor,omitempty"`
	Servers   []string                 `json:"servers"`
	Warnings  []string                 `json:"warnings,omitempty"`
	Tools     []auth.Decision          `json:"tools"`
	Admitted  int                      `json:"admitted"`
	Hidden    int                      `json:"hidden"`
	Overrides map[string]auth.Override `json:"overrides,omitempty"`
	// Modes is the instance policy each of the servers runs with for this agent (shared,
	// per_session, per_agent, per_call): the agent's mode, else the server's resolved one.
	Modes map[string]string `json:"modes,omitempty"`
}

// explainSources are reg's catalogues as explain decides them: every configured server's
// tools, then every plugin's as generated for scope (as for a client without elicitation),
// or why one has none. It reads only the registry, so it is no method of Gateway.
func explainSources(reg *registry.Registry, scope auth.PluginScope) []auth.ToolSource {
	var out []auth.ToolSource
	add := func(name, kind string, cat *registry.Catalog, state func() (string, string)) {
		if cat == nil {
			st, why := state()
			out = append(out, auth.ToolSource{Server: name, Down: kind + " " + st + ": " + why})
			return
		}
		src := auth.ToolSource{Server: name, Tools: make([]auth.ToolFacts, 0, len(cat.Tools))}
		for _, t := range cat.Tools {
			if !reg.Integrity().Serves(t) {
				continue // held: no session would see it
			}
			src.Tools = append(src.Tools, auth.ToolFacts{Exposed: t.Exposed, ReadOnly: t.ReadOnly, Also: t.OtherNames()})
		}
		out = append(out, src)
	}
	for _, name := range reg.Names() {
		srv := reg.Server(name)
		add(name, "server", srv.Catalog(), srv.State)
	}
	for _, name := range reg.PluginNames() {
		p := reg.Plugin(name)
		add(name, "plugin", p.CatalogFor(pluginScope(scope), false), p.State)
	}
	return out
}

// Explain decides every tool for an agent, task and executor.
func (g *Gateway) Explain(agent, task, executor string) (*AgentView, *auth.Failure) {
	cfg := g.policy().cfg
	if len(cfg.Agents) > 0 {
		if _, ok := cfg.Agents[agent]; !ok {
			return nil, &auth.Failure{Status: http.StatusNotFound, Message: "unknown agent " + agent}
		}
	}
	id := &auth.Identity{Agent: agent, Task: task, Executor: executor}
	var taskServers []string
	if task != "" {
		t, err := g.gate.task(task)
		if err != nil {
			return nil, &auth.Failure{Status: http.StatusNotFound, Message: "unknown task " + task}
		}
		taskServers = t.EnabledMCPServers
		if taskServers == nil {
			taskServers = []string{}
		}
		id.Project = t.Project
	}
	ds, res, fail := auth.Explain(cfg, id, taskServers, func(scope auth.PluginScope) []auth.ToolSource {
		return explainSources(g.reg, scope)
	})
	if fail != nil {
		return nil, fail
	}
	v := &AgentView{Agent: agent, Task: task, Executor: res.Executor, Servers: res.Servers, Warnings: res.Warnings, Tools: ds, Overrides: res.Overrides}
	if v.Servers == nil {
		v.Servers = []string{}
	}
	v.Modes = instanceModes(cfg, res)
	for _, d := range ds {
		if d.Admitted {
			v.Admitted++
		} else {
			v.Hidden++
		}
	}
	return v, nil
}

// serveResourceMetadata serves the RFC 9728 protected resource metadata in mode oauth.
func (gk *gatekeeper) serveResourceMetadata(w http.ResponseWriter, r *http.Request) {
	g := gk.g
	cfg := g.policy().cfg
	if cfg.Auth.Mode != "oauth" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(auth.ProtectedResourceMetadata(cfg.Auth.OAuth))
}
