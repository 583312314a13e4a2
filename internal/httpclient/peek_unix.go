//go:build unix

package httpclient

import "syscall"

// peek is one non-blocking recv with MSG_PEEK: EAGAIN means nothing is pending, so the
// connection is idle and open; EOF or unasked bytes mean it is not reusable.
func (c *Conn) peek(fd uintptr) bool {
	_, _, err := syscall.Recvfrom(int(fd), c.peekBuf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	c.peekOK = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
	return true
}
