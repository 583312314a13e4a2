package gateway

import (
	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// The registry owns every upstream instance (internal/registry/instances.go): a session asks it
// for a connection, and is the registry.Owner of the instances started for it
// (internal/gateway/internal/session/upstreams.go). Here is what the gateway adds: each server's
// instance policy for a resolution, and the text of a refusal for a full queue.

// instanceModes is the instance policy of each server of a resolution (plugins have none).
func instanceModes(cfg *config.Config, res *auth.Resolution) map[string]string {
	out := map[string]string{}
	for _, name := range res.Servers {
		d := cfg.Servers[name]
		if d == nil {
			continue
		}
		out[name] = d.ResolvedMode()
		if o := res.Overrides[name]; o.Mode != "" {
			out[name] = o.Mode
		}
	}
	return out
}

// ShareError is an instance refused because its agent holds its whole share of the
// server (registry.ShareError).
type ShareError = registry.ShareError
