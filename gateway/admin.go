package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/registry"
	"github.com/mcpgw/mcpgw/sessions"
)

// apiRoutes is the admin API (docs/admin-api.md): the router and the OpenAPI document
// are both built from this table.
func (g *Gateway) apiRoutes() []admin.Route {
	agents, executors := g.agentSpec(), g.executorSpec()
	return []admin.Route{
		{Method: "GET", Path: "/api/agents", Summary: "every agent: file and API ones", Handler: g.policyList(agents)},
		{Method: "GET", Path: "/api/agents/{id}", Summary: "one agent", Handler: g.policyGet(agents)},
		{Method: "PUT", Path: "/api/agents/{id}", Summary: "create or replace an API agent", Handler: g.policyWrite(agents)},
		{Method: "PATCH", Path: "/api/agents/{id}", Summary: "change an API agent (JSON merge patch)", Handler: g.policyWrite(agents)},
		{Method: "DELETE", Path: "/api/agents/{id}", Summary: "delete an API agent", Handler: g.policyWrite(agents)},
		{Method: "GET", Path: "/api/executors", Summary: "every executor: file and API ones", Handler: g.policyList(executors)},
		{Method: "GET", Path: "/api/executors/{id}", Summary: "one executor", Handler: g.policyGet(executors)},
		{Method: "PUT", Path: "/api/executors/{id}", Summary: "create or replace an API executor", Handler: g.policyWrite(executors)},
		{Method: "PATCH", Path: "/api/executors/{id}", Summary: "change an API executor (JSON merge patch)", Handler: g.policyWrite(executors)},
		{Method: "DELETE", Path: "/api/executors/{id}", Summary: "delete an API executor", Handler: g.policyWrite(executors)},
		{Method: "GET", Path: "/api/mcp-config", Summary: "an agent's MCP document (?agent=): enabled, servers with their fields and mode, meta", Handler: g.apiGetMCPConfig},
		{Method: "POST", Path: "/api/mcp-config", Summary: "set an agent's MCP document (?agent=): defines the servers it gives fields for, references the others", Handler: g.apiPostMCPConfig},
		{Method: "GET", Path: "/api/resolve", Summary: "the servers a session of ?agent=, ?executor= and ?task= would get, and how it reaches them", Handler: g.apiResolve},
		{Method: "GET", Path: "/api/agents/{id}/view", Summary: "what an agent (with ?task= and ?executor=) may see, tool by tool", Handler: g.apiAgentView},
		{Method: "GET", Path: "/api/servers", Summary: "every server: file and API ones, with live state", Handler: g.apiServers},
		{Method: "POST", Path: "/api/servers", Summary: "create a server (applied live)", Handler: g.apiCreateServer},
		{Method: "POST", Path: "/api/servers/validate", Summary: "check a server as POST would, changing nothing", Handler: g.apiValidateServer},
		{Method: "GET", Path: "/api/servers/{name}", Summary: "one server", Handler: g.apiGetServer},
		{Method: "PUT", Path: "/api/servers/{name}", Summary: "replace an API-created server", Handler: g.apiPutServer},
		{Method: "PATCH", Path: "/api/servers/{name}", Summary: "change an API-created server (JSON merge patch)", Handler: g.apiPatchServer},
		{Method: "DELETE", Path: "/api/servers/{name}", Summary: "delete an API-created server (running tasks keep it)", Handler: g.apiDeleteServer},
		{Method: "POST", Path: "/api/servers/test", Summary: "check a server and connect to it once: the tools it would add (nothing stored)", Handler: g.apiTestServer},
		{Method: "POST", Path: "/api/servers/{name}/restart", Summary: "restart a server: a new connection replaces the old one, per-session instances stop", Handler: g.admin.ServeRestartServer},
		{Method: "GET", Path: "/api/plugins", Summary: "every plugin with its state, tools and connections", Handler: g.admin.ServePlugins},
		{Method: "GET", Path: "/api/plugins/{name}", Summary: "one plugin", Handler: g.admin.ServePlugin},
		{Method: "GET", Path: "/api/sessions", Summary: "live sessions", Handler: g.admin.ServeSessions},
		{Method: "GET", Path: "/api/sessions/{id}", Summary: "one session and the tools in its view", Handler: g.admin.ServeSession},
		{Method: "DELETE", Path: "/api/sessions/{id}", Summary: "end a session: its client's next request gets 404", Handler: g.admin.ServeEndSession},
		{Method: "GET", Path: "/api/tasks", Summary: "every task: file and API ones", Handler: g.apiTasks},
		{Method: "POST", Path: "/api/tasks", Summary: "create a task", Handler: g.apiCreateTask},
		{Method: "GET", Path: "/api/tasks/{id}", Summary: "one task", Handler: g.apiGetTask},
		{Method: "PUT", Path: "/api/tasks/{id}", Summary: "change an API-created task", Handler: g.apiPutTask},
		{Method: "DELETE", Path: "/api/tasks/{id}", Summary: "delete an API-created task", Handler: g.apiDeleteTask},
		{Method: "GET", Path: "/api/settings", Summary: "gateway-wide settings in force (naming, handshake, idle timeouts, log level)", Handler: g.apiGetSettings},
		{Method: "PUT", Path: "/api/settings", Summary: "change gateway-wide settings live (fields left out keep the file's values)", Handler: g.apiPutSettings},
		{Method: "GET", Path: "/api/runtime", Summary: "goroutines, heap and resident memory (?gc=1 collects first)", Handler: g.admin.ServeRuntime},
		{Method: "GET", Path: "/api/openapi.json", Summary: "this API as an OpenAPI 3.1 document", Handler: g.admin.ServeOpenAPI},
		{Method: "GET", Path: "/api/runtime/heap", Summary: "a heap profile for go tool pprof", Handler: g.admin.ServeHeapProfile},
		{Method: "GET", Path: "/api/usage", Summary: "tool calls, errors, p50/p99 and list tokens per agent and tool over the last ?minutes= (1-60), from the gateway's own metrics", Handler: g.apiUsage},
	}
}

