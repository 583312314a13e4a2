package httpclient

import "github.com/mcpgw/mcpgw/internal/wsapoll"

// On Windows a socket cannot be read without blocking through Go's overlapped I/O, so the
// idle-connection check asks WSAPoll, with no wait, whether anything is pending: data the
// server wrote unasked, its FIN, a reset. An idle, open connection reports nothing.
func (c *Conn) peek(fd uintptr) bool {
	ev, err := wsapoll.Now(fd)
	c.peekOK = err == nil && ev&(wsapoll.RdNorm|wsapoll.Err|wsapoll.Hup|wsapoll.Nval) == 0
	return true
}
