package auth

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/mcpgw/mcpgw/config"
)

// Filter is the one decision function: what a session may see and call. tools/list,
// tools/call, prompts and resources all go through it (via the view the gateway builds
// with it). It decides over plain values (a server's name, a tool's exposed name and
// readOnlyHint), so the identity package depends on no catalogue type.
type Filter struct {
	key      string
	allow    []string
	deny     []string
	narrow   []string // credential's tool globs (nil: none)
	readOnly bool
	servers  map[string]bool // nil: every server of the session
	conns    []string        // the agent's and credential's connection_scope, intersected (nil: every plugin connection)
}

// NewFilter builds the filter for an agent (and credential) under cfg.
func NewFilter(cfg *config.Config, id *Identity) *Filter {
	f := &Filter{}
	if ac := cfg.Agents[id.Agent]; ac != nil {
		f.allow, f.deny, f.readOnly = ac.Tools.Allow, ac.Tools.Deny, ac.ReadOnly
		if ac.ConnectionScope != nil {
			f.conns = append([]string{}, ac.ConnectionScope...)
			sort.Strings(f.conns)
		}
		if ac.Enabled != nil && !*ac.Enabled {
			f.servers = map[string]bool{}
		} else if ac.Servers != nil { // [] is no server; nil, the defaults
			f.servers = map[string]bool{}
			for _, u := range ac.Servers {
				f.servers[u.Name] = true
			}
		}
	}
	if id.Claims != nil {
		f.narrow = id.Claims.Tools
		f.readOnly = f.readOnly || id.Claims.ReadOnly
		f.conns = narrowConns(f.conns, id.Claims.ConnectionScope)
		if id.Claims.Servers != nil {
			cs := map[string]bool{}
			for _, s := range id.Claims.Servers {
				if f.servers == nil || f.servers[s] {
					cs[s] = true
				}
			}
			f.servers = cs
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "a%q d%q n%q r%v", f.allow, f.deny, f.narrow, f.readOnly)
	if f.servers != nil {
		ks := make([]string, 0, len(f.servers))
		for k := range f.servers {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		fmt.Fprintf(&b, " s%q", ks)
	}
	if f.conns != nil {
		fmt.Fprintf(&b, " c%q", f.conns)
	}
	f.key = b.String()
	return f
}

// narrowConns is the narrower of two connection scopes (nil: no limit): their
// intersection when both limit, sorted.
func narrowConns(agent, cred []string) []string {
	switch {
	case cred == nil:
		return agent
	case agent == nil:
		out := append([]string{}, cred...)
		sort.Strings(out)
		return slices.Compact(out)
	}
	out := []string{}
	for _, c := range agent {
		if slices.Contains(cred, c) {
			out = append(out, c)
		}
	}
	return out
}

// Key identifies the filter's rules, for view caching.
func (f *Filter) Key() string { return f.key }

// PluginScope is what a session's plugin tools are generated for: the connections it may
// use (nil: every one) and whether it is read-only (then create, update, delete and
// Dangerous actions are not generated at all).
type PluginScope struct {
	Connections []string
	ReadOnly    bool
}

// PluginScope is the scope the session's plugin tools are generated for.
func (f *Filter) PluginScope() PluginScope {
	return PluginScope{Connections: f.conns, ReadOnly: f.readOnly}
}

// Server reports whether the agent may still use a server of its session.
func (f *Filter) Server(name string) (bool, string) {
	if f.servers != nil && !f.servers[name] {
		return false, "server not permitted for this agent or credential"
	}
	return true, ""
}

// Tool decides one tool of server (a server or plugin), by its exposed name and its
// readOnlyHint, and names the rule that decided. also are other names of the same tool that
// globs match as well (the name before naming.max_length cut it, which is the one an
// operator writes "server__*" against): a deny glob that matches any name denies, an allow
// glob that matches any name admits.
func (f *Filter) Tool(server, exposed string, readOnly bool, also ...string) (bool, string) {
	return f.decide(server, append([]string{exposed}, also...), readOnly, "tool")
}

// Prompt decides one prompt by the same rules as a tool: its server, the agent's allow and
// deny globs, the credential's narrowing, and read_only (a prompt carries no readOnlyHint,
// and its server runs code to render it, so a read-only agent sees none).
func (f *Filter) Prompt(server, exposed string) bool {
	ok, _ := f.decide(server, []string{exposed}, false, "prompt")
	return ok
}

// matchAny reports whether glob g matches one of names.
func matchAny(g string, names []string) bool {
	for _, n := range names {
		if m, _ := path.Match(g, n); m {
			return true
		}
	}
	return false
}

// decide is the one rule set for every named thing a session may use, by each of its names.
func (f *Filter) decide(server string, names []string, readOnly bool, kind string) (bool, string) {
	if ok, why := f.Server(server); !ok {
		return false, why
	}
	for _, g := range f.deny {
		if matchAny(g, names) {
			return false, "denied by agent tools.deny " + g
		}
	}
	rule := "admitted: server " + server + " is in the session"
	if len(f.allow) > 0 {
		hit := ""
		for _, g := range f.allow {
			if matchAny(g, names) {
				hit = g
				break
			}
		}
		if hit == "" {
			return false, "not matched by agent tools.allow"
		}
		rule = "admitted by agent tools.allow " + hit
	}
	if f.narrow != nil {
		hit := false
		for _, g := range f.narrow {
			if matchAny(g, names) {
				hit = true
				break
			}
		}
		if !hit {
			return false, "not matched by the credential's tools"
		}
	}
	if f.readOnly && !readOnly {
		return false, "read_only: " + kind + " is not annotated readOnlyHint: true"
	}
	return true, rule
}
