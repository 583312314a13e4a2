package auth

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/mcpgw/mcpgw/config"
)

// Override is what the agent's config or executor policy changes for one server. A
// session's record keeps the same fields (sessions.Override); the gateway copies them.
type Override struct {
	Mode string            `json:"mode,omitempty"`
	URL  string            `json:"url,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
	// Runner names the executor whose runner starts this stdio server (docs/runners.md).
	Runner string `json:"runner,omitempty"`
}

// Resolution is a session's server set, decided once at session start (docs/auth.md).
type Resolution struct {
	Servers   []string
	Overrides map[string]Override
	Executor  string
	Warnings  []string
}

// Resolve runs the resolution pipeline: the agent's servers (a disabled agent has none),
// then the executor policy (allowlist, else denylist, then transports; URL rewrite; env
// injection), then the servers of the task's project (id.Project), then the task's
// enabled servers, then the credential's narrowing, then modes. taskServers is nil when
// the session has no task. A project no config names any more (deleted under a stored
// task) enables nothing: a task is never widened by its project's disappearance.
func Resolve(cfg *config.Config, id *Identity, taskServers []string) (*Resolution, *Failure) {
	res := &Resolution{Overrides: map[string]Override{}}
	var names []string
	modes := map[string]string{}
	if ac, ok := cfg.Agents[id.Agent]; ok && ac != nil {
		if ac.Enabled != nil && !*ac.Enabled {
			return res, nil
		}
		// No list (nil) is the defaults; an empty list is no server at all.
		if ac.Servers == nil {
			names = defaultsForTask(cfg, id.Project, taskServers)
		}
		for _, u := range ac.Servers {
			names = append(names, u.Name)
			if u.Mode != "" && u.Mode != "auto" {
				modes[u.Name] = u.Mode
			}
		}
		res.Executor = ac.Executor
	} else {
		names = defaultsForTask(cfg, id.Project, taskServers)
	}
	if id.Executor != "" {
		if _, ok := cfg.Executors[id.Executor]; !ok {
			return nil, &Failure{Status: http.StatusForbidden, Reason: "unknown_executor", Message: fmt.Sprintf("Forbidden: unknown executor %q", id.Executor)}
		}
		res.Executor = id.Executor
	}
	if ex := cfg.Executors[res.Executor]; ex != nil {
		names = applyExecutor(cfg, ex.MCPPolicy, res, names)
	}
	if id.Project != "" {
		names = narrowToProject(cfg, id.Project, names, res)
	}
	if taskServers != nil {
		warnUnknownTaskServers(cfg, id.Task, taskServers, res)
		names = intersect(names, taskServers, func(n string) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("server %q is not enabled for task %q", n, id.Task))
		})
	}
	if id.Claims != nil && id.Claims.Servers != nil {
		names = intersect(names, id.Claims.Servers, func(n string) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("server %q is outside the credential's servers", n))
		})
	}
	sort.Strings(names)
	for _, n := range names {
		if _, isPlugin := cfg.Plugins[n]; isPlugin {
			res.Servers = append(res.Servers, n) // in-process: no mode, no transport
			continue
		}
		d := cfg.Servers[n]
		if d == nil {
			continue
		}
		if m := modes[n]; m != "" {
			if m == config.ModeShared && d.Transport() == config.TransportStdio && !d.StdioProxy {
				res.Warnings = append(res.Warnings, config.SharedStdioError(n))
				continue
			}
			o := res.Overrides[n]
			o.Mode = m
			res.Overrides[n] = o
		}
		res.Servers = append(res.Servers, n)
	}
	return res, nil
}

// narrowToProject keeps the names the project enables (config.ProjectServers), with a
// warning for each one it drops.
func narrowToProject(cfg *config.Config, project string, names []string, res *Resolution) []string {
	keep, ok := cfg.ProjectServers(project)
	if !ok {
		res.Warnings = append(res.Warnings, fmt.Sprintf("project %q does not exist: it enables no server", project))
	}
	return intersect(names, keep, func(n string) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("server %q is not enabled for project %q", n, project))
	})
}

// defaultsForTask is defaultsFor, plus, for a session of a task outside any project, the
// servers and plugins the task names that are off by default: default_enabled is what a
// session gets when nothing says otherwise, and a task's enabled_mcp_servers says
// otherwise. The mcpgw plugin is not switched on this way (an agent lists it), nor is
// anything outside the task's project (the project is the task's bound).
func defaultsForTask(cfg *config.Config, project string, taskServers []string) []string {
	names := defaultsFor(cfg, project)
	if project != "" {
		return names
	}
	for _, n := range taskServers {
		if slices.Contains(names, n) {
			continue
		}
		if d := cfg.Servers[n]; d != nil {
			names = append(names, n)
		} else if p := cfg.Plugins[n]; p != nil && p.Type != config.PluginTypeSelf {
			names = append(names, n)
		}
	}
	return names
}

// warnUnknownTaskServers warns of each name in a task's list that no server or plugin has
// (one deleted since the task was saved, or a file task's typo).
func warnUnknownTaskServers(cfg *config.Config, task string, taskServers []string, res *Resolution) {
	for _, n := range taskServers {
		if !cfg.Has(n) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("task %q names server %q, which does not exist", task, n))
		}
	}
}

// defaultsFor is the servers of an agent that lists none: the project's set when the
// session's task has a project (so that a project's override can turn on a server that is
// off by default), else every server and plugin enabled by default. The mcpgw plugin stays
// for agents that list it.
func defaultsFor(cfg *config.Config, project string) []string {
	names, ok := cfg.ProjectServers(project)
	if project == "" || !ok {
		return defaultEnabled(cfg)
	}
	return slices.DeleteFunc(names, func(n string) bool {
		d := cfg.Plugins[n]
		return d != nil && d.Type == config.PluginTypeSelf
	})
}

func defaultEnabled(cfg *config.Config) []string {
	var out []string
	for n, d := range cfg.Servers {
		if d != nil && d.Enabled() {
			out = append(out, n)
		}
	}
	for n, d := range cfg.Plugins {
		if d != nil && d.Enabled() {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func intersect(names, keep []string, dropped func(string)) []string {
	set := map[string]bool{}
	for _, k := range keep {
		set[k] = true
	}
	var out []string
	for _, n := range names {
		if set[n] {
			out = append(out, n)
		} else {
			dropped(n)
		}
	}
	return out
}

func applyExecutor(cfg *config.Config, p config.ExecutorPolicy, res *Resolution, names []string) []string {
	var out []string
	allow := map[string]bool{}
	for _, s := range p.AllowlistServers {
		allow[s] = true
	}
	deny := map[string]bool{}
	for _, s := range p.DenylistServers {
		deny[s] = true
	}
	for _, n := range names {
		_, isPlugin := cfg.Plugins[n]
		d := cfg.Servers[n]
		if d == nil && !isPlugin {
			continue
		}
		switch {
		case len(allow) > 0 && !allow[n]:
			res.Warnings = append(res.Warnings, fmt.Sprintf("server %q skipped: not in executor %q allowlist", n, res.Executor))
			continue
		case len(allow) == 0 && deny[n]:
			res.Warnings = append(res.Warnings, fmt.Sprintf("server %q skipped: in executor %q denylist", n, res.Executor))
			continue
		}
		if isPlugin {
			// A plugin runs inside the gateway: the executor's transports, URL rewrites
			// and environment do not concern it, its lists do.
			out = append(out, n)
			continue
		}
		ok := p.AllowsTransport(d.Transport())
		if !ok {
			res.Warnings = append(res.Warnings, fmt.Sprintf("server %q skipped: executor %q does not allow transport %s", n, res.Executor, d.Type))
			continue
		}
		o := executorOverride(cfg, p, res.Executor, d, res.Overrides[n])
		if o.URL != "" || len(o.Env) > 0 || o.Runner != "" {
			res.Overrides[n] = o
		}
		out = append(out, n)
	}
	return out
}

// executorOverride is o with what executor p changes of server d: its URL rewritten,
// the executor's environment injected into a stdio server, and a stdio server of an
// executor with a runner run there.
func executorOverride(cfg *config.Config, p config.ExecutorPolicy, executor string, d *config.ServerDef, o Override) Override {
	if d.URL != "" {
		if u := RewriteURL(d.URL, p.URLRewrite); u != d.URL {
			o.URL = u
		}
	}
	if len(p.EnvInjection) > 0 && d.Transport() == config.TransportStdio {
		o.Env = map[string]string{}
		for k, v := range p.EnvInjection {
			// The policy's value wins, unless the server allows its own to override
			// it and the policy does not insist.
			if _, own := d.Env[k]; !own || !d.AllowEnvOverride || p.EnvInjectionOverridesServer {
				o.Env[k] = v
			}
		}
	}
	if d.Transport() == config.TransportStdio && cfg.Executors[executor].HasRunner() {
		o.Runner = executor
		if o.Mode == config.ModeShared || (o.Mode == "" && d.Mode == config.ModeShared) {
			// One process for every session would run on one executor's runner for
			// the others too: on a runner it is one per agent of this executor.
			o.Mode = config.ModePerAgent
		}
	}
	return o
}

// RewriteURL applies the longest matching prefix rule of url_rewrite
// (config.RewriteURL).
func RewriteURL(u string, rules map[string]string) string { return config.RewriteURL(u, rules) }

// Decision is one line of an explanation.
type Decision struct {
	Tool     string `json:"tool"`
	Server   string `json:"server"`
	Admitted bool   `json:"admitted"`
	Rule     string `json:"rule"`
}

// ToolSource is one server's or plugin's tools as Explain decides them: each tool's
// exposed name and readOnlyHint, or, when it has no catalogue, why (Down).
type ToolSource struct {
	Server string
	Tools  []ToolFacts
	Down   string // "server down: ...", "plugin starting: ..."; empty when Tools is the catalogue
}

// ToolFacts are what the filter reads of a tool.
type ToolFacts struct {
	Exposed  string
	ReadOnly bool
	Also     []string // other names of the tool that globs match (Filter.Tool)
}

// Explain lists every tool of every configured server with the decision for an identity
// (and task): servers outside the session's resolution are hidden with the reason. tools
// gives the catalogues in order, plugin tools as generated for scope (the identity's
// connections and read-only).
func Explain(cfg *config.Config, id *Identity, taskServers []string, tools func(scope PluginScope) []ToolSource) ([]Decision, *Resolution, *Failure) {
	res, fail := Resolve(cfg, id, taskServers)
	if fail != nil {
		return nil, nil, fail
	}
	in := map[string]bool{}
	for _, s := range res.Servers {
		in[s] = true
	}
	f := NewFilter(cfg, id)
	var out []Decision
	for _, src := range tools(f.PluginScope()) {
		if src.Down != "" {
			out = append(out, Decision{Tool: "*", Server: src.Server, Rule: src.Down})
			continue
		}
		for _, t := range src.Tools {
			d := Decision{Tool: t.Exposed, Server: src.Server}
			if !in[src.Server] {
				d.Rule = serverReason(cfg, id, res, src.Server, taskServers)
			} else {
				d.Admitted, d.Rule = f.Tool(src.Server, t.Exposed, t.ReadOnly, t.Also...)
			}
			out = append(out, d)
		}
	}
	return out, res, nil
}

func serverReason(cfg *config.Config, id *Identity, res *Resolution, name string, taskServers []string) string {
	for _, w := range res.Warnings {
		if strings.Contains(w, fmt.Sprintf("%q", name)) {
			return w
		}
	}
	if ac, ok := cfg.Agents[id.Agent]; ok && ac != nil {
		if ac.Enabled != nil && !*ac.Enabled {
			return "agent is disabled"
		}
		return "server not in agent " + id.Agent + "'s servers"
	}
	if d := cfg.Servers[name]; d != nil && !d.Enabled() {
		return "server has default_enabled: false"
	}
	if d := cfg.Plugins[name]; d != nil && d.Type == config.PluginTypeSelf {
		return "the mcpgw plugin is only for agents that list it in their servers"
	}
	if d := cfg.Plugins[name]; d != nil && !d.Enabled() {
		return "plugin has default_enabled: false"
	}
	return "server not in the session"
}
