package registry

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/registry/internal/catalog"
	"github.com/mcpgw/mcpgw/internal/registry/internal/integrity"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/plugin"
)

// Tool integrity (docs/integrity.md): every catalogue a server or plugin serves is shown
// to the registry's guard before it is used (readCatalog, Plugin.set), which pins what it
// sees first and holds what changes; a view admits only what the guard lets it serve
// (Integrity.admitTool and friends, through View.addTools and addRest). Held definitions are thus absent from every list, search,
// describe and call that goes through a view, whatever the front.

// PinStore is where pins are kept: a store.Store.
type PinStore = integrity.Store

// DefChange is one member that differs between an approved and a held definition.
type DefChange = integrity.Change

// DefFlag is one reason the injection heuristics give for a definition.
type DefFlag = integrity.Flag

// IntegrityEvent is one hold, approval or rejection.
type IntegrityEvent = integrity.Event

// Integrity is the registry's part that pins definitions: Registry.Integrity.
type Integrity struct {
	r    *Registry
	once sync.Once
	g    *integrity.Guard
}

// Integrity is the registry's integrity part: its pins, holds and decisions.
func (r *Registry) Integrity() *Integrity { return &r.integ }

// Use keeps the registry's pins in store (the gateway's session store, so that they
// survive restarts and replicas share them). Call it before Start; without it, pins are
// kept in memory. onEvent (may be nil) observes every hold, approval and rejection.
func (in *Integrity) Use(store PinStore, onEvent func(IntegrityEvent)) {
	used := false
	in.once.Do(func() {
		in.g = integrity.New(store, in.r.log)
		in.g.OnEvent = onEvent
		used = true
	})
	if !used {
		in.r.log.Error("integrity: pins are kept in memory: the store was given after the first catalogue was read")
		return
	}
	if !in.g.Loaded() {
		go in.retryLoad()
	}
}

// loadRetry is how often the pins are read again while the store does not answer.
const loadRetry = 2 * time.Second

// retryLoad reads the pins until the store answers (while the registry runs), then shows
// every server's and plugin's current catalogue to the guard again: until then nothing
// was recorded, and nothing unrecorded was served.
func (in *Integrity) retryLoad() {
	t := time.NewTicker(loadRetry)
	defer t.Stop()
	for !in.g.Load() {
		select {
		case <-in.r.ctx.Done():
			return
		case <-t.C:
		}
	}
	in.r.log.Info("integrity: the pins were read; catalogues are checked again")
	for _, name := range in.r.Names() {
		if s := in.r.Server(name); s != nil {
			if cat := s.Catalog(); cat != nil {
				in.observe(name, cat)
			}
			in.r.changes.note(name)
		}
	}
	for _, name := range in.r.PluginNames() {
		if p := in.r.Plugin(name); p != nil {
			if c := p.Catalog(); c != nil {
				in.observePlugin(p, c)
			}
			in.r.changes.note(name)
		}
	}
}

func (in *Integrity) guard() *integrity.Guard {
	in.once.Do(func() { in.g = integrity.New(store.NewMemory(), in.r.log) })
	return in.g
}

// policy is the guard's policy for the server or plugin name under the running config.
func (in *Integrity) policy(name string) integrity.Policy {
	cfg := in.r.Config()
	i := cfg.IntegrityOf(name)
	p := integrity.Policy{Mode: i.Policy, FirstUse: i.FirstUse, OnChange: i.OnChange, Suspicious: i.Suspicious, MaxHeldBytes: i.MaxHeldBytes}
	if cfg.Plugins[name] != nil && i.PluginChanges == config.PluginChangesFollow {
		// The seed's promise: a plugin's new resource types become tools at once. What
		// its data source writes into them (names, values) is held when the heuristics
		// flag it, from the first catalogue on.
		p.AcceptedBy, p.Suspicious = byPluginCatalogue, "hold"
	}
	return p
}

// byPluginCatalogue is who accepts a plugin's new or changed tools under
// integrity.plugin_changes: follow.
const byPluginCatalogue = "plugin catalogue"

// adminAct names the admin act that made cfg the running config, which approves what it
// changes in a server's or plugin's catalogue (its first catalogue after the act).
func adminAct(cfg *config.Config) string {
	if cfg.ChangedBy != "" {
		return cfg.ChangedBy
	}
	return "config reload"
}

// pendingAct is an admin act that added or changed a server or plugin (markActs): the
// first catalogue after it that changes something is approved by it (By), if it comes
// before Until. A catalogue that changes nothing (an instance of the old definition
// re-listing, one whose tools did not change) leaves it pending; the bound keeps a
// later change, long after the act, from being taken for the act's.
type pendingAct = integrity.PendingAct

// actWindow is how long an admin act waits for the catalogue it changes: the server's
// connect timeout twice (a probe's start and its list), at least a minute.
func actWindow(connect time.Duration) time.Duration {
	return max(2*connect, time.Minute)
}

