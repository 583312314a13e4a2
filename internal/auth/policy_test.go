package auth

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// policyConfig is a config with one server of each way of writing a transport, and one
// executor whose policy is the YAML given.
func policyConfig(t *testing.T, policy string) *config.Config {
	t.Helper()
	src := `listen: 127.0.0.1:0
store: memory
servers:
  std:   {type: stdio, command: /bin/true}
  http:  {type: http, url: "http://127.0.0.1:9/mcp"}
  shttp: {type: streamable_http, url: "http://127.0.0.1:9/mcp"}
  hyph:  {type: streamable-http, url: "http://127.0.0.1:9/mcp"}
  camel: {type: streamableHttp, url: "http://127.0.0.1:9/mcp"}
  sse:   {type: sse, url: "http://127.0.0.1:9/sse"}
executors:
  ex:
    type: local_pc
    mcp_policy: ` + policy + `
`
	cfg, _, err := config.Parse([]byte(src))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, src)
	}
	return cfg
}

var allServers = []string{"camel", "http", "hyph", "shttp", "sse", "std"}

// Every transport, written every accepted way, against every transport switch of an
// executor policy: a switch set to false removes exactly the servers of its transport,
// whatever spelling their type used, and says so in a warning.
func TestResolveTransportSwitches(t *testing.T) {
	streamable := []string{"camel", "http", "hyph", "shttp"}
	for _, tc := range []struct {
		policy  string
		removed []string
	}{
		{"{}", nil},
		{"{allow_stdio: true, allow_http: true, allow_sse: true, allow_streamable_http: true}", nil},
		{"{allow_stdio: false}", []string{"std"}},
		{"{allow_sse: false}", []string{"sse"}},
		{"{allow_streamable_http: false}", streamable},
		{"{allow_http: false}", streamable},
		{"{allow_http: true, allow_streamable_http: false}", streamable},
		{"{allow_http: false, allow_streamable_http: true}", streamable},
		{"{allow_stdio: false, allow_sse: false, allow_http: false}", allServers},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			cfg := policyConfig(t, tc.policy)
			res, f := Resolve(cfg, &Identity{Agent: "a", Executor: "ex"}, nil)
			if f != nil {
				t.Fatal(f)
			}
			var want []string
			for _, s := range allServers {
				if !slices.Contains(tc.removed, s) {
					want = append(want, s)
				}
			}
			if !slices.Equal(res.Servers, want) {
				t.Errorf("servers %v, want %v", res.Servers, want)
			}
			for _, s := range tc.removed {
				found := false
				for _, w := range res.Warnings {
					found = found || strings.Contains(w, fmt.Sprintf("server %q skipped: executor %q does not allow transport", s, "ex"))
				}
				if !found {
					t.Errorf("no warning for %s in %q", s, res.Warnings)
				}
			}
		})
	}
}

// Loading normalises every alias of streamable HTTP, so nothing downstream sees the raw
// spelling.
func TestTransportAliasesNormaliseAtLoad(t *testing.T) {
	cfg := policyConfig(t, "{}")
	for name, want := range map[string]string{"std": config.TransportStdio, "http": config.TransportHTTP, "shttp": config.TransportHTTP,
		"hyph": config.TransportHTTP, "camel": config.TransportHTTP, "sse": config.TransportSSE} {
		if got := cfg.Servers[name].Type; got != want {
			t.Errorf("%s: type %q after load, want %q", name, got, want)
		}
	}
	if (config.ExecutorPolicy{}).AllowsTransport("carrier-pigeon") {
		t.Error("a transport the policy does not know was allowed")
	}
}

// The allowlist wins over the denylist (with a warning when both are set), and each
// skipped server is named.
func TestResolveAllowAndDenyLists(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   []string
		warn   string
	}{
		{"{allowlist_servers: [std, sse]}", []string{"sse", "std"}, `server "http" skipped: not in executor "ex" allowlist`},
		{"{denylist_servers: [std, sse]}", []string{"camel", "http", "hyph", "shttp"}, `server "std" skipped: in executor "ex" denylist`},
		{"{allowlist_servers: [std], denylist_servers: [std]}", []string{"std"}, `server "sse" skipped: not in executor "ex" allowlist`},
		{"{allowlist_servers: [std, sse], allow_stdio: false}", []string{"sse"}, `server "std" skipped: executor "ex" does not allow transport stdio`},
	} {
		cfg := policyConfig(t, tc.policy)
		res, f := Resolve(cfg, &Identity{Agent: "a", Executor: "ex"}, nil)
		if f != nil {
			t.Fatal(f)
		}
		if !slices.Equal(res.Servers, tc.want) {
			t.Errorf("%s: servers %v, want %v", tc.policy, res.Servers, tc.want)
		}
		if !slices.Contains(res.Warnings, tc.warn) {
			t.Errorf("%s: warnings %q lack %q", tc.policy, res.Warnings, tc.warn)
		}
	}
}

