package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
	"github.com/mcpgw/mcpgw/internal/registry/internal/integrity"
	"github.com/mcpgw/mcpgw/plugin"
)

// Plugin is one configured plugin (plugins.<name>): a resource provider running inside
// the gateway, whose resource types become tools. Sessions enable it by name as they
// enable a server, and its tools join their views through the same filter. Unlike a
// server's catalogue, a plugin's tools depend on the session (its connections, read-only,
// whether its client can be asked to confirm), so the plugin keeps one generated
// catalogue per set of generation inputs in use.
type Plugin struct {
	Name string
	Def  *config.PluginDef

	// run tells this plugin from one that replaced it under the same name (Tool.PluginRun).
	run    uint64
	ru     *Runner
	ctx    context.Context // ends with the plugin: cancels its calls in flight
	cancel context.CancelFunc
	calls  sync.WaitGroup
	done   chan struct{} // closed when supervision ended and the provider is closed

	mu       sync.Mutex
	state    string
	lastErr  string
	since    time.Time
	restarts int
	prov     plugin.Plugin
	cat      *plugin.Catalog
	print    string                      // what cat offers, to tell a real change from a re-read
	gens     map[string]*catalog.Catalog // generated catalogues by generation inputs
	hashes   map[string]string           // each tool's fingerprint, by full name (Host.Observe)
	// act names the admin act that added or changed the plugin while the gateway ran; its
	// first catalogue after that is approved by it (the registry's integrity), then it is nil.
	act atomic.Pointer[integrity.PendingAct]
}

// Act is the admin act pending on the plugin (integrity.PendingAct): set when an act added
// or changed it, taken by the first catalogue that changes something.
func (p *Plugin) Act() *atomic.Pointer[integrity.PendingAct] { return &p.act }

// Run is the plugin's run (Tool.PluginRun of the tools it generates).
func (p *Plugin) Run() uint64 { return p.run }

// openFunc starts a plugin's provider from its definition: a built-in type's opener, or
// a supplied kind's Open (plugins_kinds.go). The registry closes the provider (if it is an
// io.Closer) when the plugin stops, and calls its Refresh(ctx) method (if it has one)
// before each periodic re-read of its catalogue.
type openFunc func(ctx context.Context, name string, def *config.PluginDef) (plugin.Plugin, error)

// Status is a plugin's health for the admin API and /readyz.
type Status struct {
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	State       string    `json:"state"`
	Since       time.Time `json:"since"`
	Error       string    `json:"error,omitempty"`
	Restarts    int       `json:"restarts"`
	Connections int       `json:"connections"`
	Types       int       `json:"resource_types"`
	Problems    []string  `json:"problems,omitempty"`
}

// Scope is what a session's filter decides about its plugin tools: the connections
// it may use (nil: every one) and read-only.
type Scope struct {
	Connections []string
	ReadOnly    bool
}

// Scoper is implemented by view filters that scope plugin tools (auth.Filter).
type Scoper interface{ PluginScope() Scope }

// New makes the plugin name of definition d; Supervise runs it.
func (ru *Runner) New(name string, d *config.PluginDef) *Plugin {
	ctx, cancel := context.WithCancel(ru.host.Ctx)
	return &Plugin{Name: name, Def: d, ru: ru, ctx: ctx, cancel: cancel, run: ru.runs.Add(1),
		done: make(chan struct{}), state: StateStarting, since: time.Now()}
}

// Provide gives the registry an in-process provider: the plugin of that name, configured
// with type go, runs it. The host that embeds the gateway owns the provider: the registry
// never closes it (it may open it again after a failed catalogue read). Call it before
// Start; a go plugin without a provider is down, saying so.
func (ru *Runner) Provide(name string, p plugin.Plugin) {
	ru.provMu.Lock()
	defer ru.provMu.Unlock()
	if ru.providers == nil {
		ru.providers = map[string]plugin.Plugin{}
	}
	ru.providers[name] = p
}

// provided is the opener of go plugins: the provider given to Provide under the name.
func (ru *Runner) provided(_ context.Context, name string, _ *config.PluginDef) (plugin.Plugin, error) {
	ru.provMu.Lock()
	defer ru.provMu.Unlock()
	if p := ru.providers[name]; p != nil {
		return p, nil
	}
	return nil, fmt.Errorf("plugin %q is type go, but no provider was given in code under that name (only a host embedding mcpgw can give one)", name)
}

// Status reports the plugin's health.
func (p *Plugin) Status() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{Name: p.Name, Type: kindOf(p.Def), State: p.state, Since: p.since, Error: p.lastErr, Restarts: p.restarts}
	if p.cat != nil {
		st.Connections, st.Types = len(p.cat.Connections), len(p.cat.Types)
		st.Problems = p.cat.Problems
	}
	return st
}

// State returns the plugin's state and last error.
func (p *Plugin) State() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state, p.lastErr
}

