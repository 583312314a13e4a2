package gateway

import (
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/gateway/internal/admin"
	"github.com/mcpgw/mcpgw/gateway/internal/telemetry"
)

// The Usage page's and GET /api/usage's numbers come from the ring of per-minute
// snapshots of the gateway's own metrics (gateway/internal/telemetry).
type (
	// UsageReport is the Usage page's data.
	UsageReport = telemetry.UsageReport
	// UsageRow is one agent, tool or (agent, tool) over the window.
	UsageRow = telemetry.UsageRow
	// UsageMinute is one minute of the window.
	UsageMinute = telemetry.UsageMinute
)

// usageMaxMinutes is the longest window the ring answers; usageKeep the snapshots it
// keeps (the window's minutes and the one it starts from).
const (
	usageMaxMinutes = telemetry.UsageMaxMinutes
	usageKeep       = usageMaxMinutes + 1
)

// Usage reports the last window (at most an hour) of tool calls and tools/list tokens.
func (g *Gateway) Usage(window time.Duration) *UsageReport { return g.usage.Report(window) }

// usageWindow reads ?minutes= (1 to usageMaxMinutes, default all of them), for
// /api/usage and the Usage page.
func usageWindow(r *http.Request) (int, string) {
	return telemetry.UsageMinutes(r.URL.Query().Get("minutes"))
}

// apiUsage answers GET /api/usage[?minutes=N].
func (g *Gateway) apiUsage(w http.ResponseWriter, r *http.Request) {
	n, msg := usageWindow(r)
	if msg != "" {
		admin.Error(w, http.StatusBadRequest, msg)
		return
	}
	admin.JSON(w, http.StatusOK, telemetry.UsageJSON(g.Usage(time.Duration(n)*time.Minute), n))
}
