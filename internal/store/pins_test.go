package store

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestPins: every store keeps integrity records by (server, kind, name), apart from one
// another (names with ':' and '%' included), its own copies, sorted, and refuses keys it
// could not keep apart.
func TestPins(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, st := range backends {
		t.Run(st.name, func(t *testing.T) {
			s := st.setup(t)(t)
			defer s.Close()
			if ps, err := s.ListPins(); err != nil || len(ps) != 0 {
				t.Fatalf("empty store lists %v, %v", ps, err)
			}
			p := &Pin{Server: "db", Kind: "tool", Name: "create_users", Hash: "h1", Def: json.RawMessage(`{"name":"create_users"}`), At: at, By: "config",
				Held: &HeldDef{Hash: "h2", Def: json.RawMessage(`{"name":"create_users","x":1}`), Reason: "changed", Since: at}, Version: 1}
			if err := s.PutPin(p); err != nil {
				t.Fatal(err)
			}
			p.Def[0], p.Held.Def[0] = 'X', 'X' // the store keeps its own copy
			for _, q := range []*Pin{
				{Server: "db", Kind: "server", At: at, By: "api:alice"},
				{Server: "db", Kind: "prompt", Name: "create_users", Hash: "p"},
				{Server: "a:b", Kind: "tool", Name: "c%3Ad", Hash: "x"},
				{Server: "a", Kind: "tool", Name: "b:c%3Ad", Hash: "y"},
			} {
				if err := s.PutPin(q); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.GetPin("db", "tool", "create_users")
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Def) != `{"name":"create_users"}` || got.Held == nil || got.Held.Reason != "changed" || string(got.Held.Def) != `{"name":"create_users","x":1}` || !got.At.Equal(at) {
				t.Errorf("GetPin = %+v", got)
			}
			if a, err := s.GetPin("a:b", "tool", "c%3Ad"); err != nil || a.Hash != "x" {
				t.Errorf("a:b/c%%3Ad: %+v, %v", a, err)
			}
			if a, err := s.GetPin("a", "tool", "b:c%3Ad"); err != nil || a.Hash != "y" {
				t.Errorf("a/b:c%%3Ad: %+v, %v", a, err)
			}
			ps, err := s.ListPins()
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, p := range ps {
				keys = append(keys, p.Server+"/"+p.Kind+"/"+p.Name)
			}
			if want := "[a/tool/b:c%3Ad a:b/tool/c%3Ad db/prompt/create_users db/server/ db/tool/create_users]"; fmtList(keys) != want {
				t.Errorf("ListPins = %v, want %s", keys, want)
			}
			if err := s.DeletePin("db", "tool", "create_users"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.GetPin("db", "tool", "create_users"); !errors.Is(err, ErrNotFound) {
				t.Errorf("after delete: %v, want ErrNotFound", err)
			}
			for _, bad := range []*Pin{{Server: "", Kind: "tool", Name: "x"}, {Server: "s", Kind: "tool", Name: ""}, {Server: "s\x00t", Kind: "tool", Name: "x"}, {Server: "s", Kind: "", Name: "x"}} {
				if err := s.PutPin(bad); err == nil {
					t.Errorf("PutPin(%q/%q/%q) accepted", bad.Server, bad.Kind, bad.Name)
				}
			}
		})
	}
}

// TestBoltPinsSurviveReopen: pins are in the file.
func TestBoltPinsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpgw.db")
	s, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutPin(&Pin{Server: "db", Kind: "tool", Name: "t", Hash: "h"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p, err := s.GetPin("db", "tool", "t"); err != nil || p.Hash != "h" {
		t.Errorf("after reopen: %+v, %v", p, err)
	}
}
