package gateway

import (
	"net/http"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/ui"
)

// The web UI's pages, as internal/gateway/internal/ui serves them.

func (g *Gateway) uiPages() []ui.Page {
	return []ui.Page{
		{Path: "/ui/servers", Handler: http.HandlerFunc(g.ui.ServeServers)},
		{Path: "/ui/plugins", Handler: http.HandlerFunc(g.ui.ServePlugins)},
		{Path: "/ui/projects", Handler: http.HandlerFunc(g.ui.ServeProjects)},
		{Path: "/ui/tasks", Handler: http.HandlerFunc(g.ui.ServeTasks)},
		{Path: "/ui/sessions", Handler: http.HandlerFunc(g.ui.ServeSessions)},
		{Path: "/ui/sessions/{id}", Handler: http.HandlerFunc(g.ui.ServeSession)},
		{Path: "/ui/integrity", Handler: http.HandlerFunc(g.ui.ServeIntegrity)},
		{Path: "/ui/usage", Handler: http.HandlerFunc(g.ui.ServeUsage)},
		{Path: "/ui/agents", Handler: http.HandlerFunc(g.ui.ServeAgents)},
		{Path: "/ui/agents/{id}/explain", Handler: http.HandlerFunc(g.ui.ServeExplain)},
		{Path: "/ui/executors", Handler: http.HandlerFunc(g.ui.ServeExecutors)},
	}
}
