package admin

import (
	"encoding/json"
	"slices"

	"github.com/mcpgw/mcpgw/config"
)

// agentDoc is an agent as the admin API reads and writes it (the config file's keys).
type agentDoc struct {
	Enabled *bool `json:"enabled,omitempty"`
	// Servers is the agent's list: null (or absent) is the servers enabled by default, []
	// is none. Not omitempty, so that [] survives the store and the answer.
	Servers   []agentUseDoc `json:"servers"`
	Tools     *toolsDoc     `json:"tools,omitempty"`
	ReadOnly  bool          `json:"read_only,omitempty"`
	Handshake string        `json:"handshake,omitempty"`
	// PinnedTools are globs over exposed tool names the search form lists in full for
	// this agent, besides http.search.pinned.
	PinnedTools []string `json:"pinned_tools,omitempty"`
	Executor    string   `json:"executor,omitempty"`
	// Meta is free-form data an orchestrator keeps with the agent (/api/mcp-config); the
	// gateway stores and shows it and never reads it.
	Meta map[string]any `json:"meta,omitempty"`
	// ConnectionScope limits the plugin connections the agent may use: absent, every one;
	// [], none. A pointer, so that [] survives.
	ConnectionScope *[]string `json:"connection_scope,omitempty"`
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
	a := &config.AgentConfig{Enabled: d.Enabled, ReadOnly: d.ReadOnly, Handshake: d.Handshake, Executor: d.Executor,
		PinnedTools: slices.Clone(d.PinnedTools)}
	if d.Servers != nil {
		a.Servers = make([]config.AgentUse, 0, len(d.Servers))
	}
	for _, u := range d.Servers {
		a.Servers = append(a.Servers, config.AgentUse{Name: u.Name, Mode: u.Mode})
	}
	if d.Tools != nil {
		a.Tools = config.ToolFilter{Allow: slices.Clone(d.Tools.Allow), Deny: slices.Clone(d.Tools.Deny)}
	}
	if d.ConnectionScope != nil {
		a.ConnectionScope = append([]string{}, *d.ConnectionScope...)
	}
	return a
}

func agentDocOf(a *config.AgentConfig) agentDoc {
	d := agentDoc{Enabled: a.Enabled, ReadOnly: a.ReadOnly, Handshake: a.Handshake, Executor: a.Executor,
		PinnedTools: slices.Clone(a.PinnedTools)}
	if a.Servers != nil {
		d.Servers = make([]agentUseDoc, 0, len(a.Servers))
	}
	for _, u := range a.Servers {
		d.Servers = append(d.Servers, agentUseDoc{Name: u.Name, Mode: u.Mode})
	}
	if len(a.Tools.Allow) > 0 || len(a.Tools.Deny) > 0 {
		d.Tools = &toolsDoc{Allow: a.Tools.Allow, Deny: a.Tools.Deny}
	}
	if a.ConnectionScope != nil {
		cs := slices.Clone(a.ConnectionScope)
		d.ConnectionScope = &cs
	}
	return d
}

// agentSpec describes agents to policyAPI.
func agentSpec() *policySpec {
	return &policySpec{kind: kindAgent, section: "agents",
		fileDoc: func(c *config.Config, id string) (any, bool) {
			a, ok := c.Agents[id]
			if !ok || a == nil {
				return nil, ok
			}
			return agentDocOf(a), true
		},
		fileIDs: func(c *config.Config) []string { return sortedKeys(c.Agents) },
		decode: func(b []byte) (any, []FieldError) {
			var d struct {
				agentDoc
				readOnlyFields
			}
			errs := DecodeStrict(b, &d, nil)
			return &d.agentDoc, errs
		},
	}
}
