package admin

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// The gateway runs one config with two sources: the file (file config, reloaded by the
// watcher) and the entries created through the admin API (kept in the session store). The
// running config is always the file config with the stored entries merged in (Merge),
// validated by the same config.Validate; the port's LockConfig serialises everything that
// computes and applies it.

// Config entry kinds in the store.
const (
	kindServer   = "server"
	kindAgent    = "agent"
	kindExecutor = "executor"
	kindSettings = "settings"
	// kindProject is projects.go's.
	settingsName = "gateway"
)

// entryDoc decodes a stored entry's document.
func entryDoc[T any](e *store.ConfigEntry) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(e.Doc, v); err != nil {
		return nil, fmt.Errorf("stored %s %q: %w", e.Kind, e.Name, err)
	}
	return v, nil
}

// Merge builds the effective config: file plus the stored API entries. A stored entry
// named like a file entry of its kind is shadowed (the file wins; shadowed names it). A
// stored entry that cannot be read is skipped and reported in bad.
func Merge(file *config.Config, entries []*store.ConfigEntry) (cfg *config.Config, shadowed []string, bad []error) {
	m := *file
	m.Servers = maps.Clone(file.Servers)
	m.Agents = maps.Clone(file.Agents)
	m.Executors = maps.Clone(file.Executors)
	m.Projects = maps.Clone(file.Projects)
	if m.Servers == nil {
		m.Servers = map[string]*config.ServerDef{}
	}
	for _, e := range entries {
		var err error
		switch e.Kind {
		case kindServer:
			shadowed, err = mergeServer(&m, file, e, shadowed)
		case kindAgent:
			shadowed, err = mergeAgent(&m, file, e, shadowed)
		case kindExecutor:
			shadowed, err = mergeExecutor(&m, file, e, shadowed)
		case kindProject:
			shadowed, err = mergeProject(&m, file, e, shadowed)
		case kindSettings:
			var doc *settingsDoc
			if doc, err = entryDoc[settingsDoc](e); err == nil {
				doc.apply(&m)
			}
		}
		if err != nil {
			bad = append(bad, err)
		}
	}
	return &m, shadowed, bad
}

func mergeServer(m, file *config.Config, e *store.ConfigEntry, shadowed []string) ([]string, error) {
	if _, inFile := file.Servers[e.Name]; inFile {
		return append(shadowed, "servers."+e.Name), nil
	}
	doc, err := entryDoc[ServerDoc](e)
	if err != nil {
		return shadowed, err
	}
	if doc.enabled() {
		d, _ := doc.def("")
		d.AddedBy = "api"
		m.ApplyServerDefaults(d)
		m.Servers[e.Name] = d
	}
	return shadowed, nil
}

func mergeAgent(m, file *config.Config, e *store.ConfigEntry, shadowed []string) ([]string, error) {
	if _, inFile := file.Agents[e.Name]; inFile {
		return append(shadowed, "agents."+e.Name), nil
	}
	doc, err := entryDoc[agentDoc](e)
	if err != nil {
		return shadowed, err
	}
	if m.Agents == nil {
		m.Agents = map[string]*config.AgentConfig{}
	}
	m.Agents[e.Name] = doc.config()
	return shadowed, nil
}

func mergeExecutor(m, file *config.Config, e *store.ConfigEntry, shadowed []string) ([]string, error) {
	if _, inFile := file.Executors[e.Name]; inFile {
		return append(shadowed, "executors."+e.Name), nil
	}
	doc, err := entryDoc[executorDoc](e)
	if err != nil {
		return shadowed, err
	}
	if m.Executors == nil {
		m.Executors = map[string]*config.ExecutorConfig{}
	}
	m.Executors[e.Name] = doc.config()
	return shadowed, nil
}

// Redacted is what a secret value reads as in an API answer. Writing it back (PUT or
// PATCH of an answer as read) keeps the stored value.
const Redacted = "***redacted***"

// redactValues keeps the keys of env or headers and hides every value: any of them may be
// a credential, and the API never echoes one.
func redactValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = Redacted
	}
	return out
}

// unredact replaces values written back as the redaction marker with the current ones.
// A marker for a key that has no current value is an error.
func unredact(next, cur map[string]string, field string) *FieldError {
	for _, k := range slices.Sorted(maps.Keys(next)) {
		if next[k] != Redacted {
			continue
		}
		v, ok := cur[k]
		if !ok {
			return &FieldError{Field: field + "." + k, Message: "is the redaction marker, but there is no stored value to keep"}
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

func parseDuration(s, field string) (time.Duration, *FieldError) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, &FieldError{Field: field, Message: fmt.Sprintf("%q is not a duration such as 30s or 2m", s)}
	}
	return d, nil
}

// problemsFor turns config problems into API errors and warnings. Warnings are kept only
// when they concern the entity (where starts with prefix), so one write does not echo
// every warning of the whole config.
func problemsFor(ps config.Problems, prefix string) (errs, warns []FieldError) {
	for _, p := range ps {
		fe := FieldError{Field: p.Where, Message: p.Text, Hint: p.Hint}
		if !p.Warning {
			errs = append(errs, fe)
		} else if p.Where == prefix || strings.HasPrefix(p.Where, prefix+".") {
			warns = append(warns, fe)
		}
	}
	return errs, warns
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
