package bridge

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a socket cannot be peeked without blocking through Go's overlapped I/O:
// WSAPoll, with no wait, reports a peer that has closed (POLLHUP) or reset (POLLERR). A
// closed peer it does not report is found by the reader a moment later, as elsewhere.

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
)

func peekGone(fd uintptr) bool {
	if procWSAPoll.Find() != nil {
		return false
	}
	p := wsaPollFD{fd: fd, events: pollRdNorm}
	r, _, _ := procWSAPoll.Call(uintptr(unsafe.Pointer(&p)), 1, 0)
	return int32(r) > 0 && p.revents&(pollHup|pollErr) != 0
}