// restartCount is how often the plugin was restarted.
func (p *Plugin) restartCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// supervise opens the provider, reads its catalogue, and reads it again every
// Def.Refresh; a provider that fails to open or load is down and retried with backoff.
func (p *Plugin) Supervise(ready func()) {
	defer close(p.done)
	var once sync.Once
	markReady := func() { once.Do(ready) }
	defer markReady()
	backoff := p.ru.host.BackoffMin
	for attempt := 0; p.ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			p.mu.Lock()
			p.restarts++
			p.mu.Unlock()
		}
		err := p.runOnce(markReady)
		if p.ctx.Err() != nil {
			break
		}
		p.ru.host.Log.Warn("plugin down", "plugin", p.Name, "err", err, "retry_in", backoff)
		p.set(StateDown, err, nil, nil)
		markReady()
		sleep := backoff/2 + time.Duration(rand.Int64N(int64(backoff/2)+1))
		select {
		case <-time.After(sleep):
		case <-p.ctx.Done():
		}
		if backoff *= 2; backoff > p.ru.host.BackoffMax {
			backoff = p.ru.host.BackoffMax
		}
	}
	p.set(StateStopped, nil, nil, nil)
}

// runOnce opens the provider and keeps its catalogue current until the plugin stops or a
// re-read fails. The provider is closed when it returns, once the calls on it ended.
func (p *Plugin) runOnce(markReady func()) error {
	prov, err := p.callOpen()
	if err != nil {
		return err
	}
	defer p.closeProvider(prov)
	if err := p.load(prov); err != nil {
		return err
	}
	p.ru.host.Log.Info("plugin up", "plugin", p.Name, "type", p.Def.Type, "resource_types", len(p.Catalog().Types))
	markReady()
	gone, why := exited(prov) // an out-of-process plugin's process went
	var tick <-chan time.Time
	if p.Def.Refresh >= 0 {
		t := time.NewTicker(p.Def.Refresh)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-p.ctx.Done():
			return p.ctx.Err()
		case <-gone:
			return why()
		case <-tick:
		}
		if rf, ok := prov.(interface{ Refresh(context.Context) }); ok {
			rf.Refresh(p.ctx)
		}
		if err := p.load(prov); err != nil {
			return err
		}
	}
}

// callOpen runs the opener, turning a panic into an error (a plugin's bug costs the
// plugin, not the gateway).
func (p *Plugin) callOpen() (prov plugin.Plugin, err error) {
	defer func() {
		if r := recover(); r != nil {
			prov, err = nil, fmt.Errorf("opening plugin %q failed: internal error: %v", p.Name, r)
		}
	}()
	ctx, cancel := context.WithTimeout(p.ctx, p.ru.host.Config().Upstream.ConnectTimeout)
	defer cancel()
	return p.ru.opener(p.Def)(ctx, p.Name, p.Def)
}

// load reads the provider's catalogue and makes it current; the sessions whose view
// changes are told when it differs from the last one.
func (p *Plugin) load(prov plugin.Plugin) error {
	ctx, cancel := context.WithTimeout(p.ctx, p.ru.host.Config().Upstream.ConnectTimeout)
	cat, err := plugin.Load(ctx, p.Name, prov)
	cancel()
	if err != nil {
		return err
	}
	for _, pr := range cat.Problems {
		p.ru.host.Log.Warn("plugin catalogue problem", "plugin", p.Name, "problem", pr)
	}
	p.set(StateUp, nil, prov, cat)
	return nil
}

// closeProvider closes a provider once the calls on it ended (or after Timing.DrainFor).
func (p *Plugin) closeProvider(prov plugin.Plugin) {
	c, ok := prov.(io.Closer)
	if !ok || p.Def.Type == config.PluginTypeGo || p.Def.Type == config.PluginTypeSelf { // the host owns an in-process provider
		return
	}
	done := make(chan struct{})
	go func() { p.calls.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(p.ru.host.DrainFor):
	}
	if err := c.Close(); err != nil {
		p.ru.host.Log.Warn("closing plugin", "plugin", p.Name, "err", err)
	}
}

// set records the plugin's state and catalogue (nil cat: none, while not up).
func (p *Plugin) set(state string, err error, prov plugin.Plugin, cat *plugin.Catalog) {
	print := fingerprint(cat)
	hashes := p.ru.host.Observe(p, cat) // before the catalogue is used: see Host.Observe
	p.mu.Lock()
	wasUp := p.state == StateUp
	changed := p.state != state || p.print != print
	p.state = state
	if err != nil {
		p.lastErr = err.Error()
	} else if state == StateUp {
		p.lastErr = ""
	}
	if changed || state != StateUp {
		p.since = time.Now()
	}
	if p.print != print || cat == nil {
		p.cat, p.prov, p.print, p.gens, p.hashes = cat, prov, print, nil, hashes
	}
	p.mu.Unlock()
	if changed {
		if state == StateUp && wasUp {
			p.ru.host.Log.Info("plugin catalogue changed", "plugin", p.Name, "resource_types", len(cat.Types))
		}
		p.ru.host.Changed(p.Name)
	}
	// A replaced plugin stopping must not mark its successor down.
	if f := p.ru.host.OnState; f != nil {
		f(p, state)
	}
}

