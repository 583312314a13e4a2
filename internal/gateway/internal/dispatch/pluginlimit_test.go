package dispatch_test

import (
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// TestPluginResultsAreBounded: upstream.max_message_bytes bounds a plugin's results as it
// bounds an upstream's messages, for a tool call (an isError result) and for resources/read
// of a plugin URI (an error), both naming the setting and its value; smaller results pass.
func TestPluginResultsAreBounded(t *testing.T) {
	yaml, db := gatewaytest.PluginConfig(t, `upstream: {max_message_bytes: 4096}
agents:
  all: {servers: [shop]}
`)
	g := gatewaytest.Start(t, yaml)
	sid := g.InitAs(t, "all", "{}")
	conn, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(`INSERT INTO users (id, name) VALUES (100, ?)`, strings.Repeat("x", 64<<10)); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	m := g.Call(t, sid, 2, "tools/call", `{"name":"shop_shop_v1_users_get","arguments":{"connectionId":"main","id":"100"}}`).Message(t)
	if m.Error != nil || !strings.Contains(string(m.Result), `"isError":true`) || !strings.Contains(string(m.Result), "upstream.max_message_bytes") ||
		!strings.Contains(string(m.Result), "4096") {
		t.Errorf("a 64 KiB row's get under a 4096-byte bound: %s %s", m.Result, m.Error)
	}
	m = g.Call(t, sid, 3, "tools/call", `{"name":"shop_shop_v1_users_get","arguments":{"connectionId":"main","id":"1"}}`).Message(t)
	if strings.Contains(string(m.Result), `"isError":true`) || !strings.Contains(string(m.Result), "ada") {
		t.Errorf("a small row's get: %s", m.Result)
	}

	read := func(id int, uri string) *wire.Msg {
		return g.Call(t, sid, id, "resources/read", `{"uri":`+string(wire.Quote(uri))+`}`).Message(t)
	}
	m = read(4, "mcpgw+plugin://shop/main/shop/v1/users/100")
	var e wire.ErrorObject
	_ = json.Unmarshal(m.Error, &e)
	if m.Error == nil || !strings.Contains(e.Message, "upstream.max_message_bytes") || !strings.Contains(e.Message, "4096") {
		t.Errorf("resources/read of the 64 KiB row: %s %s", m.Result, m.Error)
	}
	if m = read(5, "mcpgw+plugin://shop/main/shop/v1/users/1"); m.Error != nil || !strings.Contains(string(m.Result), "ada") {
		t.Errorf("resources/read of a small row: %s %s", m.Result, m.Error)
	}
}
