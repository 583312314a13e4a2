package upstream

import "syscall"

// stdioProcAttr starts an upstream (or its guardian) in a process group of its own. macOS
// has no parent-death signal: the guardian watches the gateway with kqueue instead
// (guardian_darwin.go).
func stdioProcAttr(bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