// fingerprint is what a catalogue offers, as JSON: equal fingerprints generate equal tools.
func fingerprint(c *plugin.Catalog) string {
	if c == nil {
		return ""
	}
	b, err := json.Marshal(struct {
		C []plugin.Connection
		T []*plugin.TypeEntry
		P []string
	}{c.Connections, c.Types, c.Problems})
	if err != nil {
		return fmt.Sprintf("unprintable %p", c) // never equal to another: re-generated
	}
	return string(b)
}

// Catalog returns the plugin's loaded catalogue, or nil while it is not up.
func (p *Plugin) Catalog() *plugin.Catalog {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cat
}

// maxGenerated bounds the generated catalogues one plugin keeps (one per distinct
// connection scope, read-only and elicitation in use).
const maxGenerated = 64

// CatalogFor is the plugin's tools as one session may see them: generated for the
// session's connections, read-only and elicitation, and named by the gateway's naming
// rule. It is nil while the plugin is not up. Equal inputs share one catalogue.
func (p *Plugin) CatalogFor(sc Scope, elicitation bool) *catalog.Catalog {
	key := scopeKey(sc, elicitation)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cat == nil {
		return nil
	}
	if c := p.gens[key]; c != nil {
		return c
	}
	ts := p.cat.Tools(plugin.Options{Connections: sc.Connections, ReadOnly: sc.ReadOnly || p.Def.ReadOnly,
		Elicitation: elicitation, NameOp: p.ToolName})
	cat := &catalog.Catalog{Seq: catalog.NextSeq(), Problems: ts.Problems}
	for _, pt := range ts.Tools {
		def, err := json.Marshal(pt.Def)
		if err != nil {
			cat.Problems = append(cat.Problems, fmt.Sprintf("tool %q cannot be written as JSON: %v; it is left out", pt.Full, err))
			continue
		}
		t := &catalog.Tool{Server: p.Name, Name: pt.Full, Exposed: pt.Def.Name, Def: catalog.Rename(def, pt.Def.Name), PluginTool: pt, PluginRun: p.run,
			Hash: p.hashes[pt.Full]}
		t.ReadOnly, t.Destructive = pt.Def.Annotations.ReadOnly(), pt.Def.Annotations.Destructive()
		cat.Tools = append(cat.Tools, t)
	}
	if len(p.gens) >= maxGenerated {
		p.gens = nil
	}
	if p.gens == nil {
		p.gens = map[string]*catalog.Catalog{}
	}
	p.gens[key] = cat
	return cat
}

func scopeKey(sc Scope, elicitation bool) string {
	var b strings.Builder
	if sc.Connections == nil {
		b.WriteString("*")
	} else {
		b.WriteString(fmt.Sprintf("%q", sc.Connections))
	}
	if sc.ReadOnly {
		b.WriteString(" ro")
	}
	if elicitation {
		b.WriteString(" el")
	}
	return b.String()
}

// exposed is the gateway's naming rule for a plugin tool: its full name is already
// prefixed with the plugin's name, so only the character set and the length limit apply,
// and a name cut for length keeps its operation op.
func (p *Plugin) ToolName(full, op string) string {
	return catalog.PluginToolName(p.Name, full, op, p.ru.host.Config().Naming)
}

// Errors of a plugin call whose context ended before the provider answered.
var (
	ErrTimeout = errors.New("plugin call timed out")
	ErrStopped = errors.New("plugin stopped during the call")
)

// Call runs one of the plugin's tools. The call ends (its context is cancelled) when ctx
// ends, after the plugin's call_timeout, or when the plugin stops (unloaded, replaced,
// the gateway shutting down); the provider is not closed under it. err says why a call's
// context ended before it returned: ErrTimeout, ErrStopped, or ctx's error.
func (p *Plugin) Call(ctx context.Context, t *plugin.Tool, args json.RawMessage, o plugin.CallOptions) (*plugin.Result, error) {
	p.calls.Add(1)
	defer p.calls.Done()
	parent := ctx
	var cancel context.CancelFunc
	if p.Def.CallTimeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, p.Def.CallTimeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	stop := context.AfterFunc(p.ctx, cancel)
	defer stop()
	res := t.Call(ctx, args, o)
	switch {
	case ctx.Err() == nil:
		return res, nil
	case parent.Err() != nil:
		return res, parent.Err()
	case p.ctx.Err() != nil:
		return res, ErrStopped
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return res, ErrTimeout
	}
	return res, ctx.Err()
}

// stop ends the plugin: its calls in flight are cancelled, and its provider is closed
// once they returned.
func (p *Plugin) Stop() { p.cancel() }

// samePluginDef reports whether two plugin definitions would run the same provider.
func SameDef(a, b *config.PluginDef) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Meta, y.Meta = config.ServerMeta{}, config.ServerMeta{}
	return reflect.DeepEqual(x, y)
}
