package admin

import "net/http"

// runnersPort is the part of the gateway that knows its executors' runners
// (internal/gateway/internal/runners); a Port without it has none to show.
type runnersPort interface {
	// RunnerStates is every executor's runner: executor, state, address, servers.
	RunnerStates() any
}

// serveRunners answers GET /api/runners: {"runners": [...]}, every executor with a runner
// configured or connected, by executor name (docs/runners.md).
func (a *API) serveRunners(w http.ResponseWriter, _ *http.Request) {
	var list any = []any{}
	if rp, ok := a.port.(runnersPort); ok {
		list = rp.RunnerStates()
	}
	JSON(w, http.StatusOK, map[string]any{"runners": list})
}
