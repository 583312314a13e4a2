package gateway_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// A per-session server whose URL answers only through an executor's url_rewrite: the
// catalogue probe tries the rewritten URL when the original cannot be reached, so the
// server is up with its tools and the executor's sessions list them (their own instances
// use the rewrite, as before).
func TestURLRewriteReachesProbe(t *testing.T) {
	port := strings.TrimPrefix(strings.TrimSuffix(everythingURL, "/mcp"), "http://127.0.0.1:")
	g := startGateway(t, adminYAML+`
  behind:
    type: streamable_http
    url: http://127.0.0.1:1/mcp
    mode: per_session
    timeouts: {connect: 5s}
executors:
  box:
    type: local_docker
    mcp_policy: {url_rewrite: {"http://127.0.0.1:1": "http://127.0.0.1:`+port+`"}}
`)
	a := waitLive(t, g, "behind", "up")
	if live, _ := a.obj["live"].(map[string]any); live["tools"] == float64(0) {
		t.Errorf("behind is up with no tools: %s", a)
	}
	sid := g.initializeWith(t, map[string]string{"X-Agent-ID": "default", "X-Executor-ID": "box"})
	if names := waitToolsOf(t, g, sid); !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "behind__") }) {
		t.Errorf("a session of executor box lists %v, want behind's tools", names)
	}
	if r := g.api(t, http.MethodGet, "/api/servers/behind", "", nil); r.status != http.StatusOK {
		t.Errorf("GET /api/servers/behind: %s", r)
	}
}
