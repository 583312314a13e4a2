package dispatch_test

import (
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// TestPluginFindTakesFilters: a find tool takes its predicates as filter or, under the
// name the original product request gave them, filters; both at once is refused.
func TestPluginFindTakesFilters(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, "")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", "")
	g.ToolNames(t, sid)
	const pred = `[{"field":"team","operator":"eq","value":"kernel"}]`
	for _, arg := range []string{"filter", "filters"} {
		res := g.CallTool(t, sid, "shop_shop_v1_users_find", `{"connectionId":"main","`+arg+`":`+pred+`}`)
		if res.IsError || !strings.Contains(res.Text(), "linus") || strings.Contains(res.Text(), "ada") {
			t.Errorf("find with %s: isError %v %s; want linus alone", arg, res.IsError, res.Text())
		}
	}
	res := g.CallTool(t, sid, "shop_shop_v1_users_find", `{"connectionId":"main","filter":`+pred+`,"filters":[]}`)
	if !res.IsError || !strings.Contains(res.Text(), "not both") {
		t.Errorf("find with filter and filters: isError %v %s; want a refusal naming both", res.IsError, res.Text())
	}
}
