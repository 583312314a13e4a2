package session

import "github.com/mcpgw/mcpgw/internal/upstream"

// Reattach is a connection for the session to server's streamable HTTP session
// sessionID (of protocol version), opened by an instance that is gone, for a request
// about a task that instance created (registry.Instances.Reattach). The caller closes it.
func (u *Upstreams) Reattach(server, sessionID, version string) (*upstream.Conn, error) {
	return u.inst.Reattach(server, u, sessionID, version)
}
