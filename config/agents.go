package config

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// AgentConfig is an agents.<id> entry (docs/config.md).
type AgentConfig struct {
	Enabled  *bool      `yaml:"enabled"`
	Servers  []AgentUse `yaml:"servers"`
	Tools    ToolFilter `yaml:"tools"`
	ReadOnly bool       `yaml:"read_only"`
	// ConnectionScope limits the plugin connections the agent may use, by connection id
	// (nil: every connection). Other ids are absent from the tools' connectionId enum and
	// refused when sent.
	ConnectionScope []string `yaml:"connection_scope"`
	// Handshake is the agent's tools/list form (auto, full, thin or search; "": the
	// http.handshake).
	Handshake string `yaml:"handshake"`
	// PinnedTools are globs over exposed tool names listed in full in the search form for
	// this agent, besides http.search.pinned.
	PinnedTools []string    `yaml:"pinned_tools"`
	Executor    string      `yaml:"executor"`
	Keys        []string    `yaml:"api_keys"`
	Extra       interface{} `yaml:"-"`
}

// AgentUse names one server an agent may use, optionally with its own mode.
type AgentUse struct {
	Name string
	Mode string
}

// UnmarshalYAML accepts "name" or {name: x, mode: y}.
func (u *AgentUse) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		u.Name = n.Value
		return nil
	}
	var v struct {
		Name string `yaml:"name"`
		Mode string `yaml:"mode"`
	}
	if err := n.Decode(&v); err != nil {
		return err
	}
	u.Name, u.Mode = v.Name, v.Mode
	return nil
}

// ToolFilter holds allow and deny globs over exposed tool names.
type ToolFilter struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// ExecutorConfig is an executor and its MCP policy.
type ExecutorConfig struct {
	Type      string         `yaml:"type"`
	MCPPolicy ExecutorPolicy `yaml:"mcp_policy"`
	// Runner, when set, runs the stdio servers of this executor's sessions on the
	// executor's runner (mcpgw-bridge runner) instead of the gateway's host (docs/runners.md).
	Runner *RunnerConfig `yaml:"runner"`
}

// ExecutorPolicy is an executor's mcp_policy (docs/config.md).
type ExecutorPolicy struct {
	AllowStdio          *bool             `yaml:"allow_stdio"`
	AllowHTTP           *bool             `yaml:"allow_http"`
	AllowSSE            *bool             `yaml:"allow_sse"`
	AllowStreamableHTTP *bool             `yaml:"allow_streamable_http"`
	URLRewrite          map[string]string `yaml:"url_rewrite"`
	EnvInjection        map[string]string `yaml:"env_injection"`
	// EnvInjectionOverridesServer makes env_injection win even over a server that sets
	// allow_env_override (by default the policy's value wins over the server's own env,
	// unless the server sets allow_env_override).
	EnvInjectionOverridesServer bool     `yaml:"env_injection_overrides_server"`
	AllowlistServers            []string `yaml:"allowlist_servers"`
	DenylistServers             []string `yaml:"denylist_servers"`
}

// AllowsTransport applies the policy's transport switches to a normalised transport.
// allow_http and allow_streamable_http both name streamable HTTP ("http" is its short
// name in a server's type), so either one set to false forbids it. A transport the policy
// does not know is refused: a new transport must be allowed explicitly. An inprocess server
// has no switch (the gateway reaches it in its own process, wherever the agent runs); the
// policy's lists name it like any server.
func (p ExecutorPolicy) AllowsTransport(transport string) bool {
	allowed := func(b *bool) bool { return b == nil || *b }
	switch transport {
	case TransportInProcess:
		return true
	case TransportStdio:
		return allowed(p.AllowStdio)
	case TransportHTTP:
		return allowed(p.AllowHTTP) && allowed(p.AllowStreamableHTTP)
	case TransportSSE:
		return allowed(p.AllowSSE)
	}
	return false
}

// TaskConfig is a task provisioned from the file.
type TaskConfig struct {
	EnabledMCPServers []string `yaml:"enabled_mcp_servers"`
	Agent             string   `yaml:"agent"`
	// Project names the project the task belongs to: its servers narrow the task's
	// session before the task's own enabled_mcp_servers do (docs/auth.md).
	Project string `yaml:"project"`
}

// RewriteURL applies the longest matching prefix rule of an executor's url_rewrite to u
// (u itself when no rule matches).
func RewriteURL(u string, rules map[string]string) string {
	best := ""
	for from := range rules {
		if strings.HasPrefix(u, from) && len(from) > len(best) {
			best = from
		}
	}
	if best == "" {
		return u
	}
	return rules[best] + u[len(best):]
}

// RewrittenURLs are the distinct URLs the executors' url_rewrite rules make of u, in
// executor name order, without u itself.
func RewrittenURLs(executors map[string]*ExecutorConfig, u string) []string {
	var out []string
	for _, name := range sortedKeys(executors) {
		e := executors[name]
		if e == nil {
			continue
		}
		if r := RewriteURL(u, e.MCPPolicy.URLRewrite); r != u && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
