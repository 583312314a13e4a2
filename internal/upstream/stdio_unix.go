//go:build unix

package upstream

import (
	"log/slog"
	"os"
	"syscall"
)

// The gateway starts each stdio upstream (or its guardian) as the leader of a process group
// of its own, so that one signal reaches everything the upstream started that stayed in
// the group. See docs/platforms.md.

// containChildren has nothing to do on Unix: the process group and the guardian keep
// children from outliving the gateway.
func containChildren(*slog.Logger) {}

// termProcess asks one process to stop: SIGTERM. A guardian then takes its tree down.
func termProcess(p *os.Process) { _ = syscall.Kill(p.Pid, syscall.SIGTERM) }

// termGroup sends SIGTERM to the process group p leads.
func termGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// killGroup sends SIGKILL to the process group p leads.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
