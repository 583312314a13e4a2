package registry

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// sqlStandIn is a kind named sql for these tests: it serves the fixture, reports one
// problem from Check, and records the configs it is handed.
type sqlStandIn struct {
	mu         sync.Mutex
	configured []time.Duration // upstream.busy_poll of each Configure
	opened     []string
}

func (k *sqlStandIn) Open(_ context.Context, name string, _ *config.PluginDef, env PluginEnv) (plugin.Plugin, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.opened = append(k.opened, name)
	if env.Log == nil || env.Quiet == nil {
		panic("a kind was opened without the registry's logger and quiet test")
	}
	return plugintest.New(), nil
}

func (k *sqlStandIn) Check(_ context.Context, where string, _ *config.PluginDef) config.Problems {
	return config.Problems{{Warning: true, Where: where, Text: "checked by the sql kind"}}
}

func (k *sqlStandIn) Configure(cfg *config.Config, _ PluginEnv) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.configured = append(k.configured, cfg.Upstream.BusyPoll)
}

func kindsConfig() *config.Config {
	return &config.Config{Naming: testNaming, Upstream: config.UpstreamDefaults{ConnectTimeout: 5 * time.Second, BusyPoll: time.Millisecond},
		Plugins: map[string]*config.PluginDef{
			"shop":   {Type: "sql", Refresh: -1},
			"remote": {Command: "/nonexistent/mcpgw-plugin", Refresh: -1},
			"kube":   {Type: config.PluginTypeGo, Refresh: -1},
		}}
}

// TestPluginKindsNotBuiltIn: a registry given no kinds runs no sql and no command plugin;
// each is down saying it is not built in, validation says so before starting, and the
// in-process go type needs no kind.
func TestPluginKindsNotBuiltIn(t *testing.T) {
	cfg := kindsConfig()
	r := New(cfg, slog.New(slog.DiscardHandler))
	t.Cleanup(r.Close)
	r.Provide("kube", plugintest.New())
	r.Start(5 * time.Second)
	for name, want := range map[string]string{"shop": "type sql is not built into this program", "remote": "an out-of-process plugin (command) is not built into this program"} {
		p := r.Plugin(name)
		waitState(t, p, StateDown)
		if _, why := p.State(); !strings.Contains(why, want) || !strings.Contains(why, "it runs plugins of kind go, mcpgw") {
			t.Errorf("%s: down because %q, want it to say %q and which kinds it has", name, why, want)
		}
	}
	waitState(t, r.Plugin("kube"), StateUp)

	ps := CheckPlugins(context.Background(), cfg, nil)
	var errs []string
	for _, p := range ps {
		if !p.Warning {
			errs = append(errs, p.Where)
		}
	}
	if !slices.Equal(errs, []string{"plugins.remote", "plugins.shop"}) || !ps.HasErrors() {
		t.Errorf("validation without kinds: %v", ps)
	}
	if m := PluginKinds(nil).Missing(cfg); len(m) != 2 || m[0].Where != "plugins.remote" || m[1].Where != "plugins.shop" {
		t.Errorf("Missing: %v", m)
	}
	if m := (PluginKinds{"sql": &sqlStandIn{}, KindCommand: &sqlStandIn{}}).Missing(cfg); len(m) != 0 {
		t.Errorf("Missing with every kind: %v", m)
	}
}

// TestPluginKindSupplied: a supplied kind opens its plugins, checks them for validation,
// and is configured when the registry starts and on every Apply.
func TestPluginKindSupplied(t *testing.T) {
	cfg := kindsConfig()
	delete(cfg.Plugins, "remote")
	k := &sqlStandIn{}
	r := New(cfg, slog.New(slog.DiscardHandler))
	r.PluginKinds = PluginKinds{"sql": k}
	t.Cleanup(r.Close)
	r.Provide("kube", plugintest.New())
	r.Start(5 * time.Second)
	waitState(t, r.Plugin("shop"), StateUp)
	if names := toolNames(r.ViewWith([]string{"shop"}, nil, nil, nil, false)); !slices.Contains(names, "shop_core_v1_Pod_get") {
		t.Errorf("the kind's plugin has no tools: %v", names)
	}
	if st := r.Plugin("shop").Status(); st.Type != "sql" {
		t.Errorf("status type %q", st.Type)
	}
	next := *cfg
	next.Upstream.BusyPoll = 0
	r.Apply(&next)
	k.mu.Lock()
	if !slices.Equal(k.configured, []time.Duration{time.Millisecond, 0}) || !slices.Equal(k.opened, []string{"shop"}) {
		t.Errorf("configured with busy_poll %v, opened %v", k.configured, k.opened)
	}
	k.mu.Unlock()
	ps := CheckPlugins(context.Background(), cfg, r.PluginKinds)
	if ps.HasErrors() || len(ps) != 2 || ps[0].Text != "type go: its provider is given in code by a program that embeds mcpgw; `mcpgw serve` shows it down" || ps[1].Text != "checked by the sql kind" {
		t.Errorf("validation with the kind: %v", ps)
	}
}

