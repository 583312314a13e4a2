package admin

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// configWriter is what every handler that changes the config holds: the port and the log,
// and the one way an API write reaches the running config (commitChanges): merged with the
// file's, validated, stored, applied, audited.
type configWriter struct {
	port Port
	log  *slog.Logger
}

// fileManaged answers 409 for an entity the config file defines.
func (a configWriter) fileManaged(w http.ResponseWriter, what string) {
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
func (a configWriter) commitEntry(w http.ResponseWriter, r *http.Request, kind, section, name string, cur, next *store.ConfigEntry,
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
func (a configWriter) commitChanges(w http.ResponseWriter, r *http.Request, changes []entryChange, fieldErrs []FieldError,
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
	if !MayRunCommands(a.port, w, r, LaunchChanges(a.port.Config(), checked)) {
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
func (a configWriter) storeChanges(w http.ResponseWriter, changes []entryChange) bool {
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
func (a configWriter) auditChanges(r *http.Request, changes []entryChange, outcome string, after bool) {
	for _, c := range changes {
		var before, next any
		if c.cur != nil {
			before = c.cur
		}
		if after && c.next != nil {
			next = c.next
		}
		AuditWrite(a.port, r, c.kind+"/"+c.name, outcome, before, next)
	}
}
