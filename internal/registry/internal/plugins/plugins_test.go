package plugins

import (
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// TestScopeKey: generated catalogues are kept per generation inputs, so each input tells
// the key apart (nil connections, every one, differs from an empty list).
func TestScopeKey(t *testing.T) {
	keys := map[string]bool{}
	for _, c := range []struct {
		sc Scope
		el bool
	}{
		{Scope{}, false}, {Scope{Connections: []string{}}, false}, {Scope{Connections: []string{"a"}}, false},
		{Scope{ReadOnly: true}, false}, {Scope{}, true},
	} {
		k := scopeKey(c.sc, c.el)
		if keys[k] {
			t.Errorf("scope %+v (elicitation %v) has the key %q of another", c.sc, c.el, k)
		}
		keys[k] = true
	}
}

// TestSameDefIgnoresMeta: a definition that changed only in its metadata (title,
// description) is the same plugin: a reload keeps it running.
func TestSameDefIgnoresMeta(t *testing.T) {
	a := &config.PluginDef{Type: config.PluginTypeGo}
	b := *a
	b.Meta = config.ServerMeta{Title: "Shop"}
	if !SameDef(a, &b) {
		t.Error("a metadata change made a different plugin")
	}
	if b.Type = config.PluginTypeSelf; SameDef(a, &b) {
		t.Error("a type change kept the plugin")
	}
}