// observeWithAct shows defs to the guard under p, accepted by the admin act pending in
// act (nil: none) if it is still current; the act is taken only when it accepted a change.
func (in *Integrity) observeWithAct(name string, p integrity.Policy, act *atomic.Pointer[pendingAct], defs []integrity.Def, by string) int {
	a := act.Load()
	if a != nil && time.Now().Before(a.Until) && a.By != "" {
		p.AcceptedBy = a.By
	} else {
		a = nil
	}
	held, accepted := in.guard().ObserveAccepting(name, p, defs, by)
	if a != nil && accepted > 0 {
		act.CompareAndSwap(a, nil)
	}
	return held
}

// observe fingerprints every definition of cat and shows them to the guard.
func (in *Integrity) observe(server string, cat *Catalog) {
	by := "config"
	if d := in.r.Config().Servers[server]; d != nil && d.AddedBy == "api" {
		by = "api"
	}
	defs := make([]integrity.Def, 0, len(cat.Tools)+len(cat.Prompts)+len(cat.Templates))
	for _, t := range cat.Tools {
		d := integrity.NewDef(integrity.KindTool, t.Name, t.OwnDef())
		t.Hash = d.Hash
		defs = append(defs, d)
	}
	for _, p := range cat.Prompts {
		d := integrity.NewDef(integrity.KindPrompt, p.Name, catalog.Rename(p.Def, p.Name))
		p.Hash = d.Hash
		defs = append(defs, d)
	}
	for _, t := range cat.Templates {
		d := integrity.NewDef(integrity.KindTemplate, t.URI, t.Def)
		t.Hash = d.Hash
		defs = append(defs, d)
	}
	for _, sk := range cat.Skills {
		// The upstream's own entry: its frontmatter and its files' digests and sizes.
		d := integrity.NewDef(integrity.KindSkill, sk.URI, sk.Upstream)
		sk.Hash = d.Hash
		defs = append(defs, d)
	}
	if strings.TrimSpace(cat.Instructions) != "" {
		raw, _ := json.Marshal(cat.Instructions)
		d := integrity.NewDef(integrity.KindInstructions, instructionsName, raw)
		cat.InstrHash = d.Hash
		defs = append(defs, d)
	}
	pol := in.policy(server)
	act := &atomic.Pointer[pendingAct]{}
	if s := in.r.Server(server); s != nil {
		act = s.Act()
	}
	if in.observeWithAct(server, pol, act, defs, by) > 0 {
		// Views built from another catalogue of the server (a new session's, a stateless
		// caller's) may serve the version this holds in place of: they are built again.
		in.r.changes.note(server)
	}
}

// observePlugin fingerprints the tools a plugin's catalogue generates for every connection
// (its widest scope) and shows them to the guard; it returns each tool's fingerprint by
// full name, which the tools generated for narrower scopes are judged by.
func (in *Integrity) observePlugin(p *Plugin, cat *plugin.Catalog) map[string]string {
	if cat == nil {
		return nil
	}
	ts := cat.Tools(plugin.Options{ReadOnly: p.Def.ReadOnly, NameOp: p.ToolName})
	hashes := make(map[string]string, len(ts.Tools))
	defs := make([]integrity.Def, 0, len(ts.Tools))
	for _, pt := range ts.Tools {
		raw, err := json.Marshal(pt.Def)
		if err != nil {
			continue
		}
		// Named by its full name, not the exposed one: naming rules are no change.
		d := integrity.NewDef(integrity.KindTool, pt.Full, catalog.Rename(raw, pt.Full))
		hashes[pt.Full] = d.Hash
		defs = append(defs, d)
	}
	in.observeWithAct(p.Name, in.policy(p.Name), p.Act(), defs, "config")
	return hashes
}

// integrityKey is what of the guard's state a view depends on, for the view cache.
func (in *Integrity) key() string { return "|i" + strconv.FormatUint(in.guard().Gen(), 36) }

// admitTool is the tool a view may serve in t's place: t, the approved version of it
// (on_change: keep_old), or nil while t is held.
func (in *Integrity) admitTool(t *Tool, p integrity.Policy) *Tool {
	serve, old := in.guard().Verdict(t.Server, integrity.KindTool, t.Name, t.Hash, p)
	switch {
	case serve:
		return t
	case old == nil || t.PluginTool != nil: // a plugin runs its current tool: no old version to serve
		return nil
	}
	ot, err := catalog.ExposeTool(t.Server, old, in.r.Config().Naming)
	if err != nil {
		return nil
	}
	_, ot.Hash = integrity.Canonical(old)
	return ot
}

// admitPrompt and admitTemplate: likewise, for prompts and resource templates.
func (in *Integrity) admitPrompt(pr *Prompt, p integrity.Policy) *Prompt {
	serve, old := in.guard().Verdict(pr.Server, integrity.KindPrompt, pr.Name, pr.Hash, p)
	switch {
	case serve:
		return pr
	case old == nil:
		return nil
	}
	return &Prompt{Server: pr.Server, Name: pr.Name, Exposed: pr.Exposed, Def: catalog.Rename(old, pr.Exposed)}
}

