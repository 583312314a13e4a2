package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// fixtureKind is a plugin kind for these tests: the plugintest fixture, or an error while
// failing is set.
type fixtureKind struct{ failing *atomic.Bool }

func (k fixtureKind) Open(context.Context, string, *config.PluginDef, PluginEnv) (plugin.Plugin, error) {
	if k.failing.Load() {
		return nil, errors.New("the fixture is told to fail")
	}
	return plugintest.New(), nil
}

func (fixtureKind) Check(context.Context, string, *config.PluginDef) config.Problems { return nil }

// pluginRegistry is a registry of fixture plugins (the kind given: failing while failing
// is set), paced by timing.
func pluginRegistry(t *testing.T, failing *atomic.Bool, timing Timing, plugins ...string) *Registry {
	t.Helper()
	cfg := &config.Config{Naming: testNaming, Upstream: config.UpstreamDefaults{ConnectTimeout: 5 * time.Second}, Plugins: map[string]*config.PluginDef{}}
	for _, p := range plugins {
		cfg.Plugins[p] = &config.PluginDef{Type: "fixture", Refresh: -1}
	}
	r := NewWithOptions(cfg, Options{Log: slog.New(slog.DiscardHandler), Timing: timing})
	r.PluginKinds = PluginKinds{"fixture": fixtureKind{failing}}
	t.Cleanup(r.Close)
	return r
}

// waitState waits (bounded) for a plugin to reach a state.
func waitState(t *testing.T, p *Plugin, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, why := p.State()
		if st == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin %s: state %s (%s), want %s", p.Name, st, why, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func toolNames(v *View) []string {
	var out []string
	for _, t := range v.Tools {
		out = append(out, t.Exposed)
	}
	return out
}

type scopeFilter struct{ sc PluginScope }

func (f scopeFilter) Key() string                { return fmt.Sprintf("%q %v", f.sc.Connections, f.sc.ReadOnly) }
func (scopeFilter) Server(string) (bool, string) { return true, "" }
func (scopeFilter) Tool(*Tool) (bool, string)    { return true, "" }
func (scopeFilter) Prompt(*Prompt) bool          { return true }
func (f scopeFilter) PluginScope() PluginScope   { return f.sc }

var _ PluginScoper = scopeFilter{}

func TestPluginViews(t *testing.T) {
	var failing atomic.Bool
	r := pluginRegistry(t, &failing, Timing{}, "kubernetes")
	r.Start(5 * time.Second)
	p := r.Plugin("kubernetes")
	waitState(t, p, StateUp)

	all := r.ViewWith([]string{"kubernetes"}, nil, nil, nil, false)
	names := toolNames(all)
	for _, want := range []string{"kubernetes_core_v1_Pod_get", "kubernetes_core_v1_Pod_delete", "kubernetes_list_connections"} {
		if !slices.Contains(names, want) {
			t.Errorf("view lacks %s: %v", want, names)
		}
	}
	tool := all.Tool("kubernetes_core_v1_Pod_delete")
	if tool == nil || tool.PluginTool == nil || r.PluginFor(tool) != p || tool.Server != "kubernetes" || !tool.Destructive || tool.ReadOnly {
		t.Fatalf("delete tool: %+v", tool)
	}
	if !strings.Contains(string(tool.Def), `"confirm"`) {
		t.Errorf("delete without elicitation must take confirm: %s", tool.Def)
	}
	if el := r.ViewWith([]string{"kubernetes"}, nil, nil, nil, true); strings.Contains(string(el.Tool("kubernetes_core_v1_Pod_delete").Def), `"confirm"`) {
		t.Errorf("delete with elicitation takes confirm")
	}
	if again := r.ViewWith([]string{"kubernetes"}, nil, nil, nil, false); again != all {
		t.Errorf("the same inputs built a second view")
	}

	ro := r.ViewWith([]string{"kubernetes"}, nil, scopeFilter{PluginScope{ReadOnly: true, Connections: []string{"staging"}}}, nil, false)
	for _, n := range toolNames(ro) {
		if strings.HasSuffix(n, "_delete") || strings.HasSuffix(n, "_create") {
			t.Errorf("read-only view has %s", n)
		}
	}
	if get := ro.Tool("kubernetes_core_v1_Pod_get"); get == nil || strings.Contains(string(get.Def), `"prod"`) {
		t.Errorf("a view scoped to staging: get %v", get)
	}

	// Removed from the config: the plugin stops and its tools leave new views.
	gen := r.Gen()
	cfg := *r.Config()
	cfg.Plugins = nil
	if ch := r.Apply(&cfg); len(ch) != 1 || ch[0].Kind != "removed" {
		t.Errorf("Apply without the plugin: %v", ch)
	}
	if r.Gen() == gen {
		t.Errorf("removing a plugin did not change the registry's generation")
	}
	if v := r.ViewWith([]string{"kubernetes"}, nil, nil, nil, false); len(v.Tools) != 0 {
		t.Errorf("a removed plugin's tools: %v", toolNames(v))
	}
	waitState(t, p, StateStopped)
}

func TestPluginThatFailsIsDown(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	r := pluginRegistry(t, &failing, Timing{BackoffMin: 20 * time.Millisecond}, "broken")
	r.Start(5 * time.Second) // returns although the plugin does not load
	p := r.Plugin("broken")
	waitState(t, p, StateDown)
	if st := p.Status(); !strings.Contains(st.Error, "told to fail") {
		t.Errorf("status: %+v", st)
	}
	if v := r.ViewWith([]string{"broken"}, nil, nil, nil, false); len(v.Tools) != 0 {
		t.Errorf("a down plugin has tools: %v", toolNames(v))
	}
	failing.Store(false) // retried with backoff: it comes up
	waitState(t, p, StateUp)
	if v := r.ViewWith([]string{"broken"}, nil, nil, nil, false); len(v.Tools) == 0 {
		t.Errorf("the plugin came up but has no tools")
	}
}

// closeCounter is the fixture, counting the Close calls it gets.
type closeCounter struct {
	*plugintest.Fixture
	closes atomic.Int32
}

func (c *closeCounter) Close() error { c.closes.Add(1); return nil }

// TestGoPluginProvided: a plugin of type go runs the provider given to Provide, its tools
// join views as any plugin's, and the registry never closes it (the host owns it); one
// without a provider is down and says why.
func TestGoPluginProvided(t *testing.T) {
	cfg := &config.Config{Naming: testNaming, Upstream: config.UpstreamDefaults{ConnectTimeout: 5 * time.Second},
		Plugins: map[string]*config.PluginDef{
			"kube":    {Type: config.PluginTypeGo, Refresh: -1},
			"missing": {Type: config.PluginTypeGo, Refresh: -1},
		}}
	r := New(cfg, slog.New(slog.DiscardHandler))
	prov := &closeCounter{Fixture: plugintest.New()}
	r.Provide("kube", prov)
	r.Start(10 * time.Second)
	waitState(t, r.Plugin("kube"), StateUp)
	waitState(t, r.Plugin("missing"), StateDown)
	if _, why := r.Plugin("missing").State(); !strings.Contains(why, "no provider was given in code") {
		t.Errorf("missing provider: %q", why)
	}
	names := toolNames(r.ViewWith([]string{"kube"}, nil, nil, nil, false))
	if !slices.Contains(names, "kube_core_v1_Pod_get") {
		t.Errorf("view lacks the provided plugin's tools: %v", names)
	}
	r.Close()
	if n := prov.closes.Load(); n != 0 {
		t.Errorf("the registry closed the host's provider %d times", n)
	}
}
