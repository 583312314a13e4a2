package config

import (
	"maps"
	"slices"
	"sort"
	"strconv"
)

// ProjectConfig is a project: the tier between the global servers (servers and plugins)
// and a task (issue 25, docs/config.md "Projects"). A project starts from Servers when it
// lists them, else from the servers and plugins enabled by default; Overrides then turn
// single servers on (true) or off (false) for the project, whatever their default_enabled.
type ProjectConfig struct {
	// Name is a label for people; the project's id is its key.
	Name string `yaml:"name"`
	// Servers, when set (even empty), is the project's whole set before Overrides.
	Servers []string `yaml:"servers"`
	// Overrides sets default_enabled per server for this project.
	Overrides map[string]bool `yaml:"overrides"`
}

// ProjectServers is the set of servers and plugins a project enables, sorted; ok is false
// when no project has that id.
func (c *Config) ProjectServers(id string) (names []string, ok bool) {
	p := c.Projects[id]
	if p == nil {
		return nil, false
	}
	set := map[string]bool{}
	if p.Servers != nil {
		for _, s := range p.Servers {
			set[s] = true
		}
	} else {
		for n, d := range c.Servers {
			set[n] = d != nil && d.Enabled()
		}
		for n, d := range c.Plugins {
			set[n] = d != nil && d.Enabled()
		}
	}
	for n, on := range p.Overrides {
		set[n] = on
	}
	for n, on := range set {
		if on && c.Has(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return nonNilStrings(names), true
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// validateProjects checks projects.<id>: every server a project lists or overrides is a
// server or plugin, named by the path of the entry that names it.
func (c validator) validateProjects(ps *Problems) {
	for _, id := range sortedKeys(c.Projects) {
		p := c.Projects[id]
		if p == nil {
			continue
		}
		where := "projects." + id
		if !serverNameRE.MatchString(id) {
			ps.add(false, where, "project id %q: use 1-64 letters, digits, '-' and '_'", id)
		}
		for i, s := range p.Servers {
			if !c.Has(s) {
				ps.add(false, where+".servers["+strconv.Itoa(i)+"]", "unknown server %q (no server or plugin has that name)", s)
			}
		}
		for _, s := range slices.Sorted(maps.Keys(p.Overrides)) {
			if !c.Has(s) {
				ps.add(false, where+".overrides."+s, "unknown server %q (no server or plugin has that name)", s)
			}
		}
	}
}
