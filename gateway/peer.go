package gateway

import "fmt"

// sameUID is the Unix peer rule: the peer's uid must be the gateway's own.
func sameUID(peer, own int) error {
	if peer != own || own < 0 {
		return fmt.Errorf("peer uid %d is not the gateway's", peer)
	}
	return nil
}
