package gateway

import (
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
)

// UsageReport is the Usage page's and GET /api/usage's data: the ring of per-minute
// snapshots of the gateway's own metrics (internal/gateway/internal/telemetry).
type UsageReport = telemetry.UsageReport

// Usage reports the last window (at most an hour) of tool calls and tools/list tokens.
func (g *Gateway) Usage(window time.Duration) *UsageReport { return g.usage.Report(window) }

// Usage is the gateway's usage report (admin.Port, ui.Port).
func (p adminSessions) Usage(window time.Duration) *telemetry.UsageReport { return p.g.Usage(window) }