// url_rewrite applies to every URL-carrying transport; env injection only to stdio, and
// the policy's value wins unless the server sets allow_env_override.
func TestResolveRewriteAndInjection(t *testing.T) {
	cfg := policyConfig(t, `{url_rewrite: {"http://127.0.0.1:9": "http://host.docker.internal:9"}, env_injection: {TOKEN: injected, EXTRA: x}}`)
	cfg.Servers["std"].Env = map[string]string{"TOKEN": "own"}
	res, f := Resolve(cfg, &Identity{Agent: "a", Executor: "ex"}, nil)
	if f != nil {
		t.Fatal(f)
	}
	for _, s := range []string{"http", "shttp", "hyph", "camel", "sse"} {
		if u := res.Overrides[s].URL; !strings.HasPrefix(u, "http://host.docker.internal:9/") {
			t.Errorf("%s: url %q not rewritten", s, u)
		}
	}
	if env := res.Overrides["std"].Env; env["TOKEN"] != "injected" || env["EXTRA"] != "x" {
		t.Errorf("std env %v: the policy's TOKEN must win, EXTRA must be injected", env)
	}
	// A server that allows its own env to override keeps its TOKEN.
	cfg.Servers["std"].AllowEnvOverride = true
	res, _ = Resolve(cfg, &Identity{Agent: "a", Executor: "ex"}, nil)
	if env := res.Overrides["std"].Env; env["TOKEN"] != "" || env["EXTRA"] != "x" {
		t.Errorf("std env %v with allow_env_override: the server's own TOKEN must win, EXTRA must be injected", env)
	}
	if len(res.Overrides["http"].Env) != 0 {
		t.Errorf("env injected into an http server: %v", res.Overrides["http"].Env)
	}
}

// Modes per agent: shared on stdio is refused with the exact message, per_session on HTTP
// is an override; an unknown executor is a 403.
func TestResolveModes(t *testing.T) {
	cfg := policyConfig(t, "{}")
	cfg.Agents = map[string]*config.AgentConfig{"a": {Servers: []config.AgentUse{{Name: "std", Mode: config.ModeShared}, {Name: "http", Mode: config.ModePerSession}, {Name: "sse"}}}}
	res, f := Resolve(cfg, &Identity{Agent: "a"}, nil)
	if f != nil {
		t.Fatal(f)
	}
	if !slices.Equal(res.Servers, []string{"http", "sse"}) {
		t.Errorf("servers %v, want [http sse]", res.Servers)
	}
	if !slices.Contains(res.Warnings, config.SharedStdioError("std")) {
		t.Errorf("warnings %q lack the shared+stdio text", res.Warnings)
	}
	if res.Overrides["http"].Mode != config.ModePerSession || res.Overrides["sse"].Mode != "" {
		t.Errorf("overrides %+v", res.Overrides)
	}
	if _, f := Resolve(cfg, &Identity{Agent: "a", Executor: "nope"}, nil); f == nil || f.Status != 403 {
		t.Errorf("unknown executor: %+v, want 403", f)
	}
}

// With env_injection_overrides_server the policy's value replaces the server's own.
func TestResolveInjectionOverridesServerWhenAllowed(t *testing.T) {
	cfg := policyConfig(t, `{env_injection: {TOKEN: injected}, env_injection_overrides_server: true}`)
	cfg.Servers["std"].Env = map[string]string{"TOKEN": "own"}
	res, f := Resolve(cfg, &Identity{Agent: "a", Executor: "ex"}, nil)
	if f != nil {
		t.Fatal(f)
	}
	if got := res.Overrides["std"].Env["TOKEN"]; got != "injected" {
		t.Errorf("TOKEN = %q, want the injected value", got)
	}
}

// A plugin is resolved like a server: an executor's lists apply to it, its transport
// switches do not (it runs in the gateway), default_enabled and tasks work by its name.
func TestResolvePlugins(t *testing.T) {
	src := `listen: 127.0.0.1:0
store: memory
servers:
  std: {type: stdio, command: /bin/true}
plugins:
  shop: {type: sql, connections: {main: {driver: sqlite, dsn: /tmp/x.db}}}
  hidden: {type: sql, default_enabled: false, connections: {main: {driver: sqlite, dsn: /tmp/y.db}}}
executors:
  nostdio: {type: local_pc, mcp_policy: {allow_stdio: false, allow_http: false, allow_sse: false}}
  deny: {type: local_pc, mcp_policy: {denylist_servers: [shop]}}
  allow: {type: local_pc, mcp_policy: {allowlist_servers: [std]}}
`
	cfg, _, err := config.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		executor, task string
		want           []string
	}{
		{"", "", []string{"shop", "std"}},
		{"nostdio", "", []string{"shop"}},
		{"deny", "", []string{"std"}},
		{"allow", "", []string{"std"}},
		{"", "t", []string{"hidden"}},
	} {
		var task []string
		if tc.task != "" {
			task = []string{"hidden", "std"}
			cfg.Agents = map[string]*config.AgentConfig{"a": {Servers: []config.AgentUse{{Name: "hidden"}, {Name: "shop"}}}}
		}
		res, f := Resolve(cfg, &Identity{Agent: "a", Executor: tc.executor, Task: tc.task}, task)
		if f != nil {
			t.Fatalf("%+v: %v", tc, f.Message)
		}
		if !slices.Equal(res.Servers, tc.want) {
			t.Errorf("executor %q task %q: servers %v, want %v (warnings %v)", tc.executor, tc.task, res.Servers, tc.want, res.Warnings)
		}
	}
}
