package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A session that initializes and never makes a request (a health check that never sends
// DELETE) ends after http.unused_session_timeout; one that made a request stays.
func TestUnusedSessionsEnd(t *testing.T) {
	g := startGateway(t, strings.Replace(baseConfig, "http: {", "http: {unused_session_timeout: 1s, ", 1))
	unused := g.initialize(t, "2025-11-25", "")
	used := g.initialize(t, "2025-11-25", "")
	if r := g.call(t, used, 1, "ping", "{}"); r.status != http.StatusOK {
		t.Fatalf("ping: HTTP %d %s", r.status, r.body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(g.log.String(), "session="+unused+" why=unused") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(g.log.String(), "session="+unused+" why=unused") {
		t.Fatalf("the unused session was not ended within 10 s")
	}
	if r := g.call(t, unused, 2, "tools/list", "{}"); r.status != http.StatusNotFound {
		t.Errorf("the ended unused session: HTTP %d, want 404", r.status)
	}
	if r := g.call(t, used, 3, "ping", "{}"); r.status != http.StatusOK {
		t.Errorf("the session that made a request was ended too: HTTP %d %s", r.status, r.body)
	}
}
