package admin

import (
	"net/http"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
)

// usage answers GET /api/usage[?minutes=N] (1 to an hour, default the whole hour) from
// port's metrics.
func usage(port Port) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		n, msg := telemetry.UsageMinutes(r.URL.Query().Get("minutes"))
		if msg != "" {
			Error(w, http.StatusBadRequest, msg)
			return
		}
		JSON(w, http.StatusOK, telemetry.UsageJSON(port.Usage(time.Duration(n)*time.Minute), n))
	}
}
