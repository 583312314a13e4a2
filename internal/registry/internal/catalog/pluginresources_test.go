package catalog

import (
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/plugin"
)

func TestPluginURIRoundTrip(t *testing.T) {
	for _, r := range []PluginRef{
		{Plugin: "shop", Conn: "prod-db", Key: "shop::v1::users"},
		{Plugin: "shop", Conn: "prod-db", Key: "shop::v1::users", ID: "42"},
		{Plugin: "shop", Conn: "pg", Key: "shop::v1::audit.log", ID: "a/b?c#d e%", Namespace: "audit"},
		{Plugin: "k8s", Conn: "c1", Key: "apps::v1::Deployment", ID: "web", Namespace: "default"},
		{Plugin: "sql", Conn: "x", Key: `db::v1::odd "name`, ID: "é"},
	} {
		u := r.URI()
		if !IsPluginURI(u) {
			t.Errorf("%s is not a plugin URI", u)
		}
		got, err := ParsePluginURI(u)
		if err != nil || got != r {
			t.Errorf("%+v -> %s -> %+v, %v", r, u, got, err)
		}
	}
	if u := (PluginRef{Plugin: "shop", Conn: "main", Key: "shop::v1::users", ID: "2", Namespace: "main"}).URI(); u != "mcpgw+plugin://shop/main/shop/v1/users/2?namespace=main" {
		t.Errorf("URI: %s", u)
	}
	for _, bad := range []string{
		"mcpgw+plugin:shop/main/shop/v1/users",
		"mcpgw+plugin://shop/main/shop/v1",
		"mcpgw+plugin://shop/main/shop/v1/users/1/2",
		"mcpgw+plugin://shop//shop/v1/users",
		"mcpgw+plugin://shop/main/shop/v1/users?x=1",
		"mcpgw+plugin://shop/main/shop/v1/users%ZZ",
		"mcpgw+plugin://shop/main/a::b/v1/users",
		"mcpgw+plugin://shop/main/shop/v1/users#frag",
		"file:///etc/passwd",
	} {
		if _, err := ParsePluginURI(bad); err == nil || !strings.Contains(err.Error(), "is not a plugin resource URI") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestPluginRefMatches(t *testing.T) {
	typ := PluginRef{Plugin: "p", Conn: "c", Key: "g::v1::k"}
	row := PluginRef{Plugin: "p", Conn: "c", Key: "g::v1::k", ID: "1", Namespace: "public"}
	ev := func(id, ns string) plugin.Event {
		return plugin.Event{Type: plugin.EventUpdate, Connection: "c", Key: "g::v1::k", ID: id, Namespace: ns}
	}
	for _, c := range []struct {
		ref  PluginRef
		e    plugin.Event
		want bool
	}{
		{typ, ev("1", "public"), true},
		{typ, ev("", ""), true},
		{row, ev("1", "public"), true},
		{row, ev("1", ""), true},
		{row, ev("", "public"), true}, // a truncate concerns every row
		{row, ev("2", "public"), false},
		{row, ev("1", "audit"), false},
		{typ, plugin.Event{Connection: "other", Key: "g::v1::k"}, false},
		{typ, plugin.Event{Connection: "c", Key: "g::v1::other"}, false},
	} {
		if got := c.ref.Matches(c.e); got != c.want {
			t.Errorf("%+v matches %+v: %v, want %v", c.ref, c.e, got, c.want)
		}
	}
}
