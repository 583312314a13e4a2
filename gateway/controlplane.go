package gateway

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/sessions"
)

// The gateway runs one config with two sources: the file (file config, reloaded by the
// watcher) and the entries created through the admin API (kept in the session store). The
// running config is always the file config with the stored entries merged in, validated by
// the same config.Validate; cfgMu serialises everything that computes and applies it.

// Config entry kinds in the store.
const (
	kindServer   = "server"
	kindAgent    = "agent"
	kindExecutor = "executor"
)

// entryDoc decodes a stored entry's document.
func entryDoc[T any](e *sessions.ConfigEntry) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(e.Doc, v); err != nil {
		return nil, fmt.Errorf("stored %s %q: %w", e.Kind, e.Name, err)
	}
	return v, nil
}

// merge builds the effective config: file plus the stored API entries. A stored entry
// named like a file entry of its kind is shadowed (the file wins; shadowed names it). A
// stored entry that cannot be read is skipped and reported in bad.
func merge(file *config.Config, entries []*sessions.ConfigEntry) (cfg *config.Config, shadowed []string, bad []error) {
	m := *file
	m.Servers = maps.Clone(file.Servers)
	m.Agents = maps.Clone(file.Agents)
	m.Executors = maps.Clone(file.Executors)
	if m.Servers == nil {
		m.Servers = map[string]*config.ServerDef{}
	}
	for _, e := range entries {
		switch e.Kind {
		case kindServer:
			if _, inFile := file.Servers[e.Name]; inFile {
				shadowed = append(shadowed, "servers."+e.Name)
				continue
			}
			doc, err := entryDoc[serverDoc](e)
			if err != nil {
				bad = append(bad, err)
				continue
			}
			if !doc.enabled() {
				continue
			}
			d, _ := doc.def("")
			m.ApplyServerDefaults(d)
			m.Servers[e.Name] = d
		case kindAgent:
			if _, inFile := file.Agents[e.Name]; inFile {
				shadowed = append(shadowed, "agents."+e.Name)
				continue
			}
			doc, err := entryDoc[agentDoc](e)
			if err != nil {
				bad = append(bad, err)
				continue
			}
			if m.Agents == nil {
				m.Agents = map[string]*config.AgentConfig{}
			}
			m.Agents[e.Name] = doc.config()
		case kindExecutor:
			if _, inFile := file.Executors[e.Name]; inFile {
				shadowed = append(shadowed, "executors."+e.Name)
				continue
			}
			doc, err := entryDoc[executorDoc](e)
			if err != nil {
				bad = append(bad, err)
				continue
			}
			if m.Executors == nil {
				m.Executors = map[string]*config.ExecutorConfig{}
			}
			m.Executors[e.Name] = doc.config()
		case kindSettings:
			doc, err := entryDoc[settingsDoc](e)
			if err != nil {
				bad = append(bad, err)
				continue
			}
			doc.apply(&m)
		}
	}
	return &m, shadowed, bad
}

// effective merges file with the stored entries and validates the result. On a store
// error it returns the error; on invalid entries the problems.
func (g *Gateway) effective(file *config.Config) (*config.Config, config.Problems, error) {
	entries, err := g.store.ListConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg, shadowed, bad := merge(file, entries)
	for _, s := range shadowed {
		g.log.Warn("an admin API entry is shadowed by the config file's entry of the same name; the file's applies", "entry", s)
	}
	for _, err := range bad {
		g.log.Error("admin API config entry skipped", "err", err)
	}
	return cfg, cfg.Validate(), nil
}

// startConfig is the config a new gateway runs: the file merged with the stored API
// entries, or the file alone (loudly) when those cannot be read or make it invalid, so
// that a store problem never stops a valid file from serving.
func (g *Gateway) startConfig(file *config.Config) *config.Config {
	cfg, ps, err := g.effective(file)
	switch {
	case err != nil:
		g.log.Error("admin API config entries not read; serving the file's config alone", "err", err)
		return file
	case ps.HasErrors():
		g.log.Error("admin API config entries make the config invalid; serving the file's config alone", "problems", ps.Error())
		return file
	}
	return cfg
}

// ReloadFile applies a new file config: it is merged with the entries created through the
// admin API (so a file reload never drops them) and applied with Reload. A merged config
// that is invalid is refused and the running config kept.
func (g *Gateway) ReloadFile(file *config.Config) error {
	g.cfgMu.Lock()
	defer g.cfgMu.Unlock()
	cfg, ps, err := g.effective(file)
	if err != nil {
		return fmt.Errorf("admin API config entries: %w", err)
	}
	if ps.HasErrors() {
		return fmt.Errorf("with the admin API's entries merged in: %w", ps)
	}
	if err := g.Reload(cfg); err != nil {
		return err
	}
	g.fileCfg.Store(file)
	return nil
}

// ReloadStored applies the stored API entries again over the current file config (another
// replica changed them).
func (g *Gateway) ReloadStored() {
	if err := g.ReloadFile(g.fileCfg.Load()); err != nil {
		g.log.Error("config entries changed by another replica not applied", "err", err)
	}
}

// FileConfig is the config as the file (or the embedded defaults) gave it.
func (g *Gateway) FileConfig() *config.Config { return g.fileCfg.Load() }

// redacted is what a secret value reads as in an API answer. Writing it back (PUT or
// PATCH of an answer as read) keeps the stored value.
const redacted = "***redacted***"

// redactValues keeps the keys of env or headers and hides every value: any of them may be
// a credential, and the API never echoes one.
func redactValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = redacted
	}
	return out
}

// unredact replaces values written back as the redaction marker with the current ones.
// A marker for a key that has no current value is an error.
func unredact(next, cur map[string]string, field string) *admin.FieldError {
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if next[k] != redacted {
			continue
		}
		v, ok := cur[k]
		if !ok {
			return &admin.FieldError{Field: field + "." + k, Message: "is the redaction marker, but there is no stored value to keep"}
		}
		next[k] = v
	}
	return nil
}

// durationString shows a duration as the config file writes it ("" for zero).
func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func parseDuration(s, field string) (time.Duration, *admin.FieldError) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, &admin.FieldError{Field: field, Message: fmt.Sprintf("%q is not a duration such as 30s or 2m", s)}
	}
	return d, nil
}

// problemsFor turns config problems into API errors and warnings. Warnings are kept only
// when they concern the entity (where starts with prefix), so one write does not echo
// every warning of the whole config.
func problemsFor(ps config.Problems, prefix string) (errs, warns []admin.FieldError) {
	for _, p := range ps {
		fe := admin.FieldError{Field: p.Where, Message: p.Text, Hint: p.Hint}
		if !p.Warning {
			errs = append(errs, fe)
		} else if p.Where == prefix || strings.HasPrefix(p.Where, prefix+".") {
			warns = append(warns, fe)
		}
	}
	return errs, warns
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
