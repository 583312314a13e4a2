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
	case cur.retired.Load() || !slices.Contains(old.names, name):
		r.applyMu.Unlock()
		return fmt.Errorf("server %q: %w", name, ErrRetired)
	}
	next := &serverSet{m: maps.Clone(old.m), names: old.names, plugins: old.plugins}
	s := r.newServer(name, cur.Def)
	cur.mu.Lock()
	s.restarts = cur.restarts + 1
	cur.mu.Unlock()
	next.m[name] = s
	r.set.Store(next)
	if r.started {
		r.run(s, nil)
	}
	cur.drain()
	r.log.Info("server restarted", "server", name)
	if r.OnState != nil {
		r.OnState(name, "restart")
	}
	r.changed(name)
	r.applyMu.Unlock()
	// Outside the lock: stopping a process may take its stop timeout, and a config
	// reload should not wait for that.
	r.inst.stopOwnOf(name)
	return nil
}

// Restart replaces the plugin, in its registry, by a new one of the same definition, as
// a change of its definition does: the old one stops at once (its calls in flight end
// with ErrPluginStopped, its provider closes once they did, or after Timing.DrainFor),
// and the new one opens its provider and reads its catalogue again, so a database that
// came back or a plugin executable that was replaced is picked up without a config
// reload. Its tools leave the sessions' views until it is up again (they are told:
// list_changed). A plugin already replaced or removed is an error naming it.
func (p *Plugin) Restart() error {
	r := p.reg
	r.applyMu.Lock()
	defer r.applyMu.Unlock()
	old := r.set.Load()
	if old.plugins[p.Name] != p {
		return fmt.Errorf("plugin %q was replaced or removed since it was looked up; look it up again", p.Name)
	}
	next := &serverSet{m: old.m, names: old.names, plugins: maps.Clone(old.plugins)}
	np := r.newPlugin(p.Name, p.Def)
	p.mu.Lock()
	np.restarts = p.restarts + 1
	p.mu.Unlock()
	next.plugins[p.Name] = np
	r.set.Store(next)
	p.stop()
	if r.started {
		r.runPlugin(np, func() {})
	}
	r.log.Info("plugin restarted", "plugin", p.Name)
	r.changed(p.Name)
	return nil
}