// binderKind is a kind that keeps state per registry: each Bind makes a boundStandIn.
type binderKind struct {
	mu    sync.Mutex
	bound []*boundStandIn
}

func (k *binderKind) Open(context.Context, string, *config.PluginDef, PluginEnv) (plugin.Plugin, error) {
	panic("a registry opened the unbound kind")
}

func (k *binderKind) Check(context.Context, string, *config.PluginDef) config.Problems { return nil }

func (k *binderKind) Bind(env PluginEnv) PluginKind {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := &boundStandIn{quiet: env.Quiet}
	k.bound = append(k.bound, b)
	return b
}

// boundStandIn is one registry's binderKind: it counts its opens as busy waits and keeps
// the busy_poll of each Configure.
type boundStandIn struct {
	quiet      func() bool
	mu         sync.Mutex
	opens      int64
	configured []time.Duration
}

func (b *boundStandIn) Open(context.Context, string, *config.PluginDef, PluginEnv) (plugin.Plugin, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opens++
	return plugintest.New(), nil
}

func (b *boundStandIn) Check(context.Context, string, *config.PluginDef) config.Problems { return nil }

func (b *boundStandIn) Configure(cfg *config.Config, _ PluginEnv) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.configured = append(b.configured, cfg.Upstream.BusyPoll)
}

func (b *boundStandIn) BusyStats() BusyStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BusyStats{Waits: b.opens, Caught: b.opens}
}

// TestPluginKindBoundPerRegistry: two registries given one PluginKinds value each bind a
// kind that keeps state of its own, once, with their own quiet test; each opens its
// plugins, is configured and reports busy waits through its own bound kind only.
func TestPluginKindBoundPerRegistry(t *testing.T) {
	k := &binderKind{}
	kinds := PluginKinds{"sql": k}
	var regs []*Registry
	for i, plugins := range [][]string{{"a"}, {"b", "c"}} {
		cfg := &config.Config{Naming: testNaming, Upstream: config.UpstreamDefaults{ConnectTimeout: 5 * time.Second, BusyPoll: time.Duration(i+1) * time.Millisecond},
			Plugins: map[string]*config.PluginDef{}}
		for _, p := range plugins {
			cfg.Plugins[p] = &config.PluginDef{Type: "sql", Refresh: -1}
		}
		r := New(cfg, slog.New(slog.DiscardHandler))
		r.PluginKinds = kinds
		t.Cleanup(r.Close)
		if st := r.PluginBusyStats(); st != (BusyStats{}) {
			t.Fatalf("busy stats before Start: %+v", st)
		}
		r.Start(5 * time.Second)
		for _, p := range plugins {
			waitState(t, r.Plugin(p), StateUp)
		}
		regs = append(regs, r)
	}
	next := *regs[1].Config()
	next.Upstream.BusyPoll = 0
	regs[1].Apply(&next)

	k.mu.Lock()
	bound := slices.Clone(k.bound)
	k.mu.Unlock()
	if len(bound) != 2 || bound[0] == bound[1] {
		t.Fatalf("bound %d times, want once per registry", len(bound))
	}
	for i, want := range []struct {
		opens      int64
		configured []time.Duration
	}{{1, []time.Duration{time.Millisecond}}, {2, []time.Duration{2 * time.Millisecond, 0}}} {
		b := bound[i]
		b.mu.Lock()
		if b.opens != want.opens || !slices.Equal(b.configured, want.configured) {
			t.Errorf("registry %d's kind: %d opens, configured %v; want %d, %v", i, b.opens, b.configured, want.opens, want.configured)
		}
		b.mu.Unlock()
		if st := regs[i].PluginBusyStats(); st.Waits != want.opens || st.Caught != want.opens || st.GaveWay != 0 {
			t.Errorf("registry %d's busy stats: %+v, want %d waits of its own", i, st, want.opens)
		}
	}
	// Each bound kind gives way to its own registry's requests.
	regs[0].Dialer().Busy.RequestStarted()
	regs[0].Dialer().Busy.RequestStarted()
	if bound[0].quiet() || !bound[1].quiet() {
		t.Errorf("quiet: registry 0 with two requests %v, registry 1 with none %v", bound[0].quiet(), bound[1].quiet())
	}
	regs[0].Dialer().Busy.RequestEnded()
	regs[0].Dialer().Busy.RequestEnded()
}
