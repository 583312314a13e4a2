package dispatch_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// searchToolDescription is the description of the search tool on session sid's search-form
// list, and the list's bytes.
func searchToolDescription(t *testing.T, g *gatewaytest.GW, sid string) (string, []byte) {
	t.Helper()
	m := g.Call(t, sid, 5, "tools/list", "{}").Message(t)
	var res struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil {
		t.Fatalf("tools/list: %s %s", m.Error, m.Result)
	}
	for _, tl := range res.Tools {
		if tl.Name == "mcpgw__search_tools" {
			return tl.Description, m.Result
		}
	}
	t.Fatalf("no search tool on a search-form list: %s", m.Result)
	return "", nil
}

// The search form's search tool carries the map of the session's view: the servers and
// groups its agent may see (a plugin's table by name), the same bytes for every session of
// the same view and on every re-list, and another map for an agent whose rules hide a
// server's tools.
func TestSearchToolCarriesCatalogueMap(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, `
agents:
  wide: {servers: [shop, everything], handshake: search}
  narrow: {servers: [shop, everything], handshake: search, tools: {deny: ["shop_*"]}}
`)
	g := gatewaytest.Start(t, yaml)
	wide1 := g.InitAs(t, "wide", "{}")
	wide2 := g.InitAs(t, "wide", "{}")
	narrow := g.InitAs(t, "narrow", "{}")

	d1, list1 := searchToolDescription(t, g, wide1)
	_, again := searchToolDescription(t, g, wide1)
	d2, list2 := searchToolDescription(t, g, wide2)
	dn, _ := searchToolDescription(t, g, narrow)
	const lead = "\nThe catalogue (server: its groups of tools), whose words make good queries: "
	_, wideMap, ok := strings.Cut(d1, lead)
	if !ok || !strings.Contains(wideMap, "shop: users") || !strings.Contains(wideMap, "everything: ") {
		t.Fatalf("wide agent's search tool: %q", d1)
	}
	if !bytes.Equal(list1, again) || !bytes.Equal(list1, list2) || d1 != d2 {
		t.Errorf("two lists of one view differ:\n%s\n%s\n%s", list1, again, list2)
	}
	_, narrowMap, ok := strings.Cut(dn, lead)
	if !ok || strings.Contains(narrowMap, "shop") || !strings.Contains(narrowMap, "everything: ") {
		t.Errorf("narrow agent (shop's tools denied) sees the map %q", narrowMap)
	}
	t.Logf("wide: %s\nnarrow: %s", wideMap, narrowMap)
	if narrowMap == wideMap {
		t.Errorf("agents with different rules share one map: %q", wideMap)
	}
}
