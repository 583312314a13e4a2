package subscriptions_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Resource subscriptions are bounded: a session, an agent's sessions together, and the
// length of one URI. Without the bounds one client held 100 subscriptions of 1 MiB URIs
// each (119 MB of heap) for as long as its session lived, in each of its sessions.

// subscribe sends resources/subscribe for uri on session sid of agent ("": none named)
// and returns the answer.
func subscribe(t *testing.T, g *gatewaytest.GW, agent, sid, uri string) *wire.Msg {
	t.Helper()
	h := gatewaytest.SessionHeaders(sid, "2025-11-25")
	if agent != "" {
		h["X-Agent-ID"] = agent
	}
	return g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":9,"method":"resources/subscribe","params":{"uri":` + string(wire.Quote(uri)) + `}}`, Header: h}).Message(t)
}

// wantLimitError checks m is a -32602 error that names setting.
func wantLimitError(t *testing.T, what string, m *wire.Msg, setting string) {
	t.Helper()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if m.Error == nil {
		t.Errorf("%s: accepted, want an error naming %s", what, setting)
		return
	}
	if err := json.Unmarshal(m.Error, &e); err != nil {
		t.Fatalf("%s: error %s: %v", what, m.Error, err)
	}
	if e.Code != wire.CodeInvalidParams || !strings.Contains(e.Message, setting) {
		t.Errorf("%s: error %d %q, want %d naming %s", what, e.Code, e.Message, wire.CodeInvalidParams, setting)
	}
}

func TestSubscriptionsBoundedPerSession(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig) // the defaults: 100 per session, URIs of 8 KiB
	sid := g.Initialize(t, "2025-11-25", "")
	long := "test://template/" + strings.Repeat("x", 8<<10) + "/data"
	wantLimitError(t, "a URI over 8 KiB", subscribe(t, g, "", sid, long), "http.max_uri_bytes")
	for i := range 100 {
		if m := subscribe(t, g, "", sid, fmt.Sprintf("test://template/%d/data", i)); m.Error != nil {
			t.Fatalf("subscription %d: %s", i+1, m.Error)
		}
	}
	// Subscribing again to a URI it holds is no new subscription.
	if m := subscribe(t, g, "", sid, "test://template/7/data"); m.Error != nil {
		t.Errorf("subscribing again: %s", m.Error)
	}
	wantLimitError(t, "the 101st subscription", subscribe(t, g, "", sid, "test://template/100/data"), "http.max_subscriptions_per_session")
	// Unsubscribing makes room.
	if m := g.Call(t, sid, 10, "resources/unsubscribe", `{"uri":"test://template/0/data"}`).Message(t); m.Error != nil {
		t.Fatalf("unsubscribe: %s", m.Error)
	}
	if m := subscribe(t, g, "", sid, "test://template/100/data"); m.Error != nil {
		t.Errorf("after an unsubscribe: %s", m.Error)
	}
}

func TestSubscriptionsBoundedPerAgent(t *testing.T) {
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.BaseConfig, "page_size: 7}",
		"page_size: 7, max_subscriptions_per_session: 3, max_subscriptions_per_agent: 4, max_uri_bytes: 256}", 1))
	a1, a2, b := g.InitializeAs(t, "a"), g.InitializeAs(t, "a"), g.InitializeAs(t, "b")
	wantLimitError(t, "a URI over 256 bytes", subscribe(t, g, "a", a1, "test://template/"+strings.Repeat("x", 256)+"/data"), "http.max_uri_bytes")
	for i := range 3 {
		if m := subscribe(t, g, "a", a1, fmt.Sprintf("test://template/a1-%d/data", i)); m.Error != nil {
			t.Fatalf("a1 subscription %d: %s", i+1, m.Error)
		}
	}
	if m := subscribe(t, g, "a", a2, "test://template/a2-0/data"); m.Error != nil {
		t.Fatalf("a2's first subscription: %s", m.Error)
	}
	wantLimitError(t, "agent a's fifth subscription", subscribe(t, g, "a", a2, "test://template/a2-1/data"), "http.max_subscriptions_per_agent")
	// Another agent is not held by a's subscriptions.
	if m := subscribe(t, g, "b", b, "test://template/b-0/data"); m.Error != nil {
		t.Errorf("agent b: %s", m.Error)
	}
	// A session that ends gives its agent's subscriptions back.
	if r := g.Do(t, gatewaytest.Req{Method: "DELETE", Header: map[string]string{"Mcp-Session-Id": a1, "MCP-Protocol-Version": "2025-11-25", "X-Agent-ID": "a"}}); r.Status >= 300 {
		t.Fatalf("DELETE a1: HTTP %d %s", r.Status, r.Body)
	}
	if m := subscribe(t, g, "a", a2, "test://template/a2-1/data"); m.Error != nil {
		t.Errorf("after a1 ended: %s", m.Error)
	}

	// A stateless listen is held to the same bounds.
	uris := make([]string, 4)
	for i := range uris {
		uris[i] = string(wire.Quote(fmt.Sprintf("test://template/l-%d/data", i)))
	}
	r := g.Do(t, gatewaytest.StatelessReq("subscriptions/listen", `{"notifications":{"resourceSubscriptions":[`+strings.Join(uris, ",")+`]},`+gatewaytest.StatelessMeta+`}`, nil))
	wantLimitError(t, "a listen naming 4 URIs", r.Message(t), "http.max_subscriptions_per_session")
	r = g.Do(t, gatewaytest.StatelessReq("subscriptions/listen", `{"notifications":{"resourceSubscriptions":["test://template/`+strings.Repeat("y", 256)+`/data"]},`+gatewaytest.StatelessMeta+`}`, nil))
	wantLimitError(t, "a listen naming a long URI", r.Message(t), "http.max_uri_bytes")
}