func (in *Integrity) admitTemplate(t *Resource, p integrity.Policy) *Resource {
	serve, old := in.guard().Verdict(t.Server, integrity.KindTemplate, t.URI, t.Hash, p)
	switch {
	case serve:
		return t
	case old == nil:
		return nil
	}
	return &Resource{Server: t.Server, URI: t.URI, Def: old}
}

// admitSkill is the skill a view may serve in sk's place: sk, the approved version of
// its entry (on_change: keep_old), or nil while it is held.
func (in *Integrity) admitSkill(sk *catalog.Skill, p integrity.Policy) *catalog.Skill {
	serve, old := in.guard().Verdict(sk.Server, integrity.KindSkill, sk.URI, sk.Hash, p)
	switch {
	case serve:
		return sk
	case old == nil:
		return nil
	}
	os, err := catalog.ExposeSkill(sk.Server, old)
	if err != nil {
		return nil
	}
	_, os.Hash = integrity.Canonical(old)
	return os
}

// admission is what a view admits of one server's or plugin's catalogue.
type admission struct {
	in     *Integrity
	policy integrity.Policy
}

func (a admission) Tool(t *Tool) *Tool             { return a.in.admitTool(t, a.policy) }
func (a admission) Prompt(p *Prompt) *Prompt       { return a.in.admitPrompt(p, a.policy) }
func (a admission) Template(t *Resource) *Resource { return a.in.admitTemplate(t, a.policy) }
func (a admission) Skill(s *catalog.Skill) *catalog.Skill {
	return a.in.admitSkill(s, a.policy)
}

// instructionsName is the name of a server's instructions among its definitions.
const instructionsName = "initialize"

// Instructions are the server instructions of cat (server's catalogue) that may reach a
// client: as listed, the approved ones (on_change: keep_old), or none while they are held.
func (in *Integrity) Instructions(server string, cat *Catalog) string {
	if cat == nil || strings.TrimSpace(cat.Instructions) == "" {
		return ""
	}
	serve, old := in.guard().Verdict(server, integrity.KindInstructions, instructionsName, cat.InstrHash, in.policy(server))
	if serve {
		return cat.Instructions
	}
	var s string
	if old != nil && json.Unmarshal(old, &s) == nil {
		return s
	}
	return ""
}

// Serves reports whether a view would serve t as it is now (explain asks, for tools it
// reads from catalogues rather than from a view).
func (in *Integrity) Serves(t *Tool) bool { return in.admitTool(t, in.policy(t.Server)) != nil }

// ServesSkill reports whether views serve sk now (false: held until an admin approves it).
func (in *Integrity) ServesSkill(sk *Skill) bool {
	serve, _ := in.guard().Verdict(sk.Server, integrity.KindSkill, sk.URI, sk.Hash, in.policy(sk.Server))
	return serve
}

// Pins returns every integrity record: what is pinned and what is held, per server.
func (in *Integrity) Pins() []*store.Pin { return in.guard().List() }

// HeldCount is how many definitions of server wait for an admin.
func (in *Integrity) HeldCount(server string) int { return in.guard().Held(server) }

// Approve makes the held definitions of server that match kind and name ("" matches
// any) the approved ones; the sessions whose views change are told. It returns how many.
func (in *Integrity) Approve(server, kind, name, by string) (int, error) {
	n, err := in.guard().Approve(server, kind, name, by)
	if n > 0 {
		in.r.changes.note(server)
	}
	return n, err
}

// ReviewedDef is one held definition as an admin reviewed it (kind, name, fingerprint).
type ReviewedDef = integrity.Reviewed

// ChangedError is an approval whose reviewed version is no longer the one held.
type ChangedError = integrity.ChangedError

// ApproveReviewed approves the held definitions of server an admin reviewed, each only
// while the version held is the one reviewed (else nothing, and a *ChangedError); the
// sessions whose views change are told. It returns how many.
func (in *Integrity) ApproveReviewed(server string, reviewed []ReviewedDef, by string) (int, error) {
	n, err := in.guard().ApproveReviewed(server, reviewed, by)
	if n > 0 {
		in.r.changes.note(server)
	}
	return n, err
}

// Reject keeps the held definitions of server that match out until they change again.
func (in *Integrity) Reject(server, kind, name, by string) (int, error) {
	n, err := in.guard().Reject(server, kind, name, by)
	if n > 0 {
		in.r.changes.note(server)
	}
	return n, err
}

// Reload reads the pins again (another replica approved or rejected) and rebuilds the
// views that depend on them.
func (in *Integrity) Reload(server string) {
	in.guard().Reload()
	in.r.changes.note(server)
}

// ErrNotHeld is what Approve and Reject answer when nothing of that name waits.
var ErrNotHeld = integrity.ErrNotHeld

// DiffDefs lists what differs between two definitions.
func DiffDefs(old, new json.RawMessage) []DefChange { return integrity.Diff(old, new) }

// Policy is the integrity settings of a server or plugin under the running config.
func (in *Integrity) Policy(name string) config.IntegrityConfig {
	return in.r.Config().IntegrityOf(name)
}
