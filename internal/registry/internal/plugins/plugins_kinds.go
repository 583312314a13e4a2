package plugins

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/plugin"
)

// Kind is a plugin type the program that builds the registry supplies: the sql
// plugin (type: sql) and out-of-process plugins (plugins.<name>.command) need a database
// driver or go-plugin and gRPC, so the registry links neither and runs them only when
// given their kind (Registry.PluginKinds), as database/sql runs only the drivers a program
// imports. Package internal/registry/pluginkind has mcpgw's; `mcpgw serve` supplies all of them.
// The in-process types (go, mcpgw) need nothing and are always there.
type Kind interface {
	// Open starts the provider of plugin name from its definition. The registry closes
	// it (if it is an io.Closer) when the plugin stops; a provider that reports its
	// process going (Exited() <-chan struct{} and Err() error) is down when it goes.
	Open(ctx context.Context, name string, def *config.PluginDef, env Env) (plugin.Plugin, error)
	// Check looks at a definition for what starting it would run into, without starting
	// it (`mcpgw validate`: no database created, no connection, no program run). where
	// is "plugins.<name>". config.Validate has checked the definition's shape already.
	Check(ctx context.Context, where string, def *config.PluginDef) config.Problems
}

// KindConfigurer is implemented by kinds that follow settings of the running config
// (the command kind: upstream.busy_poll). The registry calls Configure when it starts and
// on every Apply.
type KindConfigurer interface {
	Configure(cfg *config.Config, env Env)
}

// KindBinder is implemented by kinds that keep state for each registry that runs
// them (the command kind: the busy waiting of its plugin calls, which counts the calls in
// flight of one gateway and how its waits ended). A registry binds such a kind once,
// before it first opens or configures a plugin, and runs its plugins with the kind Bind
// returns; so one Kinds value may be given to several registries.
type KindBinder interface {
	Bind(env Env) Kind
}

// BusyReporter is implemented by bound kinds that busy-wait for their plugins'
// answers (upstream.busy_poll): how their waits ended, for the gateway's metrics.
type BusyReporter interface {
	BusyStats() BusyStats
}

// BusyStats counts a registry's busy waits for plugin calls and how they ended.
type BusyStats struct {
	Waits    int64 // busy waits started
	Caught   int64 // ended by the call's answer
	GaveWay  int64 // ended by a second call in flight or another request of the gateway
	TimedOut int64 // ended by the time limit
}

// Env is what the registry gives a kind besides a plugin's definition.
type Env struct {
	Log *slog.Logger
	// MaxMessageBytes is the running config's upstream.max_message_bytes.
	MaxMessageBytes int
	// Quiet reports whether the gateway has no other request in progress (busy waits
	// need an otherwise idle CPU).
	Quiet func() bool
}

// Kinds are plugin kinds by name: a config type ("sql"), or KindCommand.
type Kinds map[string]Kind

// KindCommand is the kind of the plugins that run a command (out of process).
const KindCommand = "command"

// kindOf is the kind a plugin definition needs: KindCommand for one that runs a command,
// else its type.
func kindOf(d *config.PluginDef) string {
	if d.OutOfProcess() {
		return KindCommand
	}
	return d.Type
}

// lacks reports whether d needs a kind that is not in k (an unknown type is
// config.Validate's to report, not this).
func (k Kinds) lacks(d *config.PluginDef) bool {
	kind := kindOf(d)
	return !builtIn(kind) && k[kind] == nil && (kind == KindCommand || slices.Contains(config.PluginTypes(), kind))
}

// Missing lists the plugins of cfg whose kind is not in k, as errors that say so: a
// program checks its config with it before it starts (embedded.Gateway.Start does).
func (k Kinds) Missing(cfg *config.Config) config.Problems {
	var ps config.Problems
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		if d := cfg.Plugins[name]; d != nil && k.lacks(d) {
			ps = append(ps, config.Problem{Where: "plugins." + name, Text: notBuiltIn(kindOf(d), k).Error()})
		}
	}
	return ps
}

// builtIn reports whether a plugin type runs without a supplied kind.
func builtIn(typ string) bool { return typ == config.PluginTypeGo || typ == config.PluginTypeSelf }

