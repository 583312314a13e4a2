package httpclient

import "golang.org/x/sys/unix"

// sockState is what the kernel knows of c's socket, read without reading from it:
// whether the peer has acted on it (sent bytes nobody read yet, a FIN or an RST), and how
// many written bytes wait in the send queue. Unlike the pool's liveness peek (a recv with
// MSG_PEEK, which also takes a pending error off the socket) it changes nothing, so a test
// can wait for the peer's move without touching what the code under test will see. It
// does not look at c's read buffer, so it may run while another goroutine uses c.
func sockState(c *Conn) (peerActed bool, unsent int) {
	if c.raw == nil {
		return true, 0
	}
	_ = c.raw.Control(func(fd uintptr) {
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		if err != nil {
			peerActed = true
			return
		}
		inq, _ := unix.IoctlGetInt(int(fd), unix.SIOCINQ)
		unsent, _ = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
		const established = 1 // TCP_ESTABLISHED in the kernel's tcp_states.h
		peerActed = inq > 0 || info.State != established
	})
	return peerActed, unsent
}
