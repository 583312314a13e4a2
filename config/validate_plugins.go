package config

import (
	"os"
	"regexp"
	"strings"
)

var connectionIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// ValidConnectionID reports whether id has the form of a plugin connection id.
func ValidConnectionID(id string) bool { return connectionIDRE.MatchString(id) }

// pluginProblems checks plugins.<name>: the name rules of servers (and no server of the
// same name: sessions enable both by name), a known type, and each connection.
func (c validator) pluginProblems() Problems {
	var ps Problems
	for _, name := range sortedKeys(c.Plugins) {
		d := c.Plugins[name]
		where := "plugins." + name
		if d == nil {
			ps.add(false, where, "empty plugin definition")
			continue
		}
		if !serverNameRE.MatchString(name) {
			ps.add(false, where, "plugin name must be 1 to 64 of the characters A-Z a-z 0-9 _ -")
		}
		if _, clash := c.Servers[name]; clash {
			ps.add(false, where, "a server has the same name; sessions enable servers and plugins by name, so each name must be one or the other")
		}
		if d.OutOfProcess() || d.Type == "" && (len(d.Args) > 0 || len(d.Env) > 0 || d.Dir != "" || d.Config != nil) {
			ps = append(ps, commandPluginProblems(where, d)...)
			continue
		}
		if d.Dir != "" || len(d.Args) > 0 || len(d.Env) > 0 || d.Config != nil {
			ps.add(false, where, "args, env, dir and config are for plugins that run a command; a type %s plugin takes none", d.Type)
		}
		c.inProcessPluginProblems(&ps, name, where, d)
	}
	return ps
}

// inProcessPluginProblems checks what a plugin that runs in the gateway needs for its type.
func (c validator) inProcessPluginProblems(ps *Problems, name, where string, d *PluginDef) {
	switch d.Type {
	case "sql":
		sqlPluginProblems(ps, where, d)
	case PluginTypeSelf:
		if len(d.Connections) > 0 {
			ps.add(false, where+".connections", "the mcpgw plugin has one connection, the gateway itself; remove them here")
		}
		if d.DefaultEnabled != nil && *d.DefaultEnabled {
			ps.add(false, where+".default_enabled", "the mcpgw plugin is only for agents that list it in their servers; it cannot be enabled by default")
		}
		if !c.listedByAnAgent(name) {
			ps.add(true, where, "no agent lists %q in its servers: no session sees its tools", name)
		}
	case PluginTypeGo:
		if len(d.Connections) > 0 {
			ps.add(false, where+".connections", "a go plugin's connections come from its provider; remove them here")
		}
		if d.CallTimeout < 0 {
			ps.add(false, where+".call_timeout", "must not be negative")
		}
	case "":
		ps.add(false, where, "missing type (one of %s) or command (an out-of-process plugin)", strings.Join(PluginTypes(), ", "))
	default:
		ps.add(false, where, "unknown type %q (one of %s)", d.Type, strings.Join(PluginTypes(), ", "))
	}
}

// sqlPluginProblems checks a sql plugin: its connections, in id order, and call_timeout.
func sqlPluginProblems(ps *Problems, where string, d *PluginDef) {
	if len(d.Connections) == 0 {
		ps.add(false, where+".connections", "at least one connection is needed")
	}
	for _, id := range sortedKeys(d.Connections) {
		cc := d.Connections[id]
		cw := where + ".connections." + id
		if !connectionIDRE.MatchString(id) {
			ps.add(false, cw, "connection id must be 1 to 64 of the characters A-Z a-z 0-9 _ . -")
		}
		if cc == nil {
			ps.add(false, cw, "empty connection")
			continue
		}
		sqlConnectionProblems(ps, cw, cc)
	}
	if d.CallTimeout < 0 {
		ps.add(false, where+".call_timeout", "must not be negative")
	}
}

// sqlConnectionProblems checks one connection of a sql plugin.
func sqlConnectionProblems(ps *Problems, cw string, cc *PluginConnection) {
	if cc.Driver != "sqlite" && cc.Driver != "postgres" {
		ps.add(false, cw+".driver", "%q is not supported (sqlite or postgres)", cc.Driver)
	}
	if cc.Driver != "postgres" && (cc.Listen || len(cc.Schemas) > 0) {
		ps.add(false, cw, "listen and schemas are for postgres connections")
	}
	if cc.Driver == "postgres" && cc.Seed != "" {
		ps.add(false, cw+".seed", "seeds are for sqlite connections")
	}
	if strings.TrimSpace(cc.DSN) == "" {
		ps.add(false, cw+".dsn", "required")
	}
	if cc.Driver == "sqlite" && cc.Database == "" && strings.TrimSpace(cc.DSN) != "" && isMemoryDSN(cc.DSN) {
		ps.add(false, cw+".database", "an in-memory database needs a database name")
	}
	if strings.Contains(cc.Database, "::") {
		ps.add(false, cw+".database", "%q must not contain \"::\" (it is the group of resource keys group::version::kind)", cc.Database)
	}
	if cc.Seed != "" {
		if st, err := os.Stat(cc.Seed); err != nil {
			ps.add(false, cw+".seed", "%v", err)
		} else if st.IsDir() {
			ps.add(false, cw+".seed", "%s is a directory, not a SQL script", cc.Seed)
		}
	}
}

// isMemoryDSN reports whether a sqlite DSN names an in-memory database.
func isMemoryDSN(dsn string) bool {
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	return p == "" || p == ":memory:" || strings.Contains(dsn, "mode=memory")
}

// listedByAnAgent reports whether some agent lists name in its servers.
func (c validator) listedByAnAgent(name string) bool {
	for _, a := range c.Agents {
		if a == nil {
			continue
		}
		for _, u := range a.Servers {
			if u.Name == name {
				return true
			}
		}
	}
	return false
}

// hasConnection reports whether any plugin has a connection of that id.
func (c validator) hasConnection(id string) bool {
	for _, d := range c.Plugins {
		if d != nil && d.Type == PluginTypeSelf && id == "gateway" {
			return true // the mcpgw plugin's one connection
		}
		if d != nil {
			if d.OutOfProcess() {
				return true // its connections are known once it runs
			}
			if _, ok := d.Connections[id]; ok {
				return true
			}
		}
	}
	return false
}
