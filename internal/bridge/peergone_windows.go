package bridge

import "github.com/mcpgw/mcpgw/internal/wsapoll"

// On Windows a socket cannot be peeked without blocking through Go's overlapped I/O:
// WSAPoll, with no wait, reports a peer that has closed (POLLHUP) or reset (POLLERR). A
// closed peer it does not report is found by the reader a moment later, as elsewhere.
func peekGone(fd uintptr) bool {
	ev, err := wsapoll.Now(fd)
	return err == nil && ev&(wsapoll.Hup|wsapoll.Err) != 0
}
