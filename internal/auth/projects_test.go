package auth

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// projectConfig has four global servers (off is off by default), two agents (one that
// lists its servers, one that lists none) and projects of both kinds: a server list, and
// overrides of default_enabled.
func projectConfig(t *testing.T) *config.Config {
	t.Helper()
	src := `listen: 127.0.0.1:0
store: memory
servers:
  a:   {type: http, url: "http://127.0.0.1:9/mcp"}
  b:   {type: http, url: "http://127.0.0.1:9/mcp"}
  c:   {type: http, url: "http://127.0.0.1:9/mcp"}
  off: {type: http, url: "http://127.0.0.1:9/mcp", default_enabled: false}
agents:
  lister:   {servers: [a, b, c, off]}
  defaults: {}
projects:
  listed:  {name: Listed, servers: [a, b]}
  tweaked: {overrides: {off: true, c: false}}
`
	cfg, _, err := config.Parse([]byte(src))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	if ps := cfg.Validate(); ps.HasErrors() {
		t.Fatalf("validate: %v", ps)
	}
	return cfg
}

// Global -> project -> task: the project narrows what the agent (and executor) allow, and
// the task narrows what the project leaves; each drop is a warning naming its stage.
func TestResolveGlobalProjectTask(t *testing.T) {
	cfg := projectConfig(t)
	for _, tc := range []struct {
		name, agent, project string
		task                 []string
		want                 []string
		warn                 string
	}{
		{"no project", "lister", "", nil, []string{"a", "b", "c", "off"}, ""},
		{"project list", "lister", "listed", nil, []string{"a", "b"}, `server "c" is not enabled for project "listed"`},
		{"project then task", "lister", "listed", []string{"b", "c"}, []string{"b"}, `server "a" is not enabled for task "t"`},
		{"task cannot widen the project", "lister", "listed", []string{"c", "off"}, nil, `server "c" is not enabled for project "listed"`},
		{"overrides", "lister", "tweaked", nil, []string{"a", "b", "off"}, `server "c" is not enabled for project "tweaked"`},
		// An agent that lists no servers starts from its project's set: the override
		// turns on a server that is off by default.
		{"defaults from the project", "defaults", "tweaked", nil, []string{"a", "b", "off"}, ""},
		{"defaults without a project", "defaults", "", nil, []string{"a", "b", "c"}, ""},
		{"defaults, project, task", "defaults", "tweaked", []string{"off"}, []string{"off"}, `server "a" is not enabled for task "t"`},
		{"project gone", "lister", "deleted", nil, nil, `project "deleted" does not exist`},
		{"project gone, defaults", "defaults", "deleted", nil, nil, `project "deleted" does not exist`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, f := Resolve(cfg, &Identity{Agent: tc.agent, Task: "t", Project: tc.project}, tc.task)
			if f != nil {
				t.Fatal(f)
			}
			if !slices.Equal(res.Servers, tc.want) {
				t.Errorf("servers = %v, want %v (warnings %q)", res.Servers, tc.want, res.Warnings)
			}
			if tc.warn != "" && !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, tc.warn) }) {
				t.Errorf("warnings %q lack %q", res.Warnings, tc.warn)
			}
		})
	}
}

// The executor runs before the project: a server its denylist skips stays skipped even
// when the project lists it.
func TestResolveExecutorBeforeProject(t *testing.T) {
	cfg := projectConfig(t)
	cfg.Executors = map[string]*config.ExecutorConfig{"ex": {Type: "local_pc", MCPPolicy: config.ExecutorPolicy{DenylistServers: []string{"a"}}}}
	res, f := Resolve(cfg, &Identity{Agent: "lister", Executor: "ex", Project: "listed"}, nil)
	if f != nil {
		t.Fatal(f)
	}
	if !slices.Equal(res.Servers, []string{"b"}) {
		t.Errorf("servers = %v, want [b]", res.Servers)
	}
}