// notBuiltIn is the error of a plugin whose kind the program did not supply.
func notBuiltIn(kind string, kinds Kinds) error {
	have := []string{config.PluginTypeGo, config.PluginTypeSelf}
	for k := range kinds {
		have = append(have, k)
	}
	slices.Sort(have)
	what := "type " + kind
	if kind == KindCommand {
		what = "an out-of-process plugin (command)"
	}
	return fmt.Errorf("%s is not built into this program (it runs plugins of kind %s); `mcpgw serve` has every kind, a program embedding mcpgw supplies the kinds it wants (docs/embedding.md)",
		what, strings.Join(have, ", "))
}

// env is the environment kinds are given under cfg. Quiet is the registry's own
// dialer's: a busy wait gives way to the requests of this gateway, not another's.
func (ru *Runner) env(cfg *config.Config) Env {
	return Env{Log: ru.host.Log, MaxMessageBytes: cfg.Upstream.MaxMessageBytes, Quiet: ru.host.Quiet}
}

// boundKinds is Kinds as one registry runs them, each KindBinder bound to
// that registry. Kinds is set before Start: the first get binds them, later ones
// return the same.
type boundKinds struct {
	once sync.Once
	p    atomic.Pointer[Kinds]
}

// get binds supplied under env on its first call and returns the bound kinds.
func (b *boundKinds) get(supplied Kinds, env Env) Kinds {
	b.once.Do(func() {
		bound := make(Kinds, len(supplied))
		for name, k := range supplied {
			if kb, ok := k.(KindBinder); ok {
				k = kb.Bind(env)
			}
			bound[name] = k
		}
		b.p.Store(&bound)
	})
	return *b.p.Load()
}

// busyStats sums how the busy waits of the bound kinds ended (zero before they are bound).
func (b *boundKinds) busyStats() BusyStats {
	var sum BusyStats
	kinds := b.p.Load()
	if kinds == nil {
		return sum
	}
	for _, k := range *kinds {
		if r, ok := k.(BusyReporter); ok {
			s := r.BusyStats()
			sum.Waits, sum.Caught, sum.GaveWay, sum.TimedOut = sum.Waits+s.Waits, sum.Caught+s.Caught, sum.GaveWay+s.GaveWay, sum.TimedOut+s.TimedOut
		}
	}
	return sum
}

// Configure hands cfg's settings to the kinds that follow them.
func (ru *Runner) Configure(cfg *config.Config) {
	kinds := ru.kinds.get(ru.host.Supplied(), ru.env(cfg))
	for _, name := range slices.Sorted(maps.Keys(kinds)) {
		if c, ok := kinds[name].(KindConfigurer); ok {
			c.Configure(cfg, ru.env(cfg))
		}
	}
}

// BusyStats is how the busy waits of the plugin calls ended (summed over the kinds that
// busy-wait: out-of-process plugins). Zero before the first plugin opened.
func (ru *Runner) BusyStats() BusyStats { return ru.kinds.busyStats() }

// opener is how a plugin's provider is opened: a built-in type's opener, or its kind's.
func (ru *Runner) opener(d *config.PluginDef) openFunc {
	kind, kinds := kindOf(d), ru.kinds.get(ru.host.Supplied(), ru.env(ru.host.Config()))
	switch {
	case d.Type == config.PluginTypeGo && !d.OutOfProcess():
		return ru.provided
	case d.Type == config.PluginTypeSelf && !d.OutOfProcess():
		return ru.providedSelf
	case kinds[kind] != nil:
		k := kinds[kind]
		return func(ctx context.Context, name string, d *config.PluginDef) (plugin.Plugin, error) {
			return k.Open(ctx, name, d, ru.env(ru.host.Config()))
		}
	case kind != KindCommand && !slices.Contains(config.PluginTypes(), kind):
		err := fmt.Errorf("unknown plugin type %q", d.Type) // config.Validate refuses it
		return func(context.Context, string, *config.PluginDef) (plugin.Plugin, error) { return nil, err }
	default:
		err := notBuiltIn(kind, ru.host.Supplied())
		return func(context.Context, string, *config.PluginDef) (plugin.Plugin, error) { return nil, err }
	}
}

// exited is the channel closed when an out-of-process provider's process went, and why
// (nil channel for providers in the gateway's process).
func exited(prov plugin.Plugin) (<-chan struct{}, func() error) {
	if x, ok := prov.(interface {
		Exited() <-chan struct{}
		Err() error
	}); ok {
		return x.Exited(), x.Err
	}
	return nil, nil
}
