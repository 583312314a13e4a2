//go:build unix

package bridge

import (
	"os"
	"syscall"
)

// runnerProcAttr starts a runner's server as the leader of a process group of its own, so
// that stopping it reaches what it started.
func runnerProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// termGroup sends SIGTERM to the process group p leads.
func termGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// killGroup sends SIGKILL to the process group p leads.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