// pluginRow is a plugin as the admin API and the readiness answer show it.
type pluginRow = admin.PluginRow

// fieldError is the admin API's field error, by the name the gateway's config checks
// (instances.go) use.
type fieldError = admin.FieldError

// AgentView is the explanation of what an agent (with a task and executor) may see.
type AgentView struct {
	Agent     string                   `json:"agent"`
	Task      string                   `json:"task,omitempty"`
	Executor  string                   `json:"executor,omitempty"`
	Servers   []string                 `json:"servers"`
	Warnings  []string                 `json:"warnings,omitempty"`
	Tools     []auth.Decision          `json:"tools"`
	Admitted  int                      `json:"admitted"`
	Hidden    int                      `json:"hidden"`
	Overrides map[string]auth.Override `json:"overrides,omitempty"`
	// Modes is the instance policy each of the servers runs with for this agent (shared,
	// per_session, per_agent, per_call): the agent's mode, else the server's resolved one.
	Modes map[string]string `json:"modes,omitempty"`
}

// explainSources are reg's catalogues as explain decides them: every configured server's
// tools, then every plugin's as generated for scope (as for a client without elicitation),
// or why one has none. It reads only the registry, so it is no method of Gateway.
func explainSources(reg *registry.Registry, scope auth.PluginScope) []auth.ToolSource {
	var out []auth.ToolSource
	add := func(name, kind string, cat *registry.Catalog, state func() (string, string)) {
		if cat == nil {
			st, why := state()
			out = append(out, auth.ToolSource{Server: name, Down: kind + " " + st + ": " + why})
			return
		}
		src := auth.ToolSource{Server: name, Tools: make([]auth.ToolFacts, 0, len(cat.Tools))}
		for _, t := range cat.Tools {
			src.Tools = append(src.Tools, auth.ToolFacts{Exposed: t.Exposed, ReadOnly: t.ReadOnly})
		}
		out = append(out, src)
	}
	for _, name := range reg.Names() {
		srv := reg.Server(name)
		add(name, "server", srv.Catalog(), srv.State)
	}
	for _, name := range reg.PluginNames() {
		p := reg.Plugin(name)
		add(name, "plugin", p.CatalogFor(pluginScope(scope), false), p.State)
	}
	return out
}

