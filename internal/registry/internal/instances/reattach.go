package instances

import (
	"fmt"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// Reattach is a connection for o to server's streamable HTTP session sessionID (of
// protocol version), which an instance that is gone opened: the gateway restarted, or the
// instance was another replica's (upstream.Dialer.Reattach). It is dialed as o's instance
// of the server would be now: the URL, headers, TLS settings and grant the server's
// config and o's executor give, so a session is only ever sought where the server is
// today. What the upstream sends on it goes to o, whose request it serves. The caller
// closes it; that never ends the session.
func (m *Instances) Reattach(server string, o Owner, sessionID, version string) (*upstream.Conn, error) {
	srv := m.h.Server(server)
	if srv == nil {
		return nil, fmt.Errorf("unknown server %q", server)
	}
	spec := o.InstanceSpec(server)
	var opts upstream.Options
	if modeOf(srv, &spec) == config.ModeShared && spec.URL == "" {
		opts = srv.Options() // the shared instance's, with the server-wide grant
		opts.Handler = o.HandleUpstream
	} else {
		opts = ownerOptions(srv, o, &spec)
	}
	return m.h.Dialer.Reattach(opts, sessionID, version)
}
