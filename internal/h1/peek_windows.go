package h1

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a socket cannot be read without blocking through Go's overlapped I/O, so the
// idle-connection check asks WSAPoll, with no wait, whether anything is pending: data the
// server wrote unasked, its FIN, a reset. An idle, open connection reports nothing.

var procWSAPoll = windows.NewLazySystemDLL("ws2_32.dll").NewProc("WSAPoll")

// wsaPollFD is WSAPOLLFD.
type wsaPollFD struct {
	fd      uintptr
	events  int16
	revents int16
}

const (
	pollRdNorm = 0x0100
	pollErr    = 0x0001
	pollHup    = 0x0002
	pollNval   = 0x0004
)

// pollNow reports the events pending on socket fd (POLLRDNORM asked for), without waiting.
func pollNow(fd uintptr) (int16, error) {
	if err := procWSAPoll.Find(); err != nil {
		return 0, err
	}
	p := wsaPollFD{fd: fd, events: pollRdNorm}
	r, _, err := procWSAPoll.Call(uintptr(unsafe.Pointer(&p)), 1, 0)
	if int32(r) < 0 {
		return 0, err
	}
	return p.revents, nil
}

func (c *Conn) peek(fd uintptr) bool {
	ev, err := pollNow(fd)
	c.peekOK = err == nil && ev&(pollRdNorm|pollErr|pollHup|pollNval) == 0
	return true
}
