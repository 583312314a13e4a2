package gateway_test

import (
	"strings"
	"testing"
)

// TestPluginFindTakesFilters: a find tool takes its predicates as filter or, under the
// name the original product request gave them, filters; both at once is refused.
func TestPluginFindTakesFilters(t *testing.T) {
	yaml, _ := pluginConfig(t, "")
	g := startGateway(t, yaml)
	sid := g.initialize(t, "2025-11-25", "")
	g.toolNames(t, sid)
	const pred = `[{"field":"team","operator":"eq","value":"kernel"}]`
	for _, arg := range []string{"filter", "filters"} {
		res := g.callTool(t, sid, "shop_shop_v1_users_find", `{"connectionId":"main","`+arg+`":`+pred+`}`)
		if res.IsError || !strings.Contains(res.text(), "linus") || strings.Contains(res.text(), "ada") {
			t.Errorf("find with %s: isError %v %s; want linus alone", arg, res.IsError, res.text())
		}
	}
	res := g.callTool(t, sid, "shop_shop_v1_users_find", `{"connectionId":"main","filter":`+pred+`,"filters":[]}`)
	if !res.IsError || !strings.Contains(res.text(), "not both") {
		t.Errorf("find with filter and filters: isError %v %s; want a refusal naming both", res.IsError, res.text())
	}
}
