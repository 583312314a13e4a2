package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/sessions"
)

// apiRoutes is the admin API (docs/admin-api.md): the router and the OpenAPI document
// are both built from this table.
func (g *Gateway) apiRoutes() []apiRoute {
	agents, executors := g.agentSpec(), g.executorSpec()
	return []apiRoute{
		{"GET", "/api/agents", "every agent: file and API ones", g.policyList(agents)},
		{"GET", "/api/agents/{id}", "one agent", g.policyGet(agents)},
		{"PUT", "/api/agents/{id}", "create or replace an API agent", g.policyWrite(agents)},
		{"PATCH", "/api/agents/{id}", "change an API agent (JSON merge patch)", g.policyWrite(agents)},
		{"DELETE", "/api/agents/{id}", "delete an API agent", g.policyWrite(agents)},
		{"GET", "/api/executors", "every executor: file and API ones", g.policyList(executors)},
		{"GET", "/api/executors/{id}", "one executor", g.policyGet(executors)},
		{"PUT", "/api/executors/{id}", "create or replace an API executor", g.policyWrite(executors)},
		{"PATCH", "/api/executors/{id}", "change an API executor (JSON merge patch)", g.policyWrite(executors)},
		{"DELETE", "/api/executors/{id}", "delete an API executor", g.policyWrite(executors)},
		{"GET", "/api/mcp-config", "an agent's MCP document (?agent=): enabled, servers with their fields and mode, meta", g.apiGetMCPConfig},
		{"POST", "/api/mcp-config", "set an agent's MCP document (?agent=): defines the servers it gives fields for, references the others", g.apiPostMCPConfig},
		{"GET", "/api/resolve", "the servers a session of ?agent=, ?executor= and ?task= would get, and how it reaches them", g.apiResolve},
		{"GET", "/api/agents/{id}/view", "what an agent (with ?task= and ?executor=) may see, tool by tool", g.apiAgentView},
		{"GET", "/api/servers", "every server: file and API ones, with live state", g.apiServers},
		{"POST", "/api/servers", "create a server (applied live)", g.apiCreateServer},
		{"POST", "/api/servers/validate", "check a server as POST would, changing nothing", g.apiValidateServer},
		{"GET", "/api/servers/{name}", "one server", g.apiGetServer},
		{"PUT", "/api/servers/{name}", "replace an API-created server", g.apiPutServer},
		{"PATCH", "/api/servers/{name}", "change an API-created server (JSON merge patch)", g.apiPatchServer},
		{"DELETE", "/api/servers/{name}", "delete an API-created server (running tasks keep it)", g.apiDeleteServer},
		{"POST", "/api/servers/test", "check a server and connect to it once: the tools it would add (nothing stored)", g.apiTestServer},
		{"POST", "/api/servers/{name}/restart", "restart a server: a new connection replaces the old one, per-session instances stop", g.apiRestartServer},
		{"GET", "/api/plugins", "every plugin with its state, tools and connections", g.apiPlugins},
		{"GET", "/api/plugins/{name}", "one plugin", g.apiGetPlugin},
		{"GET", "/api/sessions", "live sessions", g.apiSessions},
		{"GET", "/api/sessions/{id}", "one session and the tools in its view", g.apiGetSession},
		{"DELETE", "/api/sessions/{id}", "end a session: its client's next request gets 404", g.apiEndSession},
		{"GET", "/api/tasks", "every task: file and API ones", g.apiTasks},
		{"POST", "/api/tasks", "create a task", g.apiCreateTask},
		{"GET", "/api/tasks/{id}", "one task", g.apiGetTask},
		{"PUT", "/api/tasks/{id}", "change an API-created task", g.apiPutTask},
		{"DELETE", "/api/tasks/{id}", "delete an API-created task", g.apiDeleteTask},
		{"GET", "/api/settings", "gateway-wide settings in force (naming, handshake, idle timeouts, log level)", g.apiGetSettings},
		{"PUT", "/api/settings", "change gateway-wide settings live (fields left out keep the file's values)", g.apiPutSettings},
		{"GET", "/api/runtime", "goroutines, heap and resident memory (?gc=1 collects first)", g.apiRuntime},
		{"GET", "/api/openapi.json", "this API as an OpenAPI 3.1 document", g.apiOpenAPI},
		{"GET", "/api/runtime/heap", "a heap profile for go tool pprof", g.apiHeapProfile},
		{"GET", "/api/usage", "tool calls, errors, p50/p99 and list tokens per agent and tool over the last ?minutes= (1-60), from the gateway's own metrics", g.apiUsage},
	}
}

// apiRuntime reports the process's goroutines, heap and resident memory; with ?gc=1 it
// first collects garbage and returns freed memory to the OS, so that a soak test (or an
// operator chasing a leak) reads what is really held rather than what the GC has not yet
// collected.
func (g *Gateway) apiRuntime(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("gc") == "1" {
		if !g.mayCollect(w) {
			return
		}
		debug.FreeOSMemory()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	admin.JSON(w, http.StatusOK, map[string]any{
		"goroutines":       runtime.NumGoroutine(),
		"heap_inuse_bytes": ms.HeapInuse,
		"heap_alloc_bytes": ms.HeapAlloc,
		"sys_bytes":        ms.Sys,
		"rss_bytes":        residentBytes(),
		"sessions":         g.sessionCount(),
	})
}

// apiHeapProfile writes a heap profile (go tool pprof reads it) after a collection: for
// an operator, or a test, looking for what holds memory.
func (g *Gateway) apiHeapProfile(w http.ResponseWriter, r *http.Request) {
	if !g.mayCollect(w) {
		return
	}
	runtime.GC()
	w.Header().Set("Content-Type", "application/octet-stream")
	_ = pprof.Lookup("heap").WriteTo(w, 0)
}

// gcEvery is how often an admin request may force a garbage collection: each stops the
// world and walks the heap, so a loop of them is a way to slow every call.
const gcEvery = 2 * time.Second

// mayCollect lets one forced collection through per gcEvery, gateway-wide, and answers the
// others 429 with Retry-After.
func (g *Gateway) mayCollect(w http.ResponseWriter) bool {
	now := time.Now().UnixNano()
	last := g.lastGC.Load()
	if wait := time.Duration(last + int64(gcEvery) - now); last != 0 && wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		admin.Error(w, http.StatusTooManyRequests, "a garbage collection was forced less than "+gcEvery.String()+" ago; try again later")
		return false
	}
	if !g.lastGC.CompareAndSwap(last, now) {
		admin.Error(w, http.StatusTooManyRequests, "a garbage collection is being forced now; try again later")
		return false
	}
	return true
}

// residentBytes reads the process's resident set size from /proc (0 where there is none).
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

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
	ds, res, fail := auth.Explain(cfg, g.reg, id, taskServers)
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
	g.auditAdmin(r, "task/"+t.ID, "ok", nil, t)
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
	g.auditAdmin(r, "task/"+t.ID, "ok", &before, t)
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
	g.auditAdmin(r, "task/"+t.ID, "ok", t, nil)
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
