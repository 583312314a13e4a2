//go:build !linux

package peercred

import (
	"errors"
	"net"
)

// TCPPeerUID: only Linux tells who owns the other end of a loopback TCP connection. Here
// a local client without a credential is not the gateway's user as far as anyone knows;
// it sends the local token (client-config puts it in the configs it prints).
func TCPPeerUID(_, _ *net.TCPAddr) (int, error) {
	return -1, errors.New("this OS does not name the user of a TCP peer")
}
