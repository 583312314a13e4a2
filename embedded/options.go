package embedded

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// Options are the host's choices beyond the config. The zero value is usable: no logs, the
// store the config names, the in-process plugin types only, stdio upstreams spawned
// directly, version "dev".
type Options struct {
	// Logger receives the gateway's logs (nil: they are discarded).
	Logger *slog.Logger
	// LogLevel, when set, is the level of Logger: the config's log.level (and a later
	// reload or admin API setting) is applied to it.
	LogLevel *slog.LevelVar
	// Store holds the sessions, tasks, admin API entries, pins and credentials (nil: the
	// config's store, opened in its state_dir by Start and closed by Close). A store given
	// here comes from OpenStore or MemoryStore; it is the host's to close, after Close.
	// Gateways given one store share what it holds, as replicas sharing a Redis do.
	Store *Store
	// ConnectWait bounds how long Start waits for upstreams and plugins to come up the
	// first time (0: the config's upstream.start_wait, whose default 0 waits for none:
	// the gateway serves at once and sends list_changed as they come up). One that is not
	// up by then keeps starting in the background.
	ConnectWait time.Duration
	// OnPeerReload, when set, is called when another replica sharing the store announces
	// a config reload (the daemon reads its file again). Unset, the gateway re-applies
	// the admin API's stored entries itself.
	OnPeerReload func()
	// PluginKinds are the plugin kinds the gateway runs besides the in-process go and
	// mcpgw types: pluginkinds.All() (package embedded/pluginkinds) for the sql plugin and
	// out-of-process plugins, as `mcpgw serve` has, or only the ones the host wants
	// (pluginkinds.SQL(), pluginkinds.Command()). A host that supplies none does not import
	// that package and links no database driver, go-plugin or gRPC. Start fails when the
	// config has a plugin of a kind not given here.
	PluginKinds []PluginKind
	// GuardianPath is a binary whose main calls RunGuardian(os.Args) first (os.Executable()
	// for a host whose own main does); stdio upstreams then run under it, which keeps their
	// process groups from outliving the gateway even when it is killed ("": they are
	// spawned directly). The mcpgw daemon gives its own executable.
	GuardianPath string
	// Version is the gateway's version: its serverInfo, the clientInfo and User-Agent it
	// sends upstreams, the web UI and the admin API's OpenAPI document ("": "dev").
	Version string
}

// Store is a session store a host opens itself, to give several gateways one store or to
// keep it past a gateway's Close (Options.Store). Its methods are safe for concurrent use.
type Store struct {
	s store.Store
}

// OpenStore opens the store spec names, as the config's store does: "bolt" is the file
// mcpgw.db in stateDir, "memory" is process memory, and a redis://, rediss:// or unix://
// URL is a Redis server (pinged once: an unreachable server is an error). Like the store
// a gateway opens itself, it keeps recent session records in memory for a moment (2 s),
// so replicas sharing a Redis see each other's changes that late at most.
func OpenStore(spec, stateDir string) (*Store, error) {
	st, err := store.Open(spec, stateDir)
	if err != nil {
		return nil, err
	}
	return &Store{s: store.NewCached(st, storeCacheSize)}, nil
}

// MemoryStore is an empty store in process memory: what it holds goes with the process.
func MemoryStore() *Store { return &Store{s: store.NewMemory()} }

// Close closes the store (a bbolt file, a Redis connection). Close the gateways that use
// it first. Closing a nil or empty Store does nothing.
func (s *Store) Close() error {
	if s == nil || s.s == nil {
		return nil
	}
	return s.s.Close()
}

// storeCacheSize is how many session records a store keeps in memory.
const storeCacheSize = 10000

// PluginKind is a plugin type the host supplies (Options.PluginKinds): the sql plugin
// (type: sql) needs database drivers and out-of-process plugins (plugins.<name>.command)
// need go-plugin and gRPC, so the gateway runs them only when given their kind, as
// database/sql runs only the drivers a program imports. Package embedded/pluginkinds has
// them; values of other types are refused by Start.
type PluginKind interface {
	// PluginKind is the kind's name: the plugin type it runs ("sql"), or "command" for
	// out-of-process plugins.
	PluginKind() string
}

// registryKind is what package embedded/pluginkinds' kinds implement besides PluginKind:
// the registry's kind they wrap. Its type is internal, so only this module's packages can
// implement it.
type registryKind interface {
	PluginKind
	RegistryKind() registry.PluginKind
}

// registryKinds is kinds as the registry takes them.
func registryKinds(kinds []PluginKind) (registry.PluginKinds, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	out := make(registry.PluginKinds, len(kinds))
	for _, k := range kinds {
		rk, ok := k.(registryKind)
		if !ok || rk.RegistryKind() == nil {
			return nil, fmt.Errorf("mcpgw: plugin kind %T is not one of package embedded/pluginkinds", k)
		}
		out[k.PluginKind()] = rk.RegistryKind()
	}
	return out, nil
}

// IsGuardian reports whether args (a program's os.Args) are the ones a gateway starts its
// guardian with: a stdio upstream to run under the process that GuardianPath names.
func IsGuardian(args []string) bool { return len(args) > 1 && args[1] == upstream.ChildArg }

// RunGuardian is the guardian's entry point, for a program named by Options.GuardianPath:
// its main calls RunGuardian(os.Args) before anything else. When IsGuardian(args), it runs
// the upstream command args carry, passing stdio straight through, kills what the
// upstream leaves behind when it or the gateway goes (docs/platforms.md), and exits the
// process with the upstream's status: it never returns. Otherwise it returns at once.
func RunGuardian(args []string) {
	if IsGuardian(args) {
		upstream.RunChild(args[2:])
	}
}

// openStore sets g.store: the host's (Options.Store), or the config's, which g owns.
func (g *Gateway) openStore(cfg *config.Config) error {
	if s := g.opts.Store; s != nil {
		if s.s == nil {
			return errors.New("mcpgw: Options.Store is an empty Store (use OpenStore or MemoryStore)")
		}
		g.store, g.ownStore = s.s, false
		return nil
	}
	st, err := store.Open(cfg.Store, cfg.StateDir)
	if err != nil {
		return err
	}
	g.store, g.ownStore = store.NewCached(st, storeCacheSize), true
	return nil
}
