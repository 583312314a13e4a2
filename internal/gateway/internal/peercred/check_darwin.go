package peercred

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Check reads the peer's credentials with LOCAL_PEERCRED (what getpeereid uses): its
// effective uid when it connected must be the gateway's.
func Check(fd uintptr) error {
	cred, err := unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return fmt.Errorf("cannot read the peer's credentials: %w", err)
	}
	if cred.Version != xucredVersion {
		return fmt.Errorf("cannot read the peer's credentials: xucred version %d", cred.Version)
	}
	return SameUID(int(cred.Uid), os.Getuid())
}

// xucredVersion is XUCRED_VERSION in <sys/ucred.h>.
const xucredVersion = 0
