package registry

// Apply and what follows it: a new config while the gateway runs, replaced servers
// drained, retired servers released once no session uses them.

import (
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/instances"
	"github.com/mcpgw/mcpgw/internal/registry/internal/plugins"
)

// Change is what Apply did to one server.
type Change struct {
	Server string
	// Kind is "added", "changed", "retired", "removed" (a plugin: it stops at once) or
	// "restored" (a retired server configured again with the same definition).
	Kind string
}

// Apply makes cfg the registry's config while the gateway runs. A server that is new
// starts in the background; one whose definition changed is replaced by a new instance
// (its old shared connection stays open for Timing.DrainFor, so calls already on it finish); one
// that is gone is retired: it stays up for the sessions that already have it, new
// sessions no longer see it, and Release stops it once no session uses it. Servers whose
// definition is unchanged keep running untouched.
func (r *Registry) Apply(cfg *config.Config) []Change {
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	r.gate.SetLimit(cfg.Upstream.StartConcurrency)
	// upstream.busy_poll, for the calls from now on (the plugin kinds follow it through
	// Configure: configureKinds).
	r.dialer.Busy.SetDuration(cfg.Upstream.BusyPoll)
	r.plug.Configure(cfg)
	old := r.set.Load()
	// Exposed names depend on the naming settings: a change there re-lists every server.
	renamed := !reflect.DeepEqual(r.cfg.Load().Naming, cfg.Naming) || r.cfg.Load().Upstream.MaxMessageBytes != cfg.Upstream.MaxMessageBytes
	next := &serverSet{m: make(map[string]*Server, len(old.m)+len(cfg.Servers))}
	var changes []Change
	var start, drain []*Server
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		d := cfg.Servers[name]
		next.names = append(next.names, name)
		cur := old.m[name]
		switch {
		case cur == nil:
			cur = instances.NewServer(r.ih, name, d)
			start = append(start, cur)
			changes = append(changes, Change{name, "added"})
		case renamed || !SameDef(cur.Def, d):
			drain = append(drain, cur)
			cur = instances.NewServer(r.ih, name, d)
			start = append(start, cur)
			changes = append(changes, Change{name, "changed"})
		case cur.Retired():
			cur.SetRetired(false)
			changes = append(changes, Change{name, "restored"})
		}
		next.m[name] = cur
	}
	for name, s := range old.m {
		if _, ok := cfg.Servers[name]; ok {
			continue
		}
		next.m[name] = s
		if !s.SetRetired(true) {
			changes = append(changes, Change{name, "retired"})
		}
	}
	next.plugins = make(map[string]*Plugin, len(cfg.Plugins))
	var startP, stopP []*Plugin
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		d := cfg.Plugins[name]
		if d == nil {
			continue
		}
		cur := old.plugins[name]
		switch {
		case cur == nil:
			cur = r.plug.New(name, d)
			startP = append(startP, cur)
			changes = append(changes, Change{name, "added"})
		case renamed || !plugins.SameDef(cur.Def, d):
			stopP = append(stopP, cur)
			cur = r.plug.New(name, d)
			startP = append(startP, cur)
			changes = append(changes, Change{name, "changed"})
		}
		next.plugins[name] = cur
	}
	for name, p := range old.plugins {
		if next.plugins[name] == nil {
			stopP = append(stopP, p)
			changes = append(changes, Change{name, "removed"})
		}
	}
	r.cfg.Store(cfg)
	r.set.Store(next)
	for _, p := range stopP {
		p.Stop()
	}
	if r.started {
		markActs(adminAct(cfg), start, startP)
		for _, s := range start {
			r.crew.server(s, nil)
		}
		for _, p := range startP {
			r.crew.plugin(p, func() {})
		}
	}
	for _, s := range drain {
		s.Drain()
	}
	for _, c := range changes {
		r.log.Info("server "+c.Kind, "server", c.Server)
		r.changes.note(c.Server)
	}
	return changes
}

// markActs records that the admin act act added or changed the servers and plugins:
// their next catalogue is approved by it (docs/integrity.md).
func markActs(act string, servers []*Server, plugins []*Plugin) {
	now := time.Now()
	for _, s := range servers {
		s.Act().Store(&pendingAct{By: act, Until: now.Add(actWindow(s.Def.Timeouts.Connect))})
	}
	for _, p := range plugins {
		p.Act().Store(&pendingAct{By: act, Until: now.Add(actWindow(0))})
	}
}

// HasRetired reports whether any retired server is waiting for Release.
func (r *Registry) HasRetired() bool {
	for _, s := range r.set.Load().m {
		if s.Retired() {
			return true
		}
	}
	return false
}

// Release stops and forgets retired servers that no session uses any more; inUse reports
// whether any live session has the server in its set.
func (r *Registry) Release(inUse func(server string) bool) []string {
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	old := r.set.Load()
	var gone []string
	for name, s := range old.m {
		if s.Retired() && !inUse(name) {
			gone = append(gone, name)
		}
	}
	if len(gone) == 0 {
		return nil
	}
	next := &serverSet{m: maps.Clone(old.m), names: old.names, plugins: old.plugins}
	for _, name := range gone {
		next.m[name].Stop()
		delete(next.m, name)
		r.log.Info("retired server stopped", "server", name)
	}
	r.set.Store(next)
	for _, name := range gone {
		r.changes.note(name)
	}
	slices.Sort(gone)
	return gone
}

// SameDef reports whether two server definitions would run the same upstream the same
// way. Meta (title, description, …) is not part of it: changing it restarts nothing.
func SameDef(a, b *config.ServerDef) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Meta, y.Meta = config.ServerMeta{}, config.ServerMeta{}
	return reflect.DeepEqual(x, y)
}
