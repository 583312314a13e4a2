package registry

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// ErrNoServer is returned for a server name the registry does not have.
var ErrNoServer = errors.New("no such server")

// ErrRetired is returned when restarting a server that was removed from the config.
var ErrRetired = errors.New("the server is retired (removed from the config; it stops when its last session ends)")

// Restart replaces a configured server by a new instance of the same definition, as a
// config change of the server does: the new one starts at once, and the old shared
// connection closes after Timing.DrainFor, so calls already on it finish. Every owner's
// per_session instance of it that started stops too, so the owner's next call starts a
// fresh one (one still starting is new already).
func (r *Registry) Restart(name string) error {
	r.applyMu.Lock()
	old := r.set.Load()
	cur := old.m[name]
	switch {
	case cur == nil:
		r.applyMu.Unlock()
		return fmt.Errorf("%w %q", ErrNoServer, name)
	case cur.Retired() || !slices.Contains(old.names, name):
		r.applyMu.Unlock()
		return fmt.Errorf("server %q: %w", name, ErrRetired)
	}
	next := &serverSet{m: maps.Clone(old.m), names: old.names, plugins: old.plugins}
	s := cur.Restarted()
	next.m[name] = s
	r.set.Store(next)
	if r.started {
		r.crew.server(s, nil)
	}
	cur.Drain()
	r.log.Info("server restarted", "server", name)
	if r.OnState != nil {
		r.OnState(name, "restart")
	}
	r.changes.note(name)
	r.applyMu.Unlock()
	// Outside the lock: stopping a process may take its stop timeout, and a config
	// reload should not wait for that.
	r.inst.StopOwnOf(name)
	return nil
}

// restartPlugin replaces p by a new plugin of its definition (Plugin.Restart).
func (r *Registry) restartPlugin(p *Plugin) error {
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	old := r.set.Load()
	if old.plugins[p.Name] != p {
		return fmt.Errorf("plugin %q was replaced or removed since it was looked up; look it up again", p.Name)
	}
	next := &serverSet{m: old.m, names: old.names, plugins: maps.Clone(old.plugins)}
	np := r.plug.Replace(p)
	next.plugins[p.Name] = np
	r.set.Store(next)
	p.Stop()
	if r.started {
		r.crew.plugin(np, func() {})
	}
	r.log.Info("plugin restarted", "plugin", p.Name)
	r.changes.note(p.Name)
	return nil
}