// Explain decides every tool for an agent, task and executor.
func (g *Gateway) Explain(agent, task, executor string) (*AgentView, *auth.Failure) {
	cfg := g.policy().cfg
	if len(cfg.Agents) > 0 {
		if _, ok := cfg.Agents[agent]; !ok {
			return nil, &auth.Failure{Status: http.StatusNotFound, Message: "unknown agent " + agent}
		}
	}
	id := &auth.Identity{Agent: agent, Task: task, Executor: executor}
	var taskServers []string
	if task != "" {
		t, err := g.task(task)
		if err != nil {
			return nil, &auth.Failure{Status: http.StatusNotFound, Message: "unknown task " + task}
		}
		taskServers = t.EnabledMCPServers
		if taskServers == nil {
			taskServers = []string{}
		}
	}
	ds, res, fail := auth.Explain(cfg, id, taskServers, func(scope auth.PluginScope) []auth.ToolSource {
		return explainSources(g.reg, scope)
	})
	if fail != nil {
		return nil, fail
	}
	v := &AgentView{Agent: agent, Task: task, Executor: res.Executor, Servers: res.Servers, Warnings: res.Warnings, Tools: ds, Overrides: res.Overrides}
	if v.Servers == nil {
		v.Servers = []string{}
	}
	v.Modes = instanceModes(cfg, res)
	for _, d := range ds {
		if d.Admitted {
			v.Admitted++
		} else {
			v.Hidden++
		}
	}
	return v, nil
}

func (g *Gateway) apiAgentView(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v, fail := g.Explain(r.PathValue("id"), q.Get("task"), q.Get("executor"))
	if fail != nil {
		admin.Error(w, fail.Status, fail.Message)
		return
	}
	admin.JSON(w, http.StatusOK, v)
}

// allTasks merges file-provisioned tasks with those created through the API.
func (g *Gateway) allTasks() ([]*sessions.Task, error) {
	stored, err := g.store.ListTasks()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, t := range stored {
		seen[t.ID] = true
	}
	cfg := g.policy().cfg
	for id, tc := range cfg.Tasks {
		if !seen[id] && tc != nil {
			stored = append(stored, &sessions.Task{ID: id, EnabledMCPServers: tc.EnabledMCPServers, Agent: tc.Agent, FileManaged: true})
		}
	}
	sort.Slice(stored, func(i, j int) bool { return stored[i].ID < stored[j].ID })
	return stored, nil
}

