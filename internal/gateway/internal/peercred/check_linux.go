package peercred

import (
	"fmt"
	"os"
	"syscall"
)

// Check reads the peer's credentials with SO_PEERCRED: its uid must be the gateway's.
func Check(fd uintptr) error {
	cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	if err != nil {
		return fmt.Errorf("cannot read the peer's credentials: %w", err)
	}
	return SameUID(int(cred.Uid), os.Getuid())
}
