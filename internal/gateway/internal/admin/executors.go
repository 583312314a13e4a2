package admin

import (
	"maps"
	"slices"

	"github.com/mcpgw/mcpgw/config"
)

// executorDoc is an executor as the admin API reads and writes it.
type executorDoc struct {
	Type      string     `json:"type"`
	MCPPolicy policyDoc  `json:"mcp_policy"`
	Runner    *runnerDoc `json:"runner,omitempty"`
}

// runnerDoc is config.RunnerConfig with JSON names: the hex SHA-256 digests of the keys
// the executor's runner may present (docs/runners.md). A digest is no secret, so it is
// shown as written.
type runnerDoc struct {
	Keys []string `json:"keys"`
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
	e := &config.ExecutorConfig{Type: d.Type, MCPPolicy: config.ExecutorPolicy{AllowStdio: p.AllowStdio, AllowHTTP: p.AllowHTTP,
		AllowSSE: p.AllowSSE, AllowStreamableHTTP: p.AllowStreamableHTTP, URLRewrite: maps.Clone(p.URLRewrite),
		EnvInjection: maps.Clone(p.EnvInjection), EnvInjectionOverridesServer: p.EnvInjectionOverridesServer,
		AllowlistServers: slices.Clone(p.AllowlistServers), DenylistServers: slices.Clone(p.DenylistServers)}}
	if d.Runner != nil {
		e.Runner = &config.RunnerConfig{Keys: slices.Clone(d.Runner.Keys)}
	}
	return e
}

func executorDocOf(e *config.ExecutorConfig) executorDoc {
	p := e.MCPPolicy
	d := executorDoc{Type: e.Type, MCPPolicy: policyDoc{AllowStdio: p.AllowStdio, AllowHTTP: p.AllowHTTP, AllowSSE: p.AllowSSE,
		AllowStreamableHTTP: p.AllowStreamableHTTP, URLRewrite: p.URLRewrite, EnvInjection: p.EnvInjection,
		EnvInjectionOverridesServer: p.EnvInjectionOverridesServer, AllowlistServers: p.AllowlistServers, DenylistServers: p.DenylistServers}}
	if e.Runner != nil {
		d.Runner = &runnerDoc{Keys: e.Runner.Keys}
	}
	return d
}

// executorSpec describes executors to policyAPI.
func executorSpec() *policySpec {
	return &policySpec{kind: kindExecutor, section: "executors",
		fileDoc: func(c *config.Config, id string) (any, bool) {
			e, ok := c.Executors[id]
			if !ok || e == nil {
				return nil, ok
			}
			return executorDocOf(e), true
		},
		fileIDs: func(c *config.Config) []string { return sortedKeys(c.Executors) },
		decode: func(b []byte) (any, []FieldError) {
			var d struct {
				executorDoc
				readOnlyFields
			}
			errs := DecodeStrict(b, &d, nil)
			return &d.executorDoc, errs
		},
		normalize: normalizeExecutorBody,
		redact: func(doc map[string]any) {
			if p, _ := doc["mcp_policy"].(map[string]any); p != nil {
				if env, _ := p["env_injection"].(map[string]any); env != nil {
					for k := range env {
						env[k] = Redacted
					}
				}
			}
		},
	}
}
