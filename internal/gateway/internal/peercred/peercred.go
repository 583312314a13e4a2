// Package peercred asks the kernel who is on the other end of a local connection: the
// user of a Unix socket's peer, or of a loopback TCP connection's far end.
package peercred

import "fmt"

// SameUID is the Unix peer rule: the peer's uid must be the gateway's own.
func SameUID(peer, own int) error {
	if peer != own || own < 0 {
		return fmt.Errorf("peer uid %d is not the gateway's", peer)
	}
	return nil
}
