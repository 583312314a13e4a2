package store

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// ConfigEntry is one piece of configuration created through the admin API (a server, an
// agent, an executor, the settings), kept in the store next to sessions so that it
// survives restarts and is shared by replicas. The gateway merges these entries with the
// config file into the config it runs (docs/admin-api.md).
type ConfigEntry struct {
	// Kind is the section: "server", "agent", "executor" or "settings".
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Doc is the entry as the API accepted it (JSON, the config file's keys).
	Doc     json.RawMessage `json:"doc"`
	Source  string          `json:"source"` // always "api"
	Created time.Time       `json:"created_at"`
	Updated time.Time       `json:"updated_at"`
	// Version counts the entry's writes, from 1.
	Version int64 `json:"version"`
}

// ConfigSchemaVersion is the layout of stored config entries this build writes. A store
// written by an earlier layout is migrated forward when it is opened (see migrations in
// bolt.go).
const ConfigSchemaVersion = 4

func cloneEntry(e *ConfigEntry) *ConfigEntry {
	c := *e
	c.Doc = bytes.Clone(e.Doc)
	return &c
}

// configKey is an entry's key: kind, a NUL, name (neither may hold a NUL).
func configKey(kind, name string) string { return kind + "\x00" + name }

func validConfigKey(kind, name string) bool {
	return kind != "" && name != "" && !strings.ContainsRune(kind, 0) && !strings.ContainsRune(name, 0)
}

func sortEntries(es []*ConfigEntry) {
	slices.SortFunc(es, func(a, b *ConfigEntry) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

func (s *Memory) PutConfig(e *ConfigEntry) error {
	if !validConfigKey(e.Kind, e.Name) {
		return errBadConfigKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.config == nil {
		s.config = map[string]ConfigEntry{}
	}
	s.config[configKey(e.Kind, e.Name)] = *cloneEntry(e)
	return nil
}

func (s *Memory) GetConfig(kind, name string) (*ConfigEntry, error) {
	s.mu.Lock()
	e, ok := s.config[configKey(kind, name)]
	s.mu.Unlock()
	if !ok {
		return nil, ErrNotFound
	}
	return cloneEntry(&e), nil
}

func (s *Memory) DeleteConfig(kind, name string) error {
	s.mu.Lock()
	delete(s.config, configKey(kind, name))
	s.mu.Unlock()
	return nil
}

func (s *Memory) ListConfig() ([]*ConfigEntry, error) {
	s.mu.Lock()
	out := make([]*ConfigEntry, 0, len(s.config))
	for _, e := range s.config {
		out = append(out, cloneEntry(&e))
	}
	s.mu.Unlock()
	sortEntries(out)
	return out, nil
}
