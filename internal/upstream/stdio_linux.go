package upstream

import "syscall"

// stdioProcAttr starts an upstream (or its guardian) in a process group of its own, with a
// parent-death signal: a guardian gets SIGTERM, so that it can take its whole tree down; a
// bare upstream is killed outright.
func stdioProcAttr(guarded bool) *syscall.SysProcAttr {
	sig := syscall.SIGKILL
	if guarded {
		sig = syscall.SIGTERM
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: sig}
}
