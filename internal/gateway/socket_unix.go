//go:build unix

package gateway

import (
	"net"
	"os"
	"syscall"
)

// listenPrivate listens on a Unix socket at path that only the gateway's user may connect
// to: created under umask 0177, then set to 0600 explicitly.
func listenPrivate(path string) (net.Listener, error) {
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
