package embedded_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/embedded"
	"github.com/mcpgw/mcpgw/embedded/pluginkinds"
)

// TestPluginKindsOption: a host that supplies no plugin kinds cannot start a config with
// a sql plugin, and is told which kind it lacks; supplying the sql kind runs it.
func TestPluginKindsOption(t *testing.T) {
	sqlPlugin := "plugins:\n  shop: {type: sql, refresh: -1s, connections: {a: {driver: sqlite, dsn: ':memory:', database: a}}}\n"
	g, err := embedded.NewYAML(testConfig(t, "127.0.0.1:0", sqlPlugin), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = g.Start(context.Background())
	_ = g.Close()
	if err == nil || !strings.Contains(err.Error(), "plugins.shop") || !strings.Contains(err.Error(), "type sql is not built into this program") {
		t.Fatalf("Start without the sql kind: %v", err)
	}

	g, err = embedded.NewYAML(testConfig(t, "127.0.0.1:0", sqlPlugin), embedded.Options{ConnectWait: 10 * time.Second,
		PluginKinds: []embedded.PluginKind{pluginkinds.SQL()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(context.Background()); err != nil {
		t.Fatalf("Start with the sql kind: %v", err)
	}
}

// fakeKind is a PluginKind from outside the module.
type fakeKind struct{}

func (fakeKind) PluginKind() string { return "sql" }

// TestPluginKindsForeign: a kind not made by package pluginkinds is refused by Start.
func TestPluginKindsForeign(t *testing.T) {
	g, err := embedded.NewYAML(testConfig(t, "127.0.0.1:0", ""), embedded.Options{PluginKinds: []embedded.PluginKind{fakeKind{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "not one of package embedded/pluginkinds") {
		t.Fatalf("Start with a foreign kind: %v", err)
	}
}

// TestPluginKindsAll: All has the sql and command kinds.
func TestPluginKindsAll(t *testing.T) {
	var names []string
	for _, k := range pluginkinds.All() {
		names = append(names, k.PluginKind())
	}
	if strings.Join(names, ",") != "sql,command" {
		t.Fatalf("All: %v", names)
	}
}
