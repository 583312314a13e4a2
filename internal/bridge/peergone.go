package bridge

import (
	"net"
	"syscall"
)

// peerGone reports a connection whose other end has closed (a pending EOF), without
// reading: a peek that does not wait, next to the reader goroutine (Control does not take
// the connection's read lock, which the blocked reader holds). The peek is per OS
// (peergone_unix.go, peergone_windows.go).
func peerGone(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	gone := false
	_ = rc.Control(func(fd uintptr) { gone = peekGone(fd) })
	return gone
}
