package admin

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
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

// fileManaged answers 409 for an entity the config file defines.
func (a *API) fileManaged(w http.ResponseWriter, what string) {
	path := a.port.FileConfig().Path
	if path == "" {
		path = "the embedded default config"
	}
	Error(w, http.StatusConflict, fmt.Sprintf("%s is managed by the config file %s; edit the file instead", what, path))
}

// entryChange is one stored entry an admin write changes: cur (nil: new) becomes next
// (nil: deleted).
type entryChange struct {
	kind, name string
	cur, next  *store.ConfigEntry
}

// newEntry is the stored entry of doc, following cur (nil: a new one).
func newEntry(kind, name string, doc any, cur *store.ConfigEntry, now time.Time) *store.ConfigEntry {
	raw, _ := json.Marshal(doc)
	e := &store.ConfigEntry{Kind: kind, Name: name, Doc: raw, Source: "api", Created: now, Updated: now, Version: 1}
	if cur != nil {
		e.Created, e.Version = cur.Created, cur.Version+1
	}
	return e
}

// commitEntry is commitChanges for one entry: cur replaced by next (nil: deleted).
// Called with the config lock held.
func (a *API) commitEntry(w http.ResponseWriter, r *http.Request, kind, section, name string, cur, next *store.ConfigEntry,
	fieldErrs []FieldError, check func(*config.Config) *config.Config, dry bool) ([]FieldError, bool) {
	return a.commitChanges(w, r, []entryChange{{kind: kind, name: name, cur: cur, next: next}}, fieldErrs, check, dry, section+"."+name)
}

// commitChanges is every API config write, of one entry or several as one change: the
// stored entries with the changes applied are merged with the file config, checked (check
// may widen what is validated) by config.Validate, and unless dry stored and applied with
// the port's Apply (one Reload, announced to other replicas), then written to the audit
// log. If storing or applying fails, the entries are put back as they were. On a refusal
// it writes the answer and reports false. Warnings are those under prefix. Called with
// the config lock held.
func (a *API) commitChanges(w http.ResponseWriter, r *http.Request, changes []entryChange, fieldErrs []FieldError,
	check func(*config.Config) *config.Config, dry bool, prefix string) ([]FieldError, bool) {
	st := a.port.Store()
	entries, err := st.ListConfig()
	if err != nil {
		Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return nil, false
	}
	for _, c := range changes {
		entries = slices.DeleteFunc(entries, func(e *store.ConfigEntry) bool { return e.Kind == c.kind && e.Name == c.name })
		if c.next != nil {
			entries = append(entries, c.next)
		}
	}
	cfg, _, _ := Merge(a.port.FileConfig(), entries)
	checked := cfg
	if check != nil {
		checked = check(cfg)
	}
	errs, warns := problemsFor(checked.Validate(), prefix)
	errs = append(fieldErrs, errs...)
	if len(errs) > 0 {
		if !dry {
			a.auditChanges(r, changes, "invalid", false)
		}
		FieldErrors(w, http.StatusBadRequest, "the config would be invalid: "+errs[0].WithField(), errs, warns)
		return nil, false
	}
	if dry {
		return warns, true
	}
	if !a.MayRunCommands(w, r, LaunchChanges(a.port.Config(), checked)) {
		return nil, false
	}
	if !a.storeChanges(w, changes) {
		return nil, false
	}
	// What this change makes a server or plugin serve is approved by it (docs/integrity.md).
	cfg.ChangedBy = "admin API (" + Actor(r) + ")"
	if err := a.port.Apply(cfg); err != nil {
		// Put the store back as it was: the running config did not change.
		restoreChanges(st, changes)
		a.auditChanges(r, changes, "failed", false)
		Error(w, http.StatusInternalServerError, "applying the config: "+err.Error())
		return nil, false
	}
	a.auditChanges(r, changes, "ok", true)
	objects := make([]string, len(changes))
	for i, c := range changes {
		objects[i] = c.kind + "/" + c.name
	}
	a.log.Info("admin API changed the config", "entries", objects, "action", r.Method, "actor", Actor(r))
	return warns, true
}

// storeChanges writes the changes to the store, or puts back those written and answers
// 503.
func (a *API) storeChanges(w http.ResponseWriter, changes []entryChange) bool {
	store := a.port.Store()
	for _, c := range changes {
		var err error
		if c.next != nil {
			err = store.PutConfig(c.next)
		} else {
			err = store.DeleteConfig(c.kind, c.name)
		}
		if err != nil {
			restoreChanges(store, changes)
			Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
			return false
		}
	}
	return true
}

// restoreChanges puts the changed entries back as they were.
func restoreChanges(store Store, changes []entryChange) {
	for _, c := range changes {
		if c.cur != nil {
			_ = store.PutConfig(c.cur)
		} else {
			_ = store.DeleteConfig(c.kind, c.name)
		}
	}
}

// auditChanges writes one audit line per changed entry; after says whether the change
// took effect (the line then hashes the new entry).
func (a *API) auditChanges(r *http.Request, changes []entryChange, outcome string, after bool) {
	for _, c := range changes {
		var before, next any
		if c.cur != nil {
			before = c.cur
		}
		if after && c.next != nil {
			next = c.next
		}
		a.AuditWrite(r, c.kind+"/"+c.name, outcome, before, next)
	}
}
