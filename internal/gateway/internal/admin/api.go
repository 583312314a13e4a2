package admin

import (
	"log/slog"

	"github.com/mcpgw/mcpgw/internal/store"
)

// API is the admin API of one gateway: its guard, its router, and its handlers, one type
// per resource, each holding what it uses (Routes wires them).
type API struct {
	port    Port
	version string
	routes  func() []Route

	servers   serverAPI         // /api/servers
	mcpConfig mcpConfigAPI      // /api/mcp-config
	global    globalSettingsAPI // /api/settings/global
	policies  policyAPI         // /api/agents, /api/executors, /api/projects
	settings  settingsAPI       // /api/settings
	resolve   resolveAPI        // /api/resolve, /api/agents/{id}/view
	tasks     taskAPI           // /api/tasks
	plugins   pluginAPI         // /api/plugins
	sessions  sessionAPI        // /api/sessions
	runtime   *runtimeAPI       // /api/runtime
	integrity integrityAPI      // /api/integrity
	grants    grantAPI          // /api/upstream-grants
}

// New makes the admin API of a gateway of the given version, logging to log (nil: no
// log); routes is its route table (the router and the OpenAPI document are both built
// from it: Routes, or a test's own).
func New(port Port, version string, log *slog.Logger, routes func() []Route) *API {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := configWriter{port: port, log: log}
	servers := serverAPI{w}
	return &API{port: port, version: version, routes: routes,
		servers: servers, mcpConfig: mcpConfigAPI{servers}, global: globalSettingsAPI{w},
		policies: policyAPI{w}, settings: settingsAPI{w}, resolve: resolveAPI{port}, tasks: taskAPI{port},
		plugins: pluginAPI{port}, sessions: sessionAPI{port}, runtime: &runtimeAPI{port: port},
		integrity: integrityAPI{port}, grants: grantAPI{port}}
}

// What the gateway reads of the admin API besides its router: the rows and views its
// readiness answer and the web UI's pages show, as the API's GETs answer them.

// ServerViews lists every server, file and API ones, by name, with live state (the UI's
// Servers page).
func (a *API) ServerViews() ([]ServerView, error) { return a.servers.serverViews() }

// AgentViews lists every agent, file and API ones, by id, as GET /api/agents does.
func (a *API) AgentViews() ([]map[string]any, error) { return a.policies.policyViews(agentSpec()) }

// ExecutorViews lists every executor, file and API ones, by id, as GET /api/executors does.
func (a *API) ExecutorViews() ([]map[string]any, error) {
	return a.policies.policyViews(executorSpec())
}

// ProjectViews lists every project, file and API ones, by id, as GET /api/projects does.
func (a *API) ProjectViews() ([]map[string]any, error) {
	return a.policies.policyViews(projectSpec())
}

// AllTasks merges file-provisioned tasks with those created through the API (the UI's
// Tasks and Explain pages).
func (a *API) AllTasks() ([]*store.Task, error) { return a.tasks.allTasks() }

// PluginRows reports every configured plugin, in name order (/readyz, the UI's Plugins
// page).
func (a *API) PluginRows() []PluginRow { return pluginRows(a.port) }

// IntegrityRows is a page of the integrity records (the UI's Integrity page).
func (a *API) IntegrityRows(q IntegrityQuery) (IntegrityPage, error) { return a.integrity.rows(q) }
