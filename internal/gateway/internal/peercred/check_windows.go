package peercred

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sioAFUnixGetPeerPID is SIO_AF_UNIX_GETPEERPID, _WSAIOR(IOC_VENDOR, 256) in afunix.h.
const sioAFUnixGetPeerPID = 0x58000100

// Check asks the kernel for the peer process of an AF_UNIX socket
// (SIO_AF_UNIX_GETPEERPID): its token's user must be the gateway's.
func Check(fd uintptr) error {
	var pid uint32
	var n uint32
	if err := windows.WSAIoctl(windows.Handle(fd), sioAFUnixGetPeerPID, nil, 0,
		(*byte)(unsafe.Pointer(&pid)), uint32(unsafe.Sizeof(pid)), &n, nil, 0); err != nil {
		return fmt.Errorf("cannot learn the peer process: %w", err)
	}
	if n != uint32(unsafe.Sizeof(pid)) || pid == 0 {
		return errors.New("cannot learn the peer process")
	}
	peer, err := processUser(pid)
	if err != nil {
		return fmt.Errorf("cannot read the user of peer process %d: %w", pid, err)
	}
	own, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("cannot read the gateway's user: %w", err)
	}
	if !peer.Equals(own.User.Sid) {
		return fmt.Errorf("peer process %d runs as %s, not as the gateway's user", pid, peer.String())
	}
	return nil
}

// processUser is the user SID in the token of process pid.
func processUser(pid uint32) (*windows.SID, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return nil, err
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return nil, err
	}
	return u.User.Sid.Copy()
}
