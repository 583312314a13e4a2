package gateway

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpgw/mcpgw/statedir"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/auth"
	"github.com/mcpgw/mcpgw/registry/wire"
)

// The Unix socket front serves the same MCP endpoint to local processes: over HTTP, or in
// the line mode mcpgw-bridge speaks (gateway/line.go; ServeSocket tells them apart by a
// connection's first byte). The socket file is 0600 and every connection's peer uid must
// be the gateway's own; such a peer is trusted like auth mode none (its identity headers
// are believed), and may send messages up to SocketMaxBody.

// SocketMaxBody bounds a request body on the socket (the bridge carries 16 MiB messages).
const SocketMaxBody = 64 << 20

type peerUIDKey struct{}

// SocketPath is the default socket location in the state dir.
func SocketPath(stateDir string) string { return statedir.Socket(stateDir) }

// ListenSocket creates the socket at path (replacing a stale one) with mode 0600.
func ListenSocket(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if c, err := net.DialTimeout("unix", path, 200*time.Millisecond); err == nil {
		c.Close()
		return nil, fmt.Errorf("socket %s is in use by another gateway", path)
	}
	_ = os.Remove(path)
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// SocketServer is the socket's HTTP side; ServeSocket hands it the HTTP connections.
func (g *Gateway) SocketServer() *http.Server {
	return &http.Server{
		Handler:           http.HandlerFunc(g.serveSocket),
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if pc, ok := c.(*peekedConn); ok { // from ServeSocket
				return context.WithValue(ctx, peerUIDKey{}, pc.uid)
			}
			uid, err := peerUID(c)
			if err != nil {
				uid = -1
			}
			return context.WithValue(ctx, peerUIDKey{}, uid)
		},
	}
}

func (g *Gateway) serveSocket(w http.ResponseWriter, r *http.Request) {
	uid, _ := r.Context().Value(peerUIDKey{}).(int)
	if uid != os.Getuid() {
		writeHTTPError(w, http.StatusForbidden, wire.CodeConnection, fmt.Sprintf("Forbidden: peer uid %d is not the gateway's", uid))
		return
	}
	g.mux.ServeHTTP(w, r.WithContext(auth.WithTrusted(r.Context())))
}

func peerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, errors.New("not a unix connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *syscall.Ucred
	var cerr error
	err = raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	if err != nil {
		return -1, err
	}
	if cerr != nil {
		return -1, cerr
	}
	return int(cred.Uid), nil
}
