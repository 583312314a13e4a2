package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// A session that initializes and never makes a request (a health check that never sends
// DELETE) ends after http.unused_session_timeout; one that made a request stays.
func TestUnusedSessionsEnd(t *testing.T) {
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.BaseConfig, "http: {", "http: {unused_session_timeout: 1s, ", 1))
	unused := g.Initialize(t, "2025-11-25", "")
	used := g.Initialize(t, "2025-11-25", "")
	if r := g.Call(t, used, 1, "ping", "{}"); r.Status != http.StatusOK {
		t.Fatalf("ping: HTTP %d %s", r.Status, r.Body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(g.Log.String(), "session="+unused+" why=unused") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(g.Log.String(), "session="+unused+" why=unused") {
		t.Fatalf("the unused session was not ended within 10 s")
	}
	if r := g.Call(t, unused, 2, "tools/list", "{}"); r.Status != http.StatusNotFound {
		t.Errorf("the ended unused session: HTTP %d, want 404", r.Status)
	}
	if r := g.Call(t, used, 3, "ping", "{}"); r.Status != http.StatusOK {
		t.Errorf("the session that made a request was ended too: HTTP %d %s", r.Status, r.Body)
	}
}
