package main

import "syscall"

// leaveWithParent asks the kernel for SIGTERM when the parent dies (PR_SET_PDEATHSIG),
// which the signal context turns into a stop; the getppid poll in main backs it up.
func leaveWithParent(func()) {
	const prSetPdeathsig = 1
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGTERM), 0)
}
