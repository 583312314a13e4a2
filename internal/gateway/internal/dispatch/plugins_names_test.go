package dispatch_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestPluginLongNamesKeepOperation: a table whose tools' names are over the 64-byte limit
// gets names cut in the middle, each keeping its operation at its end
// (shop_shop_v1_cluster_wide_…_1a2b3c4d_get), all distinct and callable.
func TestPluginLongNamesKeepOperation(t *testing.T) {
	yaml, dbPath := gatewaytest.PluginConfig(t, "")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", "")
	const table = "cluster_wide_widget_configuration_policies_of_the_platform"
	gatewaytest.ExecSQL(t, dbPath, `CREATE TABLE `+table+` (id INTEGER PRIMARY KEY, name TEXT)`)
	const prefix = "shop_shop_v1_cluster_wide"
	var long []string
	deadline := time.Now().Add(10 * time.Second)
	for len(long) < 8 && time.Now().Before(deadline) {
		long = long[:0]
		for _, n := range g.ToolNames(t, sid) {
			if strings.HasPrefix(n, prefix) {
				long = append(long, n)
			}
		}
		if len(long) < 8 {
			time.Sleep(50 * time.Millisecond) // polls the list until the plugin's refresh (100ms) shows the table, bounded
		}
	}
	ops := []string{"get", "list", "find", "create", "update", "delete", "count", "truncate"}
	for _, op := range ops {
		if !slices.ContainsFunc(long, func(n string) bool { return strings.HasSuffix(n, "_"+op) && len(n) <= 64 }) {
			t.Errorf("no tool of the long table ends with its operation _%s: %v", op, long)
		}
	}
	var count string
	for _, n := range long {
		if strings.HasSuffix(n, "_count") {
			count = n
		}
	}
	if count != "" {
		if res := g.CallTool(t, sid, count, `{"connectionId":"main"}`); res.IsError {
			t.Errorf("calling %s: %s", count, res.Text())
		}
	}
	t.Logf("long names: %v", long)
}
