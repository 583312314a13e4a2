package admin

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/config"
)

// TestLaunchChanges: what counts as a write that makes the gateway run a command.
func TestLaunchChanges(t *testing.T) {
	cur := &config.Config{
		Servers: map[string]*config.ServerDef{
			"fs":  {Type: "stdio", Command: "npx", Args: []string{"a"}, Env: map[string]string{"K": "v"}},
			"web": {Type: "streamable_http", URL: "http://127.0.0.1:1/mcp"},
		},
		Executors: map[string]*config.ExecutorConfig{"d": {MCPPolicy: config.ExecutorPolicy{EnvInjection: map[string]string{"A": "1"}}}},
	}
	same := &config.Config{Servers: map[string]*config.ServerDef{
		"fs":  {Type: "stdio", Command: "npx", Args: []string{"a"}, Env: map[string]string{"K": "v"}, Mode: "per_session"},
		"web": {Type: "streamable_http", URL: "http://127.0.0.1:2/mcp"},
	}, Executors: cur.Executors}
	if got := LaunchChanges(cur, same); len(got) != 0 {
		t.Errorf("no command changed, got %v", got)
	}
	next := &config.Config{
		Servers: map[string]*config.ServerDef{
			"fs":  {Type: "stdio", Command: "npx", Args: []string{"a"}, Env: map[string]string{"K": "v", "LD_PRELOAD": "/tmp/x.so"}},
			"new": {Type: "stdio", Command: "sh"},
		},
		Plugins:   map[string]*config.PluginDef{"p": {Command: "/bin/plugin"}},
		Executors: map[string]*config.ExecutorConfig{"d": {MCPPolicy: config.ExecutorPolicy{EnvInjection: map[string]string{"A": "2"}}}},
	}
	want := []string{"executors.d", "plugins.p", "servers.fs", "servers.new"}
	if got := LaunchChanges(cur, next); !slices.Equal(got, want) {
		t.Errorf("LaunchChanges = %v, want %v", got, want)
	}
}

// TestMayRunCommands: a write that runs a command needs a credential, and
// admin.allow_commands: false refuses it whoever asks.
func TestMayRunCommands(t *testing.T) {
	for _, c := range []struct {
		allow, cred bool
		entries     []string
		ok          bool
		why         string
	}{
		{true, false, nil, true, ""},
		{true, true, []string{"servers.fs"}, true, ""},
		{true, false, []string{"servers.fs"}, false, "needs an admin credential"},
		{false, true, []string{"servers.fs"}, false, "admin.allow_commands is false"},
	} {
		r := httptest.NewRequest("POST", "/api/servers", nil)
		r = r.WithContext(WithCaller(r.Context(), "someone", c.cred))
		w := httptest.NewRecorder()
		if got := MayRunCommands(&fakePort{allow: c.allow}, w, r, c.entries); got != c.ok || (!c.ok && (w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), c.why))) {
			t.Errorf("allow %v credentialed %v %v: %v, %d %s", c.allow, c.cred, c.entries, got, w.Code, w.Body.String())
		}
	}
}
