package admin_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// GET /api/settings shows the values in force; PUT changes them live (naming re-lists
// every server, so a new session sees the new names), refuses bad values with the field
// named, and refuses a stale If-Match.
func TestAdminSettings(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	a := g.API(t, http.MethodGet, "/api/settings", "", nil)
	if a.Status != http.StatusOK || a.Obj["source"] != "file" || a.Obj["handshake"] != "auto" || a.Obj["log_level"] != "debug" {
		t.Fatalf("GET /api/settings: %s", a)
	}
	etag := a.Header.Get("ETag")
	if etag == "" || etag != a.Obj["etag"] {
		t.Fatalf("ETag header %q, body etag %v", etag, a.Obj["etag"])
	}
	before := g.ToolNames(t, g.Initialize(t, "2025-11-25", ""))
	if len(before) == 0 || !strings.HasPrefix(before[0], "everything__") {
		t.Fatalf("tools before: %v", before)
	}

	for _, tc := range []struct{ body, field string }{
		{`{"session_idle_timeout":"soon"}`, "session_idle_timeout"},
		{`{"upstream_idle_timeout":"10ms"}`, "upstream_idle_timeout"},
		{`{"log_level":"loud"}`, "log_level"},
		{`{"handshake":"sometimes"}`, "http.handshake"},
		{`{"naming":{"prefix":"maybe"}}`, "naming.prefix"},
		{`{"colour":"blue"}`, "colour"},
	} {
		a := g.API(t, http.MethodPut, "/api/settings", tc.body, nil)
		fe := strings.Join(a.FieldErrors(), "; ")
		if a.Status != http.StatusBadRequest || !strings.Contains(fe, tc.field) {
			t.Errorf("PUT %s: %s, want 400 naming %s", tc.body, a, tc.field)
		}
	}

	a = g.API(t, http.MethodPut, "/api/settings", `{"naming":{"prefix":"always","separator":"--"},"handshake":"thin","log_level":"info","session_idle_timeout":"2h"}`,
		map[string]string{"If-Match": etag})
	if a.Status != http.StatusOK || a.Obj["source"] != "api" || a.Obj["handshake"] != "thin" || a.Obj["session_idle_timeout"] != "2h0m0s" {
		t.Fatalf("PUT /api/settings: %s", a)
	}
	if g.API(t, http.MethodPut, "/api/settings", `{}`, map[string]string{"If-Match": etag}).Status != http.StatusPreconditionFailed {
		t.Error("a PUT with the old ETag was not refused with 412")
	}
	var after []string
	for i := 0; i < 200; i++ { // the servers re-list in the background: bounded wait
		after = g.ToolNames(t, g.Initialize(t, "2025-11-25", ""))
		if len(after) > 0 && strings.HasPrefix(after[0], "everything--") {
			break
		}
		after = nil
		waitBriefly()
	}
	// handshake: thin is in force too: the thin list carries the gateway's describe tool.
	upstream := slices.DeleteFunc(slices.Clone(after), func(n string) bool { return n == "mcpgw__describe_tools" })
	if len(upstream) != len(before) || len(after) != len(before)+1 {
		t.Fatalf("after the settings change a new session lists %v (before %d tools)", after, len(before))
	}
	if slices.ContainsFunc(upstream, func(n string) bool { return strings.Contains(n, "__") }) {
		t.Errorf("old names left: %v", upstream)
	}
	if a := g.API(t, http.MethodGet, "/api/settings", "", nil); a.Obj["version"] != float64(1) || a.Obj["log_level"] != "info" {
		t.Errorf("GET after PUT: %s", a)
	}
}

// waitBriefly is one step of a bounded polling loop.
func waitBriefly() { time.Sleep(25 * time.Millisecond) }
