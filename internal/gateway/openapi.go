package gateway

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/ui"
)

// AdminRoutes lists the admin API's routes as the router serves them ("GET /api/servers"),
// read back from the router itself.
func (g *Gateway) AdminRoutes() []string {
	return admin.Paths(g.admin.Router(mountUI(g)))
}

// mountUI mounts the web UI on the admin router: its pages, and the admin API's route
// table again under /ui/api.
func mountUI(g *Gateway) func(root *mux.Router) http.Handler {
	return func(root *mux.Router) http.Handler {
		routes := apiRoutes(g)
		api := make([]ui.Route, 0, len(routes))
		for _, rt := range routes {
			api = append(api, ui.Route{Method: rt.Method, Path: rt.Path, Handler: rt.Handler})
		}
		return g.ui.Mount(root, api, g.uiPages())
	}
}