func (g *Gateway) apiTasks(w http.ResponseWriter, r *http.Request) {
	ts, err := g.allTasks()
	if err != nil {
		admin.Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	admin.JSON(w, http.StatusOK, ts)
}

// taskBody is what POST and PUT /api/tasks accept. enabledMcpServers is an alias of
// enabled_mcp_servers (the spelling agents' own configs use); created_at and file_managed
// are read-only fields of an answer, ignored.
type taskBody struct {
	ID                string          `json:"id"`
	EnabledMCPServers *[]string       `json:"enabled_mcp_servers"`
	Agent             string          `json:"agent"`
	Created           json.RawMessage `json:"created_at"`
	FileManaged       json.RawMessage `json:"file_managed"`
}

var taskAliases = map[string]string{"enabledMcpServers": "enabled_mcp_servers"}

func (g *Gateway) readTask(w http.ResponseWriter, r *http.Request) (*taskBody, bool) {
	var b taskBody
	body, err := io.ReadAll(io.LimitReader(r.Body, admin.MaxBody))
	if err != nil {
		admin.Error(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return nil, false
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if errs := admin.DecodeStrict(body, &b, taskAliases); errs != nil {
			admin.FieldErrors(w, http.StatusBadRequest, "bad task: "+errs[0].WithField(), errs, nil)
			return nil, false
		}
	}
	cfg := g.policy().cfg
	if b.EnabledMCPServers != nil {
		for _, s := range *b.EnabledMCPServers {
			if !cfg.Has(s) {
				admin.Error(w, http.StatusBadRequest, "unknown server "+s+" (no server or plugin has that name)")
				return nil, false
			}
		}
	}
	if b.Agent != "" && len(cfg.Agents) > 0 {
		if _, ok := cfg.Agents[b.Agent]; !ok {
			admin.Error(w, http.StatusBadRequest, "unknown agent "+b.Agent)
			return nil, false
		}
	}
	return &b, true
}

// apiCreateTask creates a task. Without enabled_mcp_servers it is pre-filled from the
// servers' default_enabled.
func (g *Gateway) apiCreateTask(w http.ResponseWriter, r *http.Request) {
	b, ok := g.readTask(w, r)
	if !ok {
		return
	}
	if b.ID == "" {
		b.ID = "task-" + strings.ToLower(rand.Text()[:10])
	}
	if _, err := g.task(b.ID); err == nil {
		admin.Error(w, http.StatusConflict, "task "+b.ID+" exists")
		return
	}
	t := &sessions.Task{ID: b.ID, Agent: b.Agent, Created: time.Now().UTC()}
	if b.EnabledMCPServers != nil {
		t.EnabledMCPServers = *b.EnabledMCPServers
	} else {
		cfg := g.policy().cfg
		for name, d := range cfg.Servers {
			if d != nil && d.Enabled() {
				t.EnabledMCPServers = append(t.EnabledMCPServers, name)
			}
		}
		for name, d := range cfg.Plugins {
			if d != nil && d.Enabled() {
				t.EnabledMCPServers = append(t.EnabledMCPServers, name)
			}
		}
		sort.Strings(t.EnabledMCPServers)
	}
	if t.EnabledMCPServers == nil {
		t.EnabledMCPServers = []string{}
	}
	if err := g.store.PutTask(t); err != nil {
		admin.Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	g.admin.AuditWrite(r, "task/"+t.ID, "ok", nil, t)
	admin.JSON(w, http.StatusCreated, t)
}

func (g *Gateway) apiGetTask(w http.ResponseWriter, r *http.Request) {
	t, err := g.task(r.PathValue("id"))
	if err != nil {
		admin.Error(w, http.StatusNotFound, "unknown task "+r.PathValue("id"))
		return
	}
	admin.JSON(w, http.StatusOK, t)
}

// editableTask finds the task a request names and refuses file-managed ones.
func (g *Gateway) editableTask(w http.ResponseWriter, r *http.Request) (*sessions.Task, bool) {
	t, err := g.task(r.PathValue("id"))
	if err != nil {
		admin.Error(w, http.StatusNotFound, "unknown task "+r.PathValue("id"))
		return nil, false
	}
	if t.FileManaged {
		admin.Error(w, http.StatusConflict, "task "+t.ID+" is managed by the config file; edit the file instead")
		return nil, false
	}
	return t, true
}

// apiPutTask changes a task's servers. Sessions already running keep theirs.
func (g *Gateway) apiPutTask(w http.ResponseWriter, r *http.Request) {
	t, ok := g.editableTask(w, r)
	if !ok {
		return
	}
	b, ok := g.readTask(w, r)
	if !ok {
		return
	}
	before := *t
	if b.EnabledMCPServers != nil {
		t.EnabledMCPServers = *b.EnabledMCPServers
	}
	if b.Agent != "" {
		t.Agent = b.Agent
	}
	if err := g.store.PutTask(t); err != nil {
		admin.Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	g.admin.AuditWrite(r, "task/"+t.ID, "ok", &before, t)
	admin.JSON(w, http.StatusOK, t)
}

func (g *Gateway) apiDeleteTask(w http.ResponseWriter, r *http.Request) {
	t, ok := g.editableTask(w, r)
	if !ok {
		return
	}
	if err := g.store.DeleteTask(t.ID); err != nil && !errors.Is(err, sessions.ErrNotFound) {
		admin.Error(w, http.StatusServiceUnavailable, "store: "+err.Error())
		return
	}
	g.admin.AuditWrite(r, "task/"+t.ID, "ok", t, nil)
	w.WriteHeader(http.StatusNoContent)
}

// serveResourceMetadata serves the RFC 9728 protected resource metadata in mode oauth.
func (g *Gateway) serveResourceMetadata(w http.ResponseWriter, r *http.Request) {
	cfg := g.policy().cfg
	if cfg.Auth.Mode != "oauth" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(auth.ProtectedResourceMetadata(cfg.Auth.OAuth))
}

func (g *Gateway) sessionCount() int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return len(g.sessions)
}
