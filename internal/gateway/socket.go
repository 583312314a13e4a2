package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/reply"
	"github.com/mcpgw/mcpgw/internal/gateway/internal/sockconn"
	"github.com/mcpgw/mcpgw/internal/statedir"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// The Unix socket front serves the same MCP endpoint to local processes: over HTTP, or in
// the line mode mcpgw-bridge speaks (internal/gateway/line.go; ServeSocket tells them apart by a
// connection's first byte). The socket file is 0600 and every connection's peer user must
// be the gateway's own (on Windows, where the file's ACL is the state dir's, the peer
// check alone decides); such a peer is trusted like auth mode none (its identity headers
// are believed), and may send messages up to SocketMaxBody.

// SocketMaxBody bounds a request body on the socket (the bridge carries 16 MiB messages).
const SocketMaxBody = 64 << 20

type peerUIDKey struct{}

// SocketPath is the default socket location in the state dir.
func SocketPath(stateDir string) string { return statedir.Socket(stateDir) }

// ListenSocket creates the socket at path (replacing a stale one), private to the
// gateway's user (mode 0600 on Unix).
func ListenSocket(path string) (net.Listener, error) {
	if err := statedir.CheckSocketPath(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("socket %s is in use by another gateway", path)
	}
	_ = os.Remove(path)
	return listenPrivate(path) // socket_unix.go, socket_windows.go
}

// SocketServer is the socket's HTTP side; ServeSocket hands it the HTTP connections.
func (g *Gateway) SocketServer() *http.Server {
	return &http.Server{
		Handler:           http.HandlerFunc(g.legacy.serveSocket),
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if pc, ok := c.(*sockconn.Peeked); ok { // from ServeSocket
				return context.WithValue(ctx, peerUIDKey{}, peerVerdict{pc.PeerErr})
			}
			return context.WithValue(ctx, peerUIDKey{}, peerVerdict{sockconn.CheckPeer(c)})
		},
	}
}

// peerVerdict is what checkPeer said of a connection: nil, the gateway's own user.
type peerVerdict struct{ err error }

func (lf *legacyFront) serveSocket(w http.ResponseWriter, r *http.Request) {
	g := lf.g
	v, ok := r.Context().Value(peerUIDKey{}).(peerVerdict)
	if !ok {
		v.err = errors.New("the peer was not checked")
	}
	if v.err != nil {
		reply.Error(w, http.StatusForbidden, wire.CodeConnection, "Forbidden: "+v.err.Error())
		return
	}
	g.mux.ServeHTTP(w, r.WithContext(auth.WithTrusted(r.Context())))
}
