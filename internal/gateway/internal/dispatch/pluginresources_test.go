package dispatch_test

import (
	"bufio"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Plugin resources in the running gateway: resources/list and templates next to upstream
// resources, resources/read, subscribe/unsubscribe, and watch events as
// notifications/resources/updated only to the sessions that subscribed and may see them.

// getStream opens a session's GET stream and returns its messages (methods and params) as
// they arrive.
func getStream(g *gatewaytest.GW, t *testing.T, sid string) <-chan *wire.Msg {
	t.Helper()
	hr, err := http.NewRequest(http.MethodGet, g.Base+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Accept", "text/event-stream")
	for k, v := range gatewaytest.SessionHeaders(sid, "2025-11-25") {
		hr.Header.Set(k, v)
	}
	stream, err := gatewaytest.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stream.Body.Close() })
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: HTTP %d", stream.StatusCode)
	}
	out := make(chan *wire.Msg, 64)
	go func() {
		defer close(out)
		sr := wire.NewSSEReader(bufio.NewReader(stream.Body), 1<<20)
		for {
			ev, err := sr.Next()
			if err != nil {
				return
			}
			if m, err := wire.Parse(ev.Data); err == nil && m.Method != "" {
				out <- m
			}
		}
	}()
	return out
}

// updatedURI waits for the next notifications/resources/updated and returns its uri.
func updatedURI(t *testing.T, ch <-chan *wire.Msg, within time.Duration) string {
	t.Helper()
	uri, _ := updatedEvent(t, ch, within)
	return uri
}

