package wsapoll

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a socket cannot be read or peeked without blocking through Go's overlapped
// I/O, so a check of what is pending on one asks WSAPoll, with no wait.

var proc = windows.NewLazySystemDLL("ws2_32.dll").NewProc("WSAPoll")

// pollFD is WSAPOLLFD.
type pollFD struct {
	fd      uintptr
	events  int16
	revents int16
}

// The events Now reports (winsock2.h).
const (
	RdNorm = 0x0100 // data to read, or the peer's FIN
	Err    = 0x0001 // an error, a reset
	Hup    = 0x0002 // the peer has closed
	Nval   = 0x0004 // not a socket
)

// Now reports the events pending on socket fd (RdNorm asked for), without waiting; an
// error when WSAPoll cannot be found or fails.
func Now(fd uintptr) (int16, error) {
	if err := proc.Find(); err != nil {
		return 0, err
	}
	p := pollFD{fd: fd, events: RdNorm}
	r, _, err := proc.Call(uintptr(unsafe.Pointer(&p)), 1, 0)
	if int32(r) < 0 {
		return 0, err
	}
	return p.revents, nil
}
