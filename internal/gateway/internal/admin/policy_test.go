package admin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/store"
)

// TestAgentDocPinnedTools: pinned_tools and a search handshake survive the admin API's
// agent document both ways: decoded from a body, into the config, and back to what a GET
// shows.
func TestAgentDocPinnedTools(t *testing.T) {
	spec := agentSpec()
	got, errs := spec.decode([]byte(`{"servers":["gh"],"handshake":"search","pinned_tools":["gh__get_*","gh__create_issue"]}`))
	if errs != nil {
		t.Fatalf("decode: %v", errs)
	}
	doc := got.(*agentDoc)
	a := doc.config()
	if a.Handshake != "search" || !slices.Equal(a.PinnedTools, []string{"gh__get_*", "gh__create_issue"}) {
		t.Errorf("config: handshake %q pinned %q", a.Handshake, a.PinnedTools)
	}
	doc.PinnedTools[0] = "changed"
	if a.PinnedTools[0] != "gh__get_*" {
		t.Error("the config shares the document's pinned_tools slice")
	}
	back := agentDocOf(a)
	raw, _ := json.Marshal(back)
	if !strings.Contains(string(raw), `"pinned_tools":["gh__get_*","gh__create_issue"]`) || !strings.Contains(string(raw), `"handshake":"search"`) {
		t.Errorf("GET shows %s", raw)
	}
	// Without pinned tools the key is left out, as before.
	raw, _ = json.Marshal(agentDocOf(&config.AgentConfig{}))
	if strings.Contains(string(raw), "pinned_tools") {
		t.Errorf("an agent without pinned tools shows %s", raw)
	}
	if _, errs := spec.decode([]byte(`{"pinned_tools":"gh__*"}`)); errs == nil {
		t.Error("a string for pinned_tools was accepted; it is a list of globs")
	}
}

// TestMergeAgentPinnedTools: a stored agent's pinned tools reach the effective config,
// where the search form reads them (config.PinnedTools).
func TestMergeAgentPinnedTools(t *testing.T) {
	file := &config.Config{HTTP: config.HTTPConfig{Search: config.SearchConfig{Pinned: []string{"gh__get_*"}}}}
	raw, _ := json.Marshal(agentDoc{Servers: []agentUseDoc{{Name: "gh"}}, PinnedTools: []string{"gh__create_issue"}})
	m, _, bad := Merge(file, []*store.ConfigEntry{{Kind: kindAgent, Name: "bot", Doc: raw}})
	if len(bad) > 0 {
		t.Fatal(bad)
	}
	if got := m.PinnedTools("bot"); !slices.Equal(got, []string{"gh__get_*", "gh__create_issue"}) {
		t.Errorf("PinnedTools(bot) = %q", got)
	}
}
