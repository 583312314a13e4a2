// Package plugins runs the gateway's plugins (plugins.<name>): resource providers inside
// the gateway (or out of process, through a supplied kind) whose resource types become
// tools. It opens and supervises each plugin, generates its tools for a session's scope as
// catalogue data (package catalog), and runs its calls, resource reads and watches. What
// it needs of the registry that holds the plugins is given to it (Host): it takes no
// lock but its own.
package plugins

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/plugin"
)

// Plugin states, the words of the registry's server states.
const (
	StateStarting = "starting"
	StateUp       = "up"
	StateDown     = "down"
	StateStopped  = "stopped"
)

// Host is what plugins need of the registry that holds them.
type Host struct {
	// Ctx ends every plugin (the registry closing).
	Ctx context.Context
	Log *slog.Logger
	// Config is the config the registry last applied.
	Config func() *config.Config
	// BackoffMin and BackoffMax bound the delay before reopening a plugin that went down;
	// DrainFor is how long a stopped plugin's provider stays open for the calls on it.
	BackoffMin, BackoffMax, DrainFor time.Duration
	// Supplied are the plugin kinds the program supplies (Registry.PluginKinds), read when
	// a plugin opens.
	Supplied func() Kinds
	// Quiet is the registry's dialer's busy-poll quiet (Env.Quiet).
	Quiet func() bool
	// Changed tells the registry that the plugin name's catalogue or state changed.
	Changed func(name string)
	// OnState (if not nil) observes each state a plugin reaches.
	OnState func(p *Plugin, state string)
	// Observe shows the tools of p's catalogue to integrity before they are used, and
	// gives their fingerprints by full name (nil catalogue: nil).
	Observe func(p *Plugin, cat *plugin.Catalog) map[string]string
	// Restart replaces p, in the registry, by a new plugin of its definition
	// (Plugin.Restart).
	Restart func(p *Plugin) error
}

// Runner makes the registry's plugins and opens their providers: the in-process ones
// given in code (Provide, ProvideSelf) and those of the supplied kinds.
type Runner struct {
	host Host
	// runs numbers the plugins made (Plugin.Run).
	runs atomic.Uint64
	// providers are the in-process providers of go plugins, by plugin name (Provide);
	// self is the mcpgw plugin's provider (ProvideSelf). Both guarded by provMu.
	provMu    sync.Mutex
	providers map[string]plugin.Plugin
	self      plugin.Plugin
	// kinds are the supplied kinds as this runner runs them (plugins_kinds.go).
	kinds boundKinds
}

// NewRunner is a runner of plugins for the registry h describes.
func NewRunner(h Host) *Runner { return &Runner{host: h} }

// Replace is a new plugin of p's name and definition that counts one restart more than
// p; p is left as it is (the registry stops it).
func (ru *Runner) Replace(p *Plugin) *Plugin {
	np := ru.New(p.Name, p.Def)
	np.restarts = p.restartCount() + 1 // np is not running yet: no one else has it
	return np
}

// Restart replaces the plugin, in its registry, by a new one of the same definition, as
// a change of its definition does: the old one stops at once (its calls in flight end
// with ErrStopped, its provider closes once they did, or after Host.DrainFor), and the
// new one opens its provider and reads its catalogue again, so a database that came back
// or a plugin executable that was replaced is picked up without a config reload. Its
// tools leave the sessions' views until it is up again (they are told: list_changed). A
// plugin already replaced or removed is an error naming it.
func (p *Plugin) Restart() error { return p.ru.host.Restart(p) }
