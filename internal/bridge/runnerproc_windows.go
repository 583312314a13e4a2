//go:build windows

package bridge

import (
	"os"
	"syscall"
)

// runnerProcAttr has nothing to add on Windows.
func runnerProcAttr() *syscall.SysProcAttr { return nil }

// termGroup ends the process (Windows has no signals to ask it).
func termGroup(p *os.Process) { _ = p.Kill() }

// killGroup ends the process.
func killGroup(p *os.Process) { _ = p.Kill() }
