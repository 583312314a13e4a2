//go:build unix

package bridge

import "syscall"

// peekGone: a recv with MSG_PEEK|MSG_DONTWAIT that returns 0 bytes is a pending EOF.
func peekGone(fd uintptr) bool {
	var b [1]byte
	n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return err == nil && n == 0
}