// updatedEvent is updatedURI with the event the notification's _meta carries.
func updatedEvent(t *testing.T, ch <-chan *wire.Msg, within time.Duration) (string, map[string]string) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				t.Fatal("the GET stream ended")
			}
			if m.Method != "notifications/resources/updated" {
				continue
			}
			var p struct {
				URI  string `json:"uri"`
				Meta struct {
					Event map[string]string `json:"mcpgw/event"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(m.Params, &p)
			return p.URI, p.Meta.Event
		case <-deadline:
			return "", nil
		}
	}
}

func TestPluginResources(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, `
agents:
  all: {servers: [shop, everything]}
  scoped: {servers: [shop], connection_scope: [scratch]}
  reader: {servers: [shop], read_only: true}
  nolist: {servers: [shop], tools: {deny: ["shop_shop_v1_users_list", "shop_shop_v1_users_get"]}}
`)
	g := gatewaytest.Start(t, yaml)
	sid := g.InitAs(t, "all", "{}")
	const typeURI = "mcpgw+plugin://shop/main/shop/v1/users"
	const rowURI = typeURI + "/2"

	// resources/list: upstream resources as before, and one resource per plugin type.
	var list struct {
		Resources []struct {
			URI, Name, MimeType string
		} `json:"resources"`
		NextCursor string `json:"nextCursor"`
	}
	uris := map[string]bool{}
	for cursor := ""; ; {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":` + string(wire.Quote(cursor)) + `}`
		}
		r := g.Call(t, sid, 2, "resources/list", params)
		list.NextCursor = ""
		if err := json.Unmarshal(r.Message(t).Result, &list); err != nil {
			t.Fatalf("resources/list: %v %s", err, r.Body)
		}
		for _, res := range list.Resources {
			uris[res.URI] = true
		}
		if cursor = list.NextCursor; cursor == "" {
			break
		}
	}
	if !uris[typeURI] || !uris["mcpgw+plugin://shop/scratch/scratch/v1/users"] || !uris["test://static-text"] {
		t.Errorf("resources/list: %v", uris)
	}
	r := g.Call(t, sid, 3, "resources/templates/list", `{}`)
	if !strings.Contains(string(r.Body), `mcpgw+plugin://shop/main/shop/v1/users/{id}{?namespace}`) {
		t.Errorf("resources/templates/list: %s", r.Body)
	}

	// resources/read of a type (its first page) and of one row.
	read := func(sid, uri string) (string, *wire.ErrorObject) {
		m := g.Call(t, sid, 4, "resources/read", `{"uri":`+string(wire.Quote(uri))+`}`).Message(t)
		if m.Error != nil {
			var e wire.ErrorObject
			_ = json.Unmarshal(m.Error, &e)
			return "", &e
		}
		var res struct {
			Contents []struct{ URI, MimeType, Text string } `json:"contents"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MimeType != "application/json" {
			t.Fatalf("resources/read %s: %s", uri, m.Result)
		}
		return res.Contents[0].Text, nil
	}
	if txt, e := read(sid, typeURI); e != nil || !strings.Contains(txt, `"items":[`) || !strings.Contains(txt, `"ken"`) {
		t.Errorf("read type: %s %v", txt, e)
	}
	if txt, e := read(sid, rowURI+"?namespace=main"); e != nil || !strings.Contains(txt, `"grace"`) {
		t.Errorf("read row: %s %v", txt, e)
	}
	if _, e := read(sid, typeURI+"/99"); e == nil || e.Code != -32002 {
		t.Errorf("read a missing row: %+v", e)
	}
	if _, e := read(sid, "mcpgw+plugin://shop/main/shop/v1/users/1/extra"); e == nil || e.Code != wire.CodeInvalidParams {
		t.Errorf("read a malformed URI: %+v", e)
	}
	// A connection outside the scope, and a type whose read tools are denied, are not there.
	scoped := g.InitAs(t, "scoped", "{}")
	if _, e := read(scoped, rowURI); e == nil || e.Code != -32002 {
		t.Errorf("scoped session reads main: %+v", e)
	}
	if _, e := read(scoped, "mcpgw+plugin://shop/scratch/scratch/v1/users/2"); e != nil {
		t.Errorf("scoped session reads scratch: %+v", e)
	}
	nolist := g.InitAs(t, "nolist", "{}")
	if _, e := read(nolist, typeURI); e == nil || e.Code != -32002 {
		t.Errorf("a session without the list tool reads the type: %+v", e)
	}

	// Subscriptions: the subscribed sessions hear of a write; others do not.
	reader := g.InitAs(t, "reader", "{}")
	mine, theirs, readers := getStream(g, t, sid), getStream(g, t, scoped), getStream(g, t, reader)
	for _, c := range []struct{ sid, uri string }{{sid, rowURI}, {reader, typeURI}} {
		if m := g.Call(t, c.sid, 5, "resources/subscribe", `{"uri":`+string(wire.Quote(c.uri))+`}`).Message(t); m.Error != nil {
			t.Fatalf("subscribe %s: %s", c.uri, m.Error)
		}
	}
	if m := g.Call(t, scoped, 5, "resources/subscribe", `{"uri":`+string(wire.Quote(rowURI))+`}`).Message(t); m.Error == nil {
		t.Error("a scoped session subscribed to a connection outside its scope")
	}
	// A write to another row reaches the type's subscriber only; a write to row 2 both.
	if res := g.CallTool(t, sid, "shop_shop_v1_users_update", `{"connectionId":"main","id":"3","age":29}`); res.IsError {
		t.Fatal(res.Text())
	}
	if u := updatedURI(t, readers, 10*time.Second); u != typeURI {
		t.Errorf("type subscriber: updated %q", u)
	}
	if res := g.CallTool(t, sid, "shop_shop_v1_users_update", `{"connectionId":"main","id":"2","age":86}`); res.IsError {
		t.Fatal(res.Text())
	}
	if u, ev := updatedEvent(t, mine, 10*time.Second); u != rowURI {
		t.Errorf("row subscriber: updated %q (the row 3 update must not have reached it)", u)
	} else if ev["type"] != "UPDATE" || ev["id"] != "2" || ev["connection"] != "main" || ev["resourceType"] != "shop::v1::users" {
		t.Errorf("row subscriber: the event in _meta is %v, want an UPDATE of row 2 of shop::v1::users on main", ev)
	} else if ev["plugin"] != "shop" || ev["connectionId"] != "main" || ev["resourceKey"] != "shop::v1::users" || ev["eventType"] != "UPDATE" {
		// The design's names (plugin id, connectionId, resource key) beside the first ones.
		t.Errorf("row subscriber: the event in _meta is %v, want plugin shop, connectionId main, resourceKey shop::v1::users, eventType UPDATE", ev)
	}
	if u := updatedURI(t, readers, 10*time.Second); u != typeURI {
		t.Errorf("type subscriber: updated %q", u)
	}
	// After unsubscribing, the next write reaches only the type's subscriber; the scoped
	// session heard nothing at all (checked after that write was delivered to the reader).
	g.Call(t, sid, 6, "resources/unsubscribe", `{"uri":`+string(wire.Quote(rowURI))+`}`)
	if res := g.CallTool(t, sid, "shop_shop_v1_users_delete", `{"connectionId":"main","id":"2","confirm":true}`); res.IsError {
		t.Fatal(res.Text())
	}
	if u, ev := updatedEvent(t, readers, 10*time.Second); u != typeURI {
		t.Errorf("type subscriber after delete: %q", u)
	} else if ev["type"] != "DELETE" || ev["id"] != "2" {
		t.Errorf("type subscriber after delete: the event in _meta is %v, want a DELETE of row 2", ev)
	}
	if u := updatedURI(t, mine, 500*time.Millisecond); u != "" {
		t.Errorf("an unsubscribed session was told of %s", u)
	}
	if u := updatedURI(t, theirs, 0); u != "" {
		t.Errorf("a session that never subscribed was told of %s", u)
	}

	// Subscriptions per session are bounded.
	var last *wire.Msg
	for i := 0; i < 101; i++ {
		last = g.Call(t, reader, 7, "resources/subscribe", `{"uri":"`+typeURI+`/`+string(rune('a'+i%26))+strings.Repeat("x", i)+`"}`).Message(t)
	}
	if last.Error == nil || !strings.Contains(string(last.Error), "http.max_subscriptions_per_session") {
		t.Errorf("the 101st subscription: %s", last.Error)
	}
}

func TestPluginResourceCompletionIsEmpty(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, "")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", "")
	m := g.Call(t, sid, 2, "completion/complete", `{"ref":{"type":"ref/resource","uri":"mcpgw+plugin://shop/main/shop/v1/users/{id}{?namespace}"},"argument":{"name":"id","value":"1"}}`).Message(t)
	if m.Error != nil || !strings.Contains(string(m.Result), `"values":[]`) {
		t.Errorf("completion of a plugin template: %s %s", m.Result, m.Error)
	}
}

// A subscription outlives a plugin reload (the watch subscribes again and says the type
// changed, since events may have been missed), and stops delivering to a session whose
// view lost the connection.
func TestPluginSubscriptionAcrossReload(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, `
agents:
  watcher: {servers: [shop]}
  admin: {servers: [shop]}
`)
	g := gatewaytest.Start(t, yaml)
	const typeURI = "mcpgw+plugin://shop/main/shop/v1/users"
	w, a := g.InitAs(t, "watcher", "{}"), g.InitAs(t, "admin", "{}")
	ws, as := getStream(g, t, w), getStream(g, t, a)
	for _, sid := range []string{w, a} {
		if m := g.Call(t, sid, 5, "resources/subscribe", `{"uri":"`+typeURI+`"}`).Message(t); m.Error != nil {
			t.Fatalf("subscribe: %s", m.Error)
		}
	}

	// The plugin's definition changes: it is replaced, its provider closed.
	file := *g.Gateway.FileConfig()
	file.Plugins = maps.Clone(file.Plugins)
	d := *file.Plugins["shop"]
	d.Refresh = 150 * time.Millisecond
	file.Plugins["shop"] = &d
	if err := g.Gateway.ReloadFile(&file); err != nil {
		t.Fatal(err)
	}
	if u := updatedURI(t, ws, 15*time.Second); u != typeURI {
		t.Fatalf("after the plugin was replaced: updated %q, want %s", u, typeURI)
	}
	updatedURI(t, as, 15*time.Second)
	// The watch is on the new provider: a write through it reaches the subscriber. (The
	// tool is retried while the new plugin loads.)
	var res gatewaytest.ToolResult
	for i := 0; i < 100; i++ {
		if res = g.CallTool(t, a, "shop_shop_v1_users_update", `{"connectionId":"main","id":"1","age":37}`); !res.IsError {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res.IsError {
		t.Fatalf("update after the reload: %s", res.Text())
	}
	if u := updatedURI(t, ws, 15*time.Second); u != typeURI {
		t.Fatalf("a write after the reload: updated %q", u)
	}
	updatedURI(t, as, 15*time.Second)

	// The watcher's scope is narrowed to scratch: it hears nothing more of main.
	file2 := *g.Gateway.FileConfig()
	file2.Agents = maps.Clone(file2.Agents)
	ag := *file2.Agents["watcher"]
	ag.ConnectionScope = []string{"scratch"}
	file2.Agents["watcher"] = &ag
	if err := g.Gateway.ReloadFile(&file2); err != nil {
		t.Fatal(err)
	}
	if res := g.CallTool(t, a, "shop_shop_v1_users_update", `{"connectionId":"main","id":"1","age":38}`); res.IsError {
		t.Fatal(res.Text())
	}
	if u := updatedURI(t, as, 15*time.Second); u != typeURI {
		t.Fatalf("admin after the scope change: updated %q", u)
	}
	if u := updatedURI(t, ws, 500*time.Millisecond); u != "" {
		t.Errorf("a session scoped away from main was told of %s", u)
	}
}
