package admin

import (
	"maps"
	"net/http"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
)

// resolveAPI is what a session would get, asked before one starts: the servers of an
// agent, executor and task and how it reaches them (/api/resolve), and the tools it may
// see (/api/agents/{id}/view), through the same resolution a session start runs.
type resolveAPI struct{ port Port }

// resolveWarnings are what a session of the agent would be told at its start, with the
// config just applied: the servers its executor's policy skips (not in its allowlist, in
// its denylist, a transport it does not allow) and modes that cannot apply. It is the
// resolution GET /api/resolve and a session start run (auth.Resolve), not a second copy,
// so the answer of a save and the session can never disagree. Called with the config
// lock held, after the change was applied.
func resolveWarnings(cfg *config.Config, agent string) []FieldError {
	res, fail := auth.Resolve(cfg, &auth.Identity{Agent: agent}, nil)
	if fail != nil {
		return []FieldError{{Field: "agents." + agent, Message: fail.Message}}
	}
	var out []FieldError
	for _, w := range res.Warnings {
		out = append(out, FieldError{Field: "agents." + agent + ".servers", Message: w})
	}
	return out
}

// resolvedServer is one server of GET /api/resolve: how a session of that agent, executor
// and task would reach it.
type resolvedServer struct {
	Name string `json:"name"`
	// Kind is server or plugin. A plugin runs inside the gateway: it has a type (sql,
	// go, command, mcpgw) and neither transport nor mode, and the executor's rewrites and
	// environment do not concern it (its allowlist and denylist do).
	Kind      string            `json:"kind"`
	Type      string            `json:"type,omitempty"` // a plugin's
	Transport string            `json:"transport,omitempty"`
	Mode      string            `json:"mode,omitempty"`
	Endpoint  string            `json:"endpoint,omitempty"` // the URL after url_rewrite
	Command   string            `json:"command,omitempty"`
	Env       map[string]string `json:"env,omitempty"`     // after env_injection, values redacted
	Headers   map[string]string `json:"headers,omitempty"` // values redacted
	Source    string            `json:"source"`            // file | api
}

// ServeResolve answers what a session of ?agent= (with ?executor= and ?task=) would get,
// server by server, through the same resolution a session start runs (auth.Resolve).
func (a resolveAPI) ServeResolve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	agent := q.Get("agent")
	if agent == "" {
		agent = "default"
	}
	cfg := a.port.Config()
	if len(cfg.Agents) > 0 {
		if _, ok := cfg.Agents[agent]; !ok {
			Error(w, http.StatusNotFound, "unknown agent "+agent)
			return
		}
	}
	id := &auth.Identity{Agent: agent, Task: q.Get("task"), Executor: q.Get("executor")}
	var taskServers []string
	if id.Task != "" {
		t, err := a.port.Task(id.Task)
		if err != nil {
			Error(w, http.StatusNotFound, "unknown task "+id.Task)
			return
		}
		taskServers = t.EnabledMCPServers
		if taskServers == nil {
			taskServers = []string{}
		}
		id.Project = t.Project
	}
	res, fail := auth.Resolve(cfg, id, taskServers)
	if fail != nil {
		Error(w, fail.Status, fail.Message)
		return
	}
	file := a.port.FileConfig()
	out := struct {
		Agent    string           `json:"agent"`
		Task     string           `json:"task,omitempty"`
		Project  string           `json:"project,omitempty"`
		Executor string           `json:"executor,omitempty"`
		Servers  []resolvedServer `json:"servers"`
		Warnings []string         `json:"warnings"`
	}{Agent: agent, Task: id.Task, Project: id.Project, Executor: res.Executor, Servers: []resolvedServer{}, Warnings: nonNil(res.Warnings)}
	for _, name := range res.Servers {
		if pd := cfg.Plugins[name]; pd != nil {
			rs := resolvedServer{Name: name, Kind: KindPlugin, Type: pd.Type, Source: "file"}
			if p := a.port.Plugin(name); p != nil {
				rs.Type = p.Status().Type
			}
			out.Servers = append(out.Servers, rs)
			continue
		}
		d := cfg.Servers[name]
		if d == nil {
			continue
		}
		o := res.Overrides[name]
		rs := resolvedServer{Name: name, Kind: KindServer, Transport: d.Transport(), Mode: d.ResolvedMode(), Source: "api"}
		if file.Servers[name] != nil {
			rs.Source = "file"
		}
		if o.Mode != "" {
			rs.Mode = o.Mode
		}
		if d.Transport() == config.TransportStdio {
			rs.Command = d.Command
			env := maps.Clone(d.Env)
			if len(o.Env) > 0 && env == nil {
				env = map[string]string{}
			}
			maps.Copy(env, o.Env)
			rs.Env = redactValues(env)
		} else {
			rs.Endpoint = d.URL
			if o.URL != "" {
				rs.Endpoint = o.URL
			}
			rs.Headers = redactValues(d.Headers)
		}
		out.Servers = append(out.Servers, rs)
	}
	JSON(w, http.StatusOK, out)
}

// ServeAgentView answers what an agent (with ?task= and ?executor=) may see, tool by tool
// (the port's Explain).
func (a resolveAPI) ServeAgentView(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v, fail := a.port.Explain(r.PathValue("id"), q.Get("task"), q.Get("executor"))
	if fail != nil {
		Error(w, fail.Status, fail.Message)
		return
	}
	JSON(w, http.StatusOK, v)
}
