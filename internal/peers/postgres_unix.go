//go:build unix

package peers

import "syscall"

// processAlive reports whether a process of that pid exists.
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }
