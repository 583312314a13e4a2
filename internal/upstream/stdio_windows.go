package upstream

import (
	"log/slog"
	"os"
	"sync"
	"syscall"
)

// Windows has no process groups to signal and no SIGTERM. The gateway joins a kill-on-close
// job object before it starts its first stdio upstream, so every upstream (and everything
// each starts) is in the job and ends with the gateway, however it ends. Each guardian
// puts itself in a job of its own (nested in the gateway's) before it starts the upstream,
// so that terminating the guardian ends that upstream's whole tree. See docs/platforms.md.

func stdioProcAttr(bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

var containOnce sync.Once

// containChildren puts the gateway in its kill-on-close job, once.
func containChildren(log *slog.Logger) {
	containOnce.Do(func() {
		if err := joinKillOnCloseJob(); err != nil {
			log.Warn("cannot put the gateway in a kill-on-close job object: stdio upstreams may outlive it if it is killed", "err", err)
		}
	})
}

// termProcess terminates p: there is no gentler signal. The gateway closed the upstream's
// stdin first. A guardian's job then ends the upstream's tree.
func termProcess(p *os.Process) { _ = p.Kill() }

// termGroup terminates p (see termProcess).
func termGroup(p *os.Process) { _ = p.Kill() }

// killGroup terminates p (see termProcess).
func killGroup(p *os.Process) { _ = p.Kill() }
