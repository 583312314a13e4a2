package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// validateAgents checks agents.<name>, in name order.
func (c validator) validateAgents(ps *Problems) {
	for _, name := range sortedKeys(c.Agents) {
		a := c.Agents[name]
		if a == nil {
			continue
		}
		c.validateAgent(ps, "agents."+name, a)
	}
}

// validateAgent checks one agent: its servers, tool globs, connection scope, handshake,
// pinned tools and executor.
func (c validator) validateAgent(ps *Problems, where string, a *AgentConfig) {
	for _, u := range a.Servers {
		if !c.Has(u.Name) {
			ps.add(false, where, "unknown server %q (no server or plugin has that name)", u.Name)
		}
		if _, isPlugin := c.Plugins[u.Name]; isPlugin && u.Mode != "" && u.Mode != "auto" {
			ps.add(true, where, "plugin %q: mode %q is ignored (plugins run in the gateway)", u.Name, u.Mode)
		}
		switch u.Mode {
		case "", "auto", ModeShared, ModePerSession, ModePerAgent, ModePerCall:
		default:
			ps.add(false, where, "server %q: unknown mode %q", u.Name, u.Mode)
		}
		if d := c.Servers[u.Name]; d != nil && u.Mode == ModeShared && d.Transport() == TransportStdio && !d.StdioProxy {
			*ps = append(*ps, Problem{Where: where, Text: SharedStdioError(u.Name), Hint: SharedStdioHint})
		}
		if d := c.Servers[u.Name]; d != nil && u.Mode == ModeShared && d.Auth.PerUser() {
			ps.add(false, where, "server %q: its OAuth grants are per user, so its instances cannot be shared by every caller (mode shared)", u.Name)
		}
	}
	for _, g := range append(append([]string{}, a.Tools.Allow...), a.Tools.Deny...) {
		if _, err := filepath.Match(g, ""); err != nil {
			ps.add(false, where, "bad glob %q: %v", g, err)
		}
	}
	*ps = append(*ps, c.connectionScopeProblems(where+".connection_scope", a.ConnectionScope)...)
	if a.Handshake != "" && !validForm(a.Handshake) {
		ps.add(false, where, "handshake %q is not one of %s", a.Handshake, formList)
	}
	globProblems(ps, where+".pinned_tools", a.PinnedTools)
	if a.Executor != "" {
		if _, ok := c.Executors[a.Executor]; !ok {
			ps.add(false, where, "unknown executor %q", a.Executor)
		}
	}
}

// validateExecutors checks executors.<name>, in name order.
func (c validator) validateExecutors(ps *Problems) {
	for _, name := range sortedKeys(c.Executors) {
		e := c.Executors[name]
		if e == nil {
			continue
		}
		c.validateExecutor(ps, "executors."+name, e)
	}
}

// validateExecutor checks one executor: its type and its mcp_policy.
func (c validator) validateExecutor(ps *Problems, where string, e *ExecutorConfig) {
	switch e.Type {
	case "local_pc", "local_docker", "remote_docker", "remote_vps", "k8s":
	default:
		ps.add(false, where, "unknown type %q (one of local_pc, local_docker, remote_docker, remote_vps, k8s)", e.Type)
	}
	// What a session of this executor would log as skipped, said once here.
	for _, sn := range sortedKeys(c.Servers) {
		if d := c.Servers[sn]; d != nil && !e.MCPPolicy.AllowsTransport(d.Transport()) {
			ps.add(true, where+".mcp_policy", "does not allow transport %s: server %q is skipped for this executor's sessions", d.Transport(), sn)
		}
	}
	if len(e.MCPPolicy.AllowlistServers) > 0 && len(e.MCPPolicy.DenylistServers) > 0 {
		ps.add(true, where, "both allowlist_servers and denylist_servers are set; the allowlist wins")
	}
	for _, from := range sortedKeys(e.MCPPolicy.URLRewrite) {
		for _, side := range []string{from, e.MCPPolicy.URLRewrite[from]} {
			if u, err := url.Parse(side); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				ps.add(false, where+".mcp_policy.url_rewrite", "%q is not an http(s) URL prefix (both sides of a rule are, e.g. http://127.0.0.1:9000)", side)
			}
		}
	}
	for k := range e.MCPPolicy.EnvInjection {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			ps.add(false, where+".mcp_policy.env_injection", "%q is not an environment variable name", k)
		}
	}
	warnInjectionReplacesEnv(ps, c.Servers, where, e.MCPPolicy)
	validateRunner(ps, where+".runner", e.Runner)
	for _, s := range append(append([]string{}, e.MCPPolicy.AllowlistServers...), e.MCPPolicy.DenylistServers...) {
		if !c.Has(s) {
			ps.add(true, where, "names unknown server or plugin %q", s)
		}
	}
}

// validateTasks checks tasks.<name>, in name order.
func (c validator) validateTasks(ps *Problems) {
	for _, name := range sortedKeys(c.Tasks) {
		t := c.Tasks[name]
		if t == nil {
			continue
		}
		for _, s := range t.EnabledMCPServers {
			if !c.Has(s) {
				ps.add(false, "tasks."+name, "unknown server %q (no server or plugin has that name)", s)
			}
		}
		if t.Agent != "" {
			if _, ok := c.Agents[t.Agent]; !ok {
				ps.add(false, "tasks."+name, "unknown agent %q", t.Agent)
			}
		}
		if t.Project != "" && c.Projects[t.Project] == nil {
			ps.add(false, "tasks."+name+".project", "unknown project %q", t.Project)
		}
	}
}

// connectionScopeProblems checks a connection_scope (an agent's or a credential's): ids
// of the connection id form, each once; an id no plugin has is a warning (a plugin may be
// added later).
func (c validator) connectionScopeProblems(where string, scope []string) Problems {
	var ps Problems
	seen := map[string]bool{}
	for _, id := range scope {
		switch {
		case !connectionIDRE.MatchString(id):
			ps = append(ps, Problem{Where: where, Text: fmt.Sprintf("%q is not a connection id (1 to 64 of the characters A-Z a-z 0-9 _ . -)", id)})
		case seen[id]:
			ps = append(ps, Problem{Warning: true, Where: where, Text: fmt.Sprintf("%q is listed twice", id)})
		case !c.hasConnection(id):
			ps = append(ps, Problem{Warning: true, Where: where, Text: fmt.Sprintf("no plugin has a connection %q", id)})
		}
		seen[id] = true
	}
	return ps
}

// warnInjectionReplacesEnv says, for each variable the policy injects that a stdio
// server's own env also sets, which value its sessions get. The policy's value wins
// since env_injection became the executor's policy (before, the server's did): the
// warning is how a config written for the old rule finds out.
func warnInjectionReplacesEnv(ps *Problems, servers map[string]*ServerDef, where string, p ExecutorPolicy) {
	for _, sn := range sortedKeys(servers) {
		d := servers[sn]
		if d == nil || d.Transport() != TransportStdio || (d.AllowEnvOverride && !p.EnvInjectionOverridesServer) {
			continue
		}
		for _, k := range sortedKeys(p.EnvInjection) {
			if _, own := d.Env[k]; own {
				*ps = append(*ps, Problem{Warning: true, Where: where + ".mcp_policy.env_injection",
					Text: fmt.Sprintf("replaces %s of server %q: its sessions get the executor's value, not servers.%s.env.%s", k, sn, sn, k),
					Hint: "set servers." + sn + ".allow_env_override: true to keep the server's value"})
			}
		}
	}
}
