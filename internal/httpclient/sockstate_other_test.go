//go:build !linux

package httpclient

// sockState approximates the Linux version with the pool's own liveness peek: the peer
// has acted once the peek fails; the send queue is not known (1: assume the write began).
func sockState(c *Conn) (peerActed bool, unsent int) {
	return !c.alive(), 1
}
