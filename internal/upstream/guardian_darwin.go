package upstream

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The macOS guardian. macOS has neither a parent-death signal nor a child subreaper, so:
//   - the gateway starts the guardian as the leader of a new process group, and the
//     upstream stays in it;
//   - the guardian learns of the gateway's death from kqueue (EVFILT_PROC, NOTE_EXIT on
//     its parent), with a getppid poll behind it;
//   - to stop, it signals every process below it (found by parent links in the
//     kern.proc.all listing) and every other member of its process group (which catches
//     double-forked orphans that stayed in the group), SIGTERM first, then rounds of
//     SIGKILL.
// A descendant that both left the group (setsid) and lost its parent is out of reach:
// see docs/platforms.md.

const (
	// guardianPoll is how often the guardian also compares its parent with the one it
	// started under.
	guardianPoll = 250 * time.Millisecond
	// termGrace is how long descendants get after SIGTERM before SIGKILL (well under the
	// 2 s the gateway's close waits before it kills the group itself).
	termGrace = 300 * time.Millisecond
	// killRounds bounds the list-and-SIGKILL rounds (about 3 s together).
	killRounds = 60
	// szomb is a zombie's p_stat.
	szomb = 5
)

func runGuardian(args []string) int {
	self := os.Getpid()
	parent := os.Getppid()
	if parent == 1 {
		// The gateway died before the guardian looked: launchd adopted it. Start nothing.
		fmt.Fprintln(os.Stderr, "mcpgw child: the gateway is gone")
		return 1
	}
	parentGone := watchParentExit(parent)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpgw child: start %s: %v\n", args[0], err)
		return 127
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(guardianPoll)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			killTree(self, false)
			return waitExitCode(err)
		case <-sigs:
			killTree(self, true)
			return 143
		case <-parentGone:
			killTree(self, true)
			return 1
		case <-tick.C:
			if os.Getppid() != parent {
				killTree(self, true)
				return 1
			}
		}
	}
}

// watchParentExit returns a channel closed when process ppid exits (nil, never ready, if
// kqueue cannot watch it: the getppid poll remains).
func watchParentExit(ppid int) <-chan struct{} {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil
	}
	var ev unix.Kevent_t
	unix.SetKevent(&ev, ppid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	ch := make(chan struct{})
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(kq)
		if err == unix.ESRCH { // gone already
			close(ch)
			return ch
		}
		return nil
	}
	go func() {
		defer unix.Close(kq)
		out := make([]unix.Kevent_t, 1)
		for {
			n, err := unix.Kevent(kq, nil, out, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return // the poll remains
			}
			if n > 0 {
				close(ch)
				return
			}
		}
	}()
	return ch
}

// killTree ends every process below self and every other member of self's process group:
// with grace, SIGTERM first and up to termGrace for them to go; then rounds of SIGKILL
// until none is left running or killRounds have passed. As on Linux, a zombie counts as
// gone once it has been sent SIGKILL.
func killTree(self int, grace bool) {
	// The group counts only when the guardian leads it (the gateway starts it so); run by
	// hand from a shell, its group is the shell's job.
	pgid := syscall.Getpgrp()
	if pgid != self {
		pgid = 0
	}
	if grace {
		for _, p := range treeAndGroup(listProcs(), self, pgid) {
			if !p.zombie {
				_ = syscall.Kill(p.pid, syscall.SIGTERM)
			}
		}
		deadline := time.Now().Add(termGrace)
		for time.Now().Before(deadline) {
			if !liveOrUnkilled(treeAndGroup(listProcs(), self, pgid), nil) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	killed := map[int]bool{}
	for round := 0; round < killRounds; round++ {
		ps := treeAndGroup(listProcs(), self, pgid)
		if !liveOrUnkilled(ps, killed) {
			return
		}
		for _, p := range ps {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
			killed[p.pid] = true
		}
		d := time.Duration(round+1) * 5 * time.Millisecond
		if d > 100*time.Millisecond {
			d = 100 * time.Millisecond
		}
		time.Sleep(d)
	}
}

// listProcs lists every process (nil when the listing fails).
func listProcs() []procInfo {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil
	}
	out := make([]procInfo, 0, len(kps))
	for i := range kps {
		k := &kps[i]
		out = append(out, procInfo{pid: int(k.Proc.P_pid), ppid: int(k.Eproc.Ppid), pgid: int(k.Eproc.Pgid), zombie: k.Proc.P_stat == szomb})
	}
	return out
}
