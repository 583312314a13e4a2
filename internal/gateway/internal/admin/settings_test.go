package admin

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// TestSettingsViewShowsForms: GET /api/settings shows the search and auto forms' settings
// and the client profiles in force, built-in ones included.
func TestSettingsViewShowsForms(t *testing.T) {
	cfg, _, err := config.Parse([]byte("store: memory\nhttp:\n  handshake: search\n  search: {pinned: [\"gh__*\"], results: 7}\n  auto: {full_max_tokens: 100, thin_max_tokens: 200}\n"))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(settingsView(cfg, nil))
	var v struct {
		Handshake string `json:"handshake"`
		Search    struct {
			Pinned  []string `json:"pinned"`
			Results int      `json:"results"`
		} `json:"search"`
		Auto struct {
			Full int `json:"full_max_tokens"`
			Thin int `json:"thin_max_tokens"`
		} `json:"auto"`
		Clients map[string]struct {
			Match    []string `json:"match"`
			NameMax  int      `json:"name_max"`
			MaxTools int      `json:"max_tools"`
		} `json:"clients"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if v.Handshake != "search" || v.Search.Results != 7 || !slices.Equal(v.Search.Pinned, []string{"gh__*"}) || v.Auto.Full != 100 || v.Auto.Thin != 200 {
		t.Errorf("settings: %s", raw)
	}
	if c, ok := v.Clients["cursor"]; !ok || c.MaxTools != 40 || len(c.Match) == 0 {
		t.Errorf("clients: %s", raw)
	}
	// Nothing pinned shows [] rather than null.
	empty, _, _ := config.Parse([]byte("store: memory\n"))
	raw, _ = json.Marshal(settingsView(empty, nil)["search"])
	if string(raw) != `{"pinned":[],"results":3}` {
		t.Errorf("default search: %s", raw)
	}
}

// TestSettingsApplyForms: stored settings override the file's search and auto fields and
// leave the rest, without writing into the file's config.
func TestSettingsApplyForms(t *testing.T) {
	file, _, err := config.Parse([]byte("store: memory\nhttp:\n  search: {pinned: [\"a*\"], results: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(settingsDoc{Handshake: "search", Search: &searchDoc{Pinned: &[]string{"b*"}}, Auto: &autoDoc{ThinMaxTokens: 50000}})
	e := &store.ConfigEntry{Kind: kindSettings, Name: settingsName, Doc: doc, Updated: time.Now()}
	m, _, bad := Merge(file, []*store.ConfigEntry{e})
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if m.HTTP.Handshake != "search" || !slices.Equal(m.HTTP.Search.Pinned, []string{"b*"}) || m.HTTP.Search.Results != 3 {
		t.Errorf("merged search: %q %+v", m.HTTP.Handshake, m.HTTP.Search)
	}
	if m.HTTP.Auto.ThinMaxTokens != 50000 || m.HTTP.Auto.FullMaxTokens != config.DefaultAutoFullMaxTokens {
		t.Errorf("merged auto: %+v", m.HTTP.Auto)
	}
	if !slices.Equal(file.HTTP.Search.Pinned, []string{"a*"}) {
		t.Errorf("the file's config changed: %q", file.HTTP.Search.Pinned)
	}
	// An empty list, sent, empties the pinned tools.
	doc, _ = json.Marshal(settingsDoc{Search: &searchDoc{Pinned: &[]string{}}})
	m, _, _ = Merge(file, []*store.ConfigEntry{{Kind: kindSettings, Name: settingsName, Doc: doc}})
	if len(m.HTTP.Search.Pinned) != 0 {
		t.Errorf("pinned: [] left %q", m.HTTP.Search.Pinned)
	}
	if p := m.Validate(); p.HasErrors() {
		t.Errorf("the merged config does not validate: %v", p)
	}
}
