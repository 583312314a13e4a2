package dispatch

import (
	"fmt"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/session"
)

// downTool says why a tool the session's view does not hold cannot be called when it is a
// tool of a server whose instance is down for the session: the server, and for a server
// its executor's runner hosts, the executor (docs/runners.md). "" when the tool is not
// such a tool.
func (dp *Dispatcher) downTool(s *session.Session, name string) string {
	for _, server := range s.Servers() {
		if !s.Own.IsDown(server) {
			continue
		}
		srv := dp.Reg.Server(server)
		if srv == nil {
			continue
		}
		cat := srv.Catalog()
		if cat == nil {
			continue
		}
		for _, t := range cat.Tools {
			if t.Exposed != name {
				continue
			}
			if ex := s.Rec.Overrides[server].Runner; ex != "" {
				return fmt.Sprintf("server %q is down for this session: it runs on the runner of executor %q, which does not serve it now (GET /api/runners); its tools come back with notifications/tools/list_changed", server, ex)
			}
			return fmt.Sprintf("server %q is down for this session; mcpgw restarts it, and its tools come back with notifications/tools/list_changed", server)
		}
	}
	return ""
}
