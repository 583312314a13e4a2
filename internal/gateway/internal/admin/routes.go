package admin

import "net/http"

// Routes is the admin API's route table (docs/admin-api.md): the router and the OpenAPI
// document are both built from it.
func (a *API) Routes() []Route {
	agents, executors, projects := agentSpec(), executorSpec(), projectSpec()
	s, p, t := serverAPI{a}, policyAPI{a}, taskAPI{a}
	return []Route{
		{Method: "GET", Path: "/api/agents", Summary: "every agent: file and API ones", Handler: p.policyList(agents)},
		{Method: "GET", Path: "/api/agents/{id}", Summary: "one agent", Handler: p.policyGet(agents)},
		{Method: "PUT", Path: "/api/agents/{id}", Summary: "create or replace an API agent", Handler: p.policyWrite(agents)},
		{Method: "PATCH", Path: "/api/agents/{id}", Summary: "change an API agent (JSON merge patch)", Handler: p.policyWrite(agents)},
		{Method: "DELETE", Path: "/api/agents/{id}", Summary: "delete an API agent", Handler: p.policyWrite(agents)},
		{Method: "GET", Path: "/api/executors", Summary: "every executor: file and API ones", Handler: p.policyList(executors)},
		{Method: "GET", Path: "/api/executors/{id}", Summary: "one executor", Handler: p.policyGet(executors)},
		{Method: "PUT", Path: "/api/executors/{id}", Summary: "create or replace an API executor", Handler: p.policyWrite(executors)},
		{Method: "PATCH", Path: "/api/executors/{id}", Summary: "change an API executor (JSON merge patch)", Handler: p.policyWrite(executors)},
		{Method: "DELETE", Path: "/api/executors/{id}", Summary: "delete an API executor", Handler: p.policyWrite(executors)},
		{Method: "GET", Path: "/api/projects", Summary: "every project: file and API ones", Handler: p.policyList(projects)},
		{Method: "POST", Path: "/api/projects", Summary: "create an API project (id from the body, or a new one)", Handler: p.ServeCreateProject},
		{Method: "GET", Path: "/api/projects/{id}", Summary: "one project", Handler: p.policyGet(projects)},
		{Method: "PUT", Path: "/api/projects/{id}", Summary: "create or replace an API project", Handler: p.policyWrite(projects)},
		{Method: "PATCH", Path: "/api/projects/{id}", Summary: "change an API project (JSON merge patch)", Handler: p.policyWrite(projects)},
		{Method: "DELETE", Path: "/api/projects/{id}", Summary: "delete an API project no API task names", Handler: p.ServeDeleteProject},
		{Method: "GET", Path: "/api/mcp-config", Summary: "an agent's MCP document (?agent=): enabled, servers with their fields and mode, meta", Handler: s.ServeMCPConfig},
		{Method: "POST", Path: "/api/mcp-config", Summary: "set an agent's MCP document (?agent=): defines the servers it gives fields for, references the others", Handler: s.ServePostMCPConfig},
		{Method: "GET", Path: "/api/resolve", Summary: "the servers a session of ?agent=, ?executor= and ?task= would get, and how it reaches them", Handler: p.ServeResolve},
		{Method: "GET", Path: "/api/agents/{id}/view", Summary: "what an agent (with ?task= and ?executor=) may see, tool by tool", Handler: a.ServeAgentView},
		{Method: "GET", Path: "/api/servers", Summary: "every server (file and API ones) and every plugin (kind plugin), with live state", Handler: s.ServeServers},
		{Method: "POST", Path: "/api/servers", Summary: "create a server (applied live)", Handler: s.ServeCreateServer},
		{Method: "POST", Path: "/api/servers/validate", Summary: "check a server as POST would, changing nothing", Handler: s.ServeValidateServer},
		{Method: "GET", Path: "/api/servers/{name}", Summary: "one server", Handler: s.ServeServer},
		{Method: "PUT", Path: "/api/servers/{name}", Summary: "replace an API-created server", Handler: s.ServePutServer},
		{Method: "PATCH", Path: "/api/servers/{name}", Summary: "change an API-created server (JSON merge patch)", Handler: s.ServePatchServer},
		{Method: "DELETE", Path: "/api/servers/{name}", Summary: "delete an API-created server (running tasks keep it)", Handler: s.ServeDeleteServer},
		{Method: "POST", Path: "/api/servers/test", Summary: "check a server and connect to it once: the tools it would add (nothing stored)", Handler: s.ServeTestServer},
		{Method: "POST", Path: "/api/servers/{name}/restart", Summary: "restart a server: a new connection replaces the old one, per-session instances stop", Handler: a.ServeRestartServer},
		{Method: "GET", Path: "/api/plugins", Summary: "every plugin with its state, tools and connections", Handler: a.ServePlugins},
		{Method: "GET", Path: "/api/plugins/{name}", Summary: "one plugin", Handler: a.ServePlugin},
		{Method: "POST", Path: "/api/plugins/{name}/restart", Summary: "restart a plugin: a new one of the same definition opens its provider and reads its catalogue again", Handler: a.ServeRestartPlugin},
		{Method: "GET", Path: "/api/integrity", Summary: "pinned and held definitions of every server and plugin, with a field-level diff of each held one, a page at a time (?server=, ?state=held, ?limit=, ?cursor= from next_cursor)", Handler: http.HandlerFunc(a.ServeIntegrity)},
		{Method: "POST", Path: "/api/integrity/{name}/approve", Summary: "approve held definitions of a server or plugin as reviewed: body {kind, name, hash} or {definitions: [{kind, name, hash}]}, hash the held.hash reviewed (409 if another version is held now); sessions are told", Handler: http.HandlerFunc(a.ServeApprove)},
		{Method: "POST", Path: "/api/integrity/{name}/reject", Summary: "reject held definitions of a server or plugin: they stay out until they change again", Handler: http.HandlerFunc(a.ServeReject)},
		{Method: "GET", Path: "/api/upstream-grants", Summary: "the OAuth upstreams of the config (name, per, grant, granted) and the grants kept for them, never a token (?server=, ?subject=)", Handler: http.HandlerFunc(a.ServeUpstreamGrants)},
		{Method: "POST", Path: "/api/upstream-grants/{name}/connect", Summary: "start an authorization of an OAuth upstream: body {subject} for a per-user grant, {} for the server-wide one; answers {url}, the consent URL a person opens", Handler: http.HandlerFunc(a.ServeUpstreamConnect)},
		{Method: "DELETE", Path: "/api/upstream-grants/{name}", Summary: "revoke the server-wide grant of an OAuth upstream, or one user's (?subject=); 404 when none is kept", Handler: http.HandlerFunc(a.ServeUpstreamRevoke)},
		{Method: "GET", Path: "/api/sessions", Summary: "live sessions", Handler: a.ServeSessions},
		{Method: "GET", Path: "/api/sessions/{id}", Summary: "one session and the tools in its view", Handler: a.ServeSession},
		{Method: "DELETE", Path: "/api/sessions/{id}", Summary: "end a session: its client's next request gets 404", Handler: a.ServeEndSession},
		{Method: "GET", Path: "/api/tasks", Summary: "every task: file and API ones", Handler: t.ServeTasks},
		{Method: "POST", Path: "/api/tasks", Summary: "create a task", Handler: t.ServeCreateTask},
		{Method: "GET", Path: "/api/tasks/{id}", Summary: "one task", Handler: t.ServeTask},
		{Method: "PUT", Path: "/api/tasks/{id}", Summary: "change an API-created task", Handler: t.ServePutTask},
		{Method: "DELETE", Path: "/api/tasks/{id}", Summary: "delete an API-created task", Handler: t.ServeDeleteTask},
		{Method: "GET", Path: "/api/settings", Summary: "gateway-wide settings in force (naming, handshake, search and auto forms, client profiles, idle timeouts, log level)", Handler: p.ServeSettings},
		{Method: "PUT", Path: "/api/settings", Summary: "change gateway-wide settings live (fields left out keep the file's values)", Handler: p.ServePutSettings},
		{Method: "GET", Path: "/api/settings/global", Summary: "the global servers in the orchestrator seed's shape: {mcpServers: [McpServerConfig]}", Handler: s.ServeGlobalSettings},
		{Method: "PUT", Path: "/api/settings/global", Summary: "replace the API servers with a {mcpServers: [McpServerConfig]} list (file servers: unchanged or 409)", Handler: s.ServePutGlobalSettings},
		{Method: "GET", Path: "/api/runtime", Summary: "goroutines, heap and resident memory (?gc=1 collects first)", Handler: a.ServeRuntime},
		{Method: "GET", Path: "/api/openapi.json", Summary: "this API as an OpenAPI 3.1 document", Handler: a.ServeOpenAPI},
		{Method: "GET", Path: "/api/runtime/heap", Summary: "a heap profile for go tool pprof", Handler: a.ServeHeapProfile},
		{Method: "GET", Path: "/api/usage", Summary: "tool calls, errors, p50/p99 and list tokens per agent and tool over the last ?minutes= (1-60), from the gateway's own metrics", Handler: http.HandlerFunc(a.usage)},
	}
}

// ServeAgentView answers what an agent (with ?task= and ?executor=) may see, tool by tool
// (the port's Explain).
func (a *API) ServeAgentView(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v, fail := a.port.Explain(r.PathValue("id"), q.Get("task"), q.Get("executor"))
	if fail != nil {
		Error(w, fail.Status, fail.Message)
		return
	}
	JSON(w, http.StatusOK, v)
}
