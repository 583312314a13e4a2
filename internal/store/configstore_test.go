package store

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestConfigEntries: every store keeps admin API config entries by (kind, name), apart
// from one another, lists them sorted, and refuses keys it could not keep apart.
func TestConfigEntries(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, st := range backends {
		t.Run(st.name, func(t *testing.T) {
			s := st.setup(t)(t)
			defer s.Close()
			if es, err := s.ListConfig(); err != nil || len(es) != 0 {
				t.Fatalf("empty store lists %v, %v", es, err)
			}
			put := func(kind, name, doc string, v int64) {
				t.Helper()
				e := &ConfigEntry{Kind: kind, Name: name, Doc: json.RawMessage(doc), Source: "api", Created: at, Updated: at, Version: v}
				if err := s.PutConfig(e); err != nil {
					t.Fatal(err)
				}
				e.Doc[0] = 'X' // the store keeps its own copy
			}
			put("server", "web", `{"type":"streamable_http"}`, 1)
			put("server", "a:b", `{"type":"stdio"}`, 1)
			put("agent", "web", `{"enabled":true}`, 1)
			put("server", "web", `{"type":"sse"}`, 2)
			got, err := s.GetConfig("server", "web")
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Doc) != `{"type":"sse"}` || got.Version != 2 || !got.Created.Equal(at) || got.Source != "api" {
				t.Errorf("GetConfig(server, web) = %+v (doc %s)", got, got.Doc)
			}
			if a, err := s.GetConfig("agent", "web"); err != nil || string(a.Doc) != `{"enabled":true}` {
				t.Errorf("the agent named like a server: %+v, %v", a, err)
			}
			es, err := s.ListConfig()
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, e := range es {
				keys = append(keys, e.Kind+"/"+e.Name)
			}
			if want := "[agent/web server/a:b server/web]"; fmtList(keys) != want {
				t.Errorf("ListConfig = %v, want %s", keys, want)
			}
			if err := s.DeleteConfig("server", "web"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GetConfig("server", "web"); !errors.Is(err, ErrNotFound) {
				t.Errorf("after delete: %v, want ErrNotFound", err)
			}
			if err := s.DeleteConfig("server", "never"); err != nil {
				t.Errorf("deleting an absent entry: %v", err)
			}
			if err := s.PutConfig(&ConfigEntry{Kind: "server", Name: "x\x00y"}); err == nil {
				t.Errorf("a name with a NUL was accepted")
			}
			if err := s.PutConfig(&ConfigEntry{Kind: "", Name: "x"}); err == nil {
				t.Errorf("an empty kind was accepted")
			}
		})
	}
}

func fmtList(s []string) string { return "[" + strings.Join(s, " ") + "]" }

// TestBoltConfigSurvivesReopen: entries are in the file, and a reopened store at the
// current layout runs no migration.
func TestBoltConfigSurvivesReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpgw.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.PutConfig(&ConfigEntry{Kind: "server", Name: "web", Doc: json.RawMessage(`{}`), Source: "api", Version: 1}))
	must(t, s.Close())
	s, err = OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if m := s.Migrated(); len(m) != 0 {
		t.Errorf("reopening a current store ran %v", m)
	}
	if e, err := s.GetConfig("server", "web"); err != nil || e.Version != 1 {
		t.Errorf("after reopen: %+v, %v", e, err)
	}
}

// TestBoltRefusesNewerLayout: a store written by a newer release is refused, naming why.
func TestBoltRefusesNewerLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpgw.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, []byte("99"))
	}))
	must(t, s.Close())
	if _, err := OpenBolt(path); err == nil || !strings.Contains(err.Error(), "newer mcpgw") || !strings.Contains(err.Error(), path) {
		t.Errorf("opening a layout-99 store: %v", err)
	}
}
