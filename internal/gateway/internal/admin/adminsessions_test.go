package admin_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestAdminSessionRows: GET /api/sessions answers every key in snake_case (as the rest of
// the admin API), last_seen is the session's last request (it moves with each call), and
// calls counts plugin tool calls as it counts upstream ones.
func TestAdminSessionRows(t *testing.T) {
	yaml, _ := gatewaytest.PluginConfig(t, "")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", "")

	row := func() map[string]any {
		t.Helper()
		a := g.API(t, "GET", "/api/sessions", "", nil)
		var rows []map[string]any
		if a.Status != 200 || json.Unmarshal(a.Raw, &rows) != nil {
			t.Fatalf("GET /api/sessions: %s", a)
		}
		for _, r := range rows {
			for k := range r {
				if !snakeKey.MatchString(k) {
					t.Errorf("GET /api/sessions: key %q is not snake_case (%v)", k, r)
				}
			}
			if r["id"] == sid {
				return r
			}
		}
		t.Fatalf("GET /api/sessions has no row with id %s: %s", sid, a)
		return nil
	}
	seen := func(r map[string]any) time.Time {
		t.Helper()
		at, err := time.Parse(time.RFC3339Nano, r["last_seen"].(string))
		if err != nil {
			t.Fatalf("last_seen %v: %v", r["last_seen"], err)
		}
		return at
	}

	before := row()
	for _, k := range []string{"id", "transport", "agent", "created", "last_seen", "calls", "live", "servers"} {
		if _, ok := before[k]; !ok {
			t.Errorf("the row has no %q: %v", k, before)
		}
	}
	if before["calls"] != float64(0) || before["live"] != true || before["transport"] != "streamable" {
		t.Errorf("a new session's row: %v", before)
	}
	// last_seen is nanoseconds apart from one request to the next; a few milliseconds
	// make the difference visible in RFC 3339 on every clock.
	time.Sleep(20 * time.Millisecond)
	if res := g.CallTool(t, sid, "shop_shop_v1_users_count", `{"connectionId":"main"}`); res.IsError {
		t.Fatalf("the plugin call: %s", res.Text())
	}
	afterPlugin := row()
	if afterPlugin["calls"] != float64(1) {
		t.Errorf("calls after one plugin call: %v, want 1", afterPlugin["calls"])
	}
	if !seen(afterPlugin).After(seen(before)) {
		t.Errorf("last_seen did not move with the call: %v then %v", before["last_seen"], afterPlugin["last_seen"])
	}
	time.Sleep(20 * time.Millisecond)
	if res := g.CallTool(t, sid, "everything__test_simple_text", `{}`); res.IsError {
		t.Fatalf("the upstream call: %s", res.Text())
	}
	after := row()
	if after["calls"] != float64(2) {
		t.Errorf("calls after a plugin and an upstream call: %v, want 2", after["calls"])
	}
	if !seen(after).After(seen(afterPlugin)) {
		t.Errorf("last_seen did not move with the second call: %v then %v", afterPlugin["last_seen"], after["last_seen"])
	}
	if servers, _ := after["servers"].([]any); !slices.Contains(servers, any("shop")) {
		t.Errorf("servers: %v", after["servers"])
	}

	// One session's page has the same keys, and its view.
	a := g.API(t, "GET", "/api/sessions/"+sid, "", nil)
	if a.Status != 200 || a.Obj["id"] != sid || a.Obj["calls"] != float64(2) || a.Obj["last_seen"] != after["last_seen"] {
		t.Errorf("GET /api/sessions/{id}: %s", a)
	}
	for k := range a.Obj {
		if !snakeKey.MatchString(k) {
			t.Errorf("GET /api/sessions/{id}: key %q is not snake_case", k)
		}
	}
}
