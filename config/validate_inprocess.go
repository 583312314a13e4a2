package config

import (
	"fmt"
	"slices"
)

// InProcessNote is the warning every inprocess server gets from validation: the config
// model cannot know whether a program embedding the gateway gives its handler, so
// `mcpgw validate` says where it can run, and the embedding program's Start checks it.
const InProcessNote = "type inprocess is served by a Go program that embeds mcpgw (embedded.Gateway AddServer or AddMCPServer); mcpgw serve cannot start it"

// inProcessProblems checks the servers of type inprocess: one handler in the host's
// process serves every session, so they run shared, and the keys that say how to start
// or reach a server are ignored. Agents may not ask for another mode either.
func (c validator) inProcessProblems() Problems {
	var ps Problems
	add := func(warn bool, where, format string, a ...any) {
		ps = append(ps, Problem{Warning: warn, Where: where, Text: fmt.Sprintf(format, a...)})
	}
	for _, name := range sortedKeys(c.Servers) {
		d := c.Servers[name]
		if d == nil || d.Transport() != TransportInProcess {
			continue
		}
		where := "servers." + name
		add(true, where, InProcessNote)
		if m := d.Mode; m != "" && m != "auto" && m != ModeShared {
			add(false, where, "mode %s: an inprocess server is one handler in the embedding program that serves every session, so it runs shared", m)
		}
		ignored := []struct {
			key string
			set bool
		}{{"command", d.Command != ""}, {"args", len(d.Args) > 0}, {"env", len(d.Env) > 0}, {"dir", d.Dir != ""},
			{"url", d.URL != ""}, {"stdio_proxy", d.StdioProxy}, {"tls", !d.TLS.files().IsZero()}}
		for _, k := range ignored {
			if k.set {
				add(true, where+"."+k.key, "is ignored for type inprocess")
			}
		}
	}
	for _, agent := range sortedKeys(c.Agents) {
		a := c.Agents[agent]
		if a == nil {
			continue
		}
		for _, u := range a.Servers {
			d := c.Servers[u.Name]
			if d == nil || d.Transport() != TransportInProcess || slices.Contains([]string{"", "auto", ModeShared}, u.Mode) {
				continue
			}
			add(false, "agents."+agent, "server %q: mode %s: an inprocess server runs shared (one handler serves every session)", u.Name, u.Mode)
		}
	}
	return ps
}
