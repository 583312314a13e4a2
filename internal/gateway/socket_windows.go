package gateway

import (
	"fmt"
	"net"
)

// On Windows the local socket is an AF_UNIX socket too (Windows 10 1803 and later; Go's
// "unix" network). The file takes its ACL from the state directory, which Windows does
// not let a process narrow to 0600 the Unix way; what decides is the peer check: the
// kernel names the peer process (SIO_AF_UNIX_GETPEERPID) and its token's user must be
// the gateway's. docs/decisions.md says why AF_UNIX and not a named pipe.

func listenPrivate(path string) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("%w (AF_UNIX sockets need Windows 10 1803 or later)", err)
	}
	return ln, nil
}
