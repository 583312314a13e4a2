package gateway_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// An executor's env_injection is the executor's policy: its value wins over the server's
// own env, unless the server says allow_env_override: true (then the server's own value
// stays), and an executor with env_injection_overrides_server: true wins even then. The
// session's resolution (what its per-session instances start with) shows it.
func TestEnvInjectionPolicyWins(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+`
  tool:
    type: stdio
    command: /bin/true
    env: {TOKEN: server-value, OWN: mine}
  keep:
    type: stdio
    command: /bin/true
    env: {TOKEN: server-value}
    allow_env_override: true
executors:
  box:
    type: local_docker
    mcp_policy: {env_injection: {TOKEN: policy-value, PROXY: "http://proxy:3128"}}
  force:
    type: local_docker
    mcp_policy: {env_injection: {TOKEN: policy-value}, env_injection_overrides_server: true}
`)
	for _, tc := range []struct{ executor, server, want string }{
		{"box", "tool", "policy-value"},
		{"box", "keep", ""}, // no override: the server's own value
		{"force", "tool", "policy-value"},
		{"force", "keep", "policy-value"},
	} {
		v, fail := g.Gateway.Explain("default", "", tc.executor)
		if fail != nil {
			t.Fatalf("explain with executor %s: %v", tc.executor, fail)
		}
		if got := v.Overrides[tc.server].Env["TOKEN"]; got != tc.want {
			t.Errorf("executor %s, server %s: TOKEN injected as %q, want %q", tc.executor, tc.server, got, tc.want)
		}
	}
	// Saving an executor says which server's own value its injection replaces (a config
	// written for the old rule, where the server's value won, finds out here).
	a := g.API(t, http.MethodPut, "/api/executors/new", `{"type":"local_pc","mcp_policy":{"env_injection":{"TOKEN":"v"}}}`, g.LocalAuth(t))
	want := `executors.new.mcp_policy.env_injection: replaces TOKEN of server "tool": its sessions get the executor's value, not servers.tool.env.TOKEN`
	if a.Status != http.StatusCreated || !slices.Contains(a.Warnings(), want) || strings.Contains(string(a.Raw), `server \"keep\"`) {
		t.Errorf("PUT of an executor injecting TOKEN: %s, want the warning %q (and none for keep)", a, want)
	}
	// The API reads and writes the server's flag.
	body := `{"name":"api","type":"stdio","command":"/bin/true","env":{"TOKEN":"x"},"allow_env_override":true}`
	if a := g.API(t, http.MethodPost, "/api/servers", body, g.LocalAuth(t)); a.Status != http.StatusCreated || a.Obj["allow_env_override"] != true {
		t.Fatalf("POST a server with allow_env_override: %s", a)
	}
	if v, _ := g.Gateway.Explain("default", "", "box"); v == nil || v.Overrides["api"].Env["TOKEN"] != "" {
		t.Errorf("the API server's allow_env_override is not applied: %+v", v)
	}
}
