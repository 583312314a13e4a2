package auth

import (
	"reflect"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// TestExplainOverPlainLists: Explain decides the tools it is given (no catalogue type),
// hands the filter's plugin scope to the caller, says why a server outside the session is
// hidden, and passes a source's reason for having no tools through.
func TestExplainOverPlainLists(t *testing.T) {
	cfg := &config.Config{
		Servers: map[string]*config.ServerDef{"fs": {}, "web": {}},
		Plugins: map[string]*config.PluginDef{"shop": {Type: "sql"}},
		Agents: map[string]*config.AgentConfig{"ro": {ReadOnly: true, ConnectionScope: []string{"main"},
			Servers: []config.AgentUse{{Name: "fs"}, {Name: "shop"}}}},
	}
	var gotScope PluginScope
	ds, res, fail := Explain(cfg, &Identity{Agent: "ro"}, nil, func(sc PluginScope) []ToolSource {
		gotScope = sc
		return []ToolSource{
			{Server: "fs", Tools: []ToolFacts{{Exposed: "fs_read", ReadOnly: true}, {Exposed: "fs_write"}}},
			{Server: "web", Tools: []ToolFacts{{Exposed: "web_get", ReadOnly: true}}},
			{Server: "shop", Down: "plugin down: no database"},
		}
	})
	if fail != nil {
		t.Fatal(fail.Message)
	}
	if want := (PluginScope{Connections: []string{"main"}, ReadOnly: true}); !reflect.DeepEqual(gotScope, want) {
		t.Errorf("scope given to the caller: %+v, want %+v", gotScope, want)
	}
	if !reflect.DeepEqual(res.Servers, []string{"fs", "shop"}) {
		t.Errorf("resolution: %v", res.Servers)
	}
	want := []Decision{
		{Tool: "fs_read", Server: "fs", Admitted: true, Rule: "admitted: server fs is in the session"},
		{Tool: "fs_write", Server: "fs", Rule: "read_only: tool is not annotated readOnlyHint: true"},
		{Tool: "web_get", Server: "web", Rule: "server not in agent ro's servers"},
		{Tool: "*", Server: "shop", Rule: "plugin down: no database"},
	}
	if !reflect.DeepEqual(ds, want) {
		t.Errorf("decisions:\n got %+v\nwant %+v", ds, want)
	}
}
