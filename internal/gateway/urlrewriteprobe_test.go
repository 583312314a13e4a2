package gateway_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// A per-session server whose URL answers only through an executor's url_rewrite: the
// catalogue probe tries the rewritten URL when the original cannot be reached, so the
// server is up with its tools and the executor's sessions list them (their own instances
// use the rewrite, as before).
func TestURLRewriteReachesProbe(t *testing.T) {
	port := strings.TrimPrefix(strings.TrimSuffix(gatewaytest.EverythingURL(), "/mcp"), "http://127.0.0.1:")
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+`
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
	a := gatewaytest.WaitLive(t, g, "behind", "up")
	if live, _ := a.Obj["live"].(map[string]any); live["tools"] == float64(0) {
		t.Errorf("behind is up with no tools: %s", a)
	}
	sid := g.InitializeWith(t, map[string]string{"X-Agent-ID": "default", "X-Executor-ID": "box"})
	if names := gatewaytest.WaitToolsOf(t, g, sid); !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "behind__") }) {
		t.Errorf("a session of executor box lists %v, want behind's tools", names)
	}
	if r := g.API(t, http.MethodGet, "/api/servers/behind", "", nil); r.Status != http.StatusOK {
		t.Errorf("GET /api/servers/behind: %s", r)
	}
}
