package admin

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpgw/mcpgw/config"
)

// Admin writes that make the gateway run a command (docs/security.md#local-trust): a
// stdio server's or out-of-process plugin's command, arguments, environment or working
// directory, an executor's env_injection (it reaches stdio servers' environments), and
// POST /api/servers/test of a stdio server. They need an admin credential in every auth
// mode, and admin.allow_commands: false refuses them through the API altogether.

// LaunchChanges names the entries of next that start a process differently from cur, or
// start one cur does not.
func LaunchChanges(cur, next *config.Config) []string {
	out := changedLaunches("servers", cur.Servers, next.Servers, func(d *config.ServerDef) launch {
		return launch{d.Command, d.Args, d.Env, d.Dir, d.AllowEnvOverride}
	})
	out = append(out, changedLaunches("plugins", cur.Plugins, next.Plugins, func(d *config.PluginDef) launch {
		return launch{d.Command, d.Args, d.Env, d.Dir, false}
	})...)
	for name, e := range next.Executors {
		if e == nil || len(e.MCPPolicy.EnvInjection) == 0 {
			continue
		}
		if c := cur.Executors[name]; c == nil || !maps.Equal(c.MCPPolicy.EnvInjection, e.MCPPolicy.EnvInjection) ||
			c.MCPPolicy.EnvInjectionOverridesServer != e.MCPPolicy.EnvInjectionOverridesServer {
			out = append(out, "executors."+name)
		}
	}
	slices.Sort(out)
	return out
}

// changedLaunches names the entries of next that run a command cur does not run the same
// way.
func changedLaunches[D any](section string, cur, next map[string]*D, of func(*D) launch) []string {
	var out []string
	for name, d := range next {
		if d == nil || of(d).command == "" {
			continue
		}
		var was launch
		if c := cur[name]; c != nil {
			was = of(c)
		}
		if !was.same(of(d)) {
			out = append(out, section+"."+name)
		}
	}
	return out
}

// launch is how a process is started: what a write may not change without a credential.
type launch struct {
	command string
	args    []string
	env     map[string]string
	dir     string
	// envOverride is a server's allow_env_override: whether its env or an executor's
	// injection reaches the process.
	envOverride bool
}

func (a launch) same(b launch) bool {
	return a.command == b.command && slices.Equal(a.args, b.args) && maps.Equal(a.env, b.env) && a.dir == b.dir &&
		a.envOverride == b.envOverride
}

// MayRunCommands reports whether r may make the gateway (p) run the commands of entries,
// and otherwise answers 403 saying why and audits the refusal.
func MayRunCommands(p Port, w http.ResponseWriter, r *http.Request, entries []string) bool {
	if len(entries) == 0 {
		return true
	}
	what := strings.Join(entries, ", ")
	msg := ""
	switch {
	case !p.Config().Admin.CommandsAllowed():
		msg = "admin.allow_commands is false: servers, plugins and executors that run or shape a command (" + what +
			") are configured in the config file only"
	case !Credentialed(r):
		msg = "changing what command the gateway runs (" + what + ") needs an admin credential, not only a local connection: send " + Credentials
	default:
		return true
	}
	AuditWrite(p, r, what, "refused: commands", nil, nil)
	Error(w, http.StatusForbidden, msg)
	return false
}
