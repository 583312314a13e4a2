package e2e

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestExecutorDenylist: an executor's denylist removes a server from its sessions (its
// tools are neither listed nor callable) while a session of another executor keeps it,
// and /api/resolve says why. A hyphenated streamable-http server is caught by
// allow_streamable_http: false like any other spelling.
func TestExecutorDenylist(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	webURL := startEverythingHTTP(t)
	g := startGateway(t, `
log: {level: info, format: text}
servers:
  everything: {type: stdio, command: {{everything_server}}}
  web: {type: streamable_http, url: `+yamlQuote(webURL)+`}
  hyph: {type: streamable-http, url: `+yamlQuote(webURL)+`}
executors:
  sandbox: {type: local_docker, mcp_policy: {denylist_servers: [web]}}
  nohttp: {type: remote_vps, mcp_policy: {allow_streamable_http: false}}
  open: {type: local_pc}
`)
	count := func(names []string, prefix string) int {
		n := 0
		for _, s := range names {
			if strings.HasPrefix(s, prefix) {
				n++
			}
		}
		return n
	}
	open := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Executor-ID": "open"})
	if names := open.tools(t); count(names, "web__") == 0 || count(names, "hyph__") == 0 || count(names, "everything__") == 0 {
		t.Fatalf("executor open lists %v", names)
	}
	sb := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Executor-ID": "sandbox"})
	names := sb.tools(t)
	if count(names, "web__") != 0 || count(names, "everything__") == 0 || count(names, "hyph__") == 0 {
		t.Errorf("executor sandbox (denylist web) lists %v", names)
	}
	if r := sb.callTool(t, "web__test_simple_text", nil); r.Reply == nil || r.Reply.Error == nil || !strings.Contains(r.Reply.Error.Message, "Unknown tool") {
		t.Errorf("executor sandbox calling a denied server's tool: %s", r)
	}
	nh := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "a1", "X-Executor-ID": "nohttp"})
	if names := nh.tools(t); count(names, "web__") != 0 || count(names, "hyph__") != 0 || count(names, "everything__") == 0 {
		t.Errorf("executor nohttp (allow_streamable_http: false) lists %v", names)
	}

	a := rawRequest(t, http.MethodGet, g.Base+"/api/resolve?agent=a1&executor=sandbox", nil, "")
	var res struct {
		Servers []struct {
			Name string `json:"name"`
		} `json:"servers"`
		Warnings []string `json:"warnings"`
	}
	if a.Status != http.StatusOK || json.Unmarshal(a.Body, &res) != nil {
		t.Fatalf("GET /api/resolve: %s", a)
	}
	var got []string
	for _, s := range res.Servers {
		got = append(got, s.Name)
	}
	if !slices.Equal(got, []string{"everything", "hyph"}) || !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, `"web"`) && strings.Contains(w, "denylist") }) {
		t.Errorf("/api/resolve for sandbox: servers %v warnings %q", got, res.Warnings)
	}
}
