package gateway

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/mcpgw/mcpgw/config"
)

// agentDoc is an agent as the admin API reads and writes it (the config file's keys).
type agentDoc struct {
	Enabled   *bool         `json:"enabled,omitempty"`
	Servers   []agentUseDoc `json:"servers,omitempty"`
	Tools     *toolsDoc     `json:"tools,omitempty"`
	ReadOnly  bool          `json:"read_only,omitempty"`
	Handshake string        `json:"handshake,omitempty"`
	Executor  string        `json:"executor,omitempty"`
}

// agentUseDoc is "name" or {"name": …, "mode": …}.
type agentUseDoc struct {
	Name string `json:"name"`
	Mode string `json:"mode,omitempty"`
}

func (u *agentUseDoc) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		u.Name, u.Mode = s, ""
		return nil
	}
	type plain agentUseDoc
	return json.Unmarshal(b, (*plain)(u))
}

func (u agentUseDoc) MarshalJSON() ([]byte, error) {
	if u.Mode == "" {
		return json.Marshal(u.Name)
	}
	type plain agentUseDoc
	return json.Marshal(plain(u))
}

type toolsDoc struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

func (d *agentDoc) config() *config.AgentConfig {
	a := &config.AgentConfig{Enabled: d.Enabled, ReadOnly: d.ReadOnly, Handshake: d.Handshake, Executor: d.Executor}
	for _, u := range d.Servers {
		a.Servers = append(a.Servers, config.AgentUse{Name: u.Name, Mode: u.Mode})
	}
	if d.Tools != nil {
		a.Tools = config.ToolFilter{Allow: slices.Clone(d.Tools.Allow), Deny: slices.Clone(d.Tools.Deny)}
	}
	return a
}

func agentDocOf(a *config.AgentConfig) agentDoc {
	d := agentDoc{Enabled: a.Enabled, ReadOnly: a.ReadOnly, Handshake: a.Handshake, Executor: a.Executor}
	for _, u := range a.Servers {
		d.Servers = append(d.Servers, agentUseDoc{Name: u.Name, Mode: u.Mode})
	}
	if len(a.Tools.Allow) > 0 || len(a.Tools.Deny) > 0 {
		d.Tools = &toolsDoc{Allow: a.Tools.Allow, Deny: a.Tools.Deny}
	}
	return d
}

// executorDoc is an executor as the admin API reads and writes it.
type executorDoc struct {
	Type      string    `json:"type"`
	MCPPolicy policyDoc `json:"mcp_policy"`
}

// policyDoc is config.ExecutorPolicy with JSON names.
type policyDoc struct {
	AllowStdio                  *bool             `json:"allow_stdio,omitempty"`
	AllowHTTP                   *bool             `json:"allow_http,omitempty"`
	AllowSSE                    *bool             `json:"allow_sse,omitempty"`
	AllowStreamableHTTP         *bool             `json:"allow_streamable_http,omitempty"`
	URLRewrite                  map[string]string `json:"url_rewrite,omitempty"`
	EnvInjection                map[string]string `json:"env_injection,omitempty"`
	EnvInjectionOverridesServer bool              `json:"env_injection_overrides_server,omitempty"`
	AllowlistServers            []string          `json:"allowlist_servers,omitempty"`
	DenylistServers             []string          `json:"denylist_servers,omitempty"`
}

func (d *executorDoc) config() *config.ExecutorConfig {
	p := d.MCPPolicy
	return &config.ExecutorConfig{Type: d.Type, MCPPolicy: config.ExecutorPolicy{AllowStdio: p.AllowStdio, AllowHTTP: p.AllowHTTP,
		AllowSSE: p.AllowSSE, AllowStreamableHTTP: p.AllowStreamableHTTP, URLRewrite: maps.Clone(p.URLRewrite),
		EnvInjection: maps.Clone(p.EnvInjection), EnvInjectionOverridesServer: p.EnvInjectionOverridesServer,
		AllowlistServers: slices.Clone(p.AllowlistServers), DenylistServers: slices.Clone(p.DenylistServers)}}
}

func executorDocOf(e *config.ExecutorConfig) executorDoc {
	p := e.MCPPolicy
	return executorDoc{Type: e.Type, MCPPolicy: policyDoc{AllowStdio: p.AllowStdio, AllowHTTP: p.AllowHTTP, AllowSSE: p.AllowSSE,
		AllowStreamableHTTP: p.AllowStreamableHTTP, URLRewrite: p.URLRewrite, EnvInjection: p.EnvInjection,
		EnvInjectionOverridesServer: p.EnvInjectionOverridesServer, AllowlistServers: p.AllowlistServers, DenylistServers: p.DenylistServers}}
}
