package gateway

import (
	"net"
	"os"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/connshare"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/peercred"
)

// ShareListener caps the connections accepted from l that are open at once at max
// (http.max_connections), shared among their sources (internal/gateway/internal/connshare): one
// address, or on loopback one local user, holds at most its share; an eighth is kept for
// the gateway's own user and for connections that passed authentication; a connection
// past its share is answered 503 and closed at once, so a full listener never keeps the
// owner waiting behind a stranger's idle connections. Serve it with ConnContext.
func ShareListener(l net.Listener, max int) net.Listener {
	return connshare.Listen(l, connshare.For(max), connshare.Options{OwnUID: os.Getuid(), PeerUID: peercred.TCPPeerUID})
}
