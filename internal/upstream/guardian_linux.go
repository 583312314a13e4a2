//go:build linux

package upstream

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	prSetChildSubreaper = 36
	// guardianPoll is how often the guardian looks at its parent and reaps (SIGCHLD wakes
	// it sooner).
	guardianPoll = 250 * time.Millisecond
	// termGrace is how long descendants get after SIGTERM before SIGKILL when the guardian
	// is told to stop. It stays well under the 2 s the gateway's close waits before it
	// kills the guardian's group itself.
	termGrace = 300 * time.Millisecond
	// killRounds bounds the enumerate-and-SIGKILL rounds (a descendant may fork while the
	// guardian kills; its child is caught by the next round). Together about 3 s.
	killRounds = 60
)

// runGuardian runs the upstream as the guardian's child and keeps its whole tree from
// outliving it. It returns the exit code the guardian should leave with.
func runGuardian(args []string) int {
	self := os.Getpid()
	parent := os.Getppid()
	// As a subreaper, orphans anywhere below (a setsid'd grandchild whose parent exited, a
	// double fork) are reparented to the guardian rather than to init: nothing leaves the
	// tree that descendantsOf walks.
	if err := setSubreaper(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpgw child: PR_SET_CHILD_SUBREAPER: %v\n", err)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)

	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpgw child: start %s: %v\n", args[0], err)
		return 127
	}
	// The guardian reaps every child itself with wait4(-1), the upstream included, so
	// cmd.Wait is never called.
	child := cmd.Process.Pid
	tick := time.NewTicker(guardianPoll)
	defer tick.Stop()
	for {
		select {
		case <-chld:
		case <-tick.C:
		case <-sigs:
			killTree(self, true)
			return 143
		}
		if ws, ok := reapChildren(child); ok {
			killTree(self, false)
			return exitCode(ws)
		}
		if os.Getppid() != parent {
			// The gateway is gone and the parent-death signal did not arrive (or was
			// not set): stop just the same.
			killTree(self, true)
			return 1
		}
	}
}

func setSubreaper() error {
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// reapChildren waits for every child that has ended (orphans reparented to the guardian
// included, which would otherwise stay zombies) and reports the status of want if it was
// among them.
func reapChildren(want int) (syscall.WaitStatus, bool) {
	var got syscall.WaitStatus
	found := false
	for i := 0; i < 100000; i++ {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil || pid <= 0 {
			break
		}
		if pid == want {
			got, found = ws, true
		}
	}
	return got, found
}

func exitCode(ws syscall.WaitStatus) int {
	switch {
	case ws.Exited():
		return ws.ExitStatus()
	case ws.Signaled():
		return 128 + int(ws.Signal())
	}
	return 1
}

// killTree ends every descendant of self: with grace, SIGTERM first and up to termGrace
// for them to go; then rounds of SIGKILL to every descendant found under /proc, reaping
// between rounds, until none is left running or killRounds have passed.
//
// A zombie counts as gone once it has been sent SIGKILL: it runs no code, and a thread
// group whose leader shows as a zombie while other threads still exit (a busy machine
// can take seconds over a many-threaded process) has SIGKILL pending on every thread.
// Waiting for such zombies to become reapable would keep the guardian, and with it the
// pipes to the gateway, around for nothing; init reaps whatever is left once the
// guardian has gone.
func killTree(self int, grace bool) {
	if grace {
		for _, p := range descendantsOf(self) {
			if !p.zombie() {
				_ = syscall.Kill(p.pid, syscall.SIGTERM)
			}
		}
		deadline := time.Now().Add(termGrace)
		for time.Now().Before(deadline) {
			reapChildren(0)
			if !anyRunning(descendantsOf(self), nil) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	killed := map[int]bool{}
	for round := 0; round < killRounds; round++ {
		reapChildren(0)
		ds := descendantsOf(self)
		if !anyRunning(ds, killed) {
			return
		}
		for _, p := range ds {
			// Zombies too: kill(2) on a zombie leader still reaches its other threads.
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

// anyRunning reports whether ps holds a process that is not a zombie, or a zombie not in
// killed (nil: zombies do not count).
func anyRunning(ps []procEntry, killed map[int]bool) bool {
	for _, p := range ps {
		if !p.zombie() || (killed != nil && !killed[p.pid]) {
			return true
		}
	}
	return false
}

// procEntry is one process as /proc/PID/stat shows it.
type procEntry struct {
	pid, ppid int
	state     byte
}

func (p procEntry) zombie() bool { return p.state == 'Z' || p.state == 'X' }

// descendantsOf lists every process below root (not root itself), found by reading the
// parent of every process in /proc: that also finds descendants that left root's
// process group or session.
func descendantsOf(root int) []procEntry {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]procEntry{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readStat(pid); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []procEntry
	seen := map[int]bool{root: true}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if seen[c.pid] {
				continue
			}
			seen[c.pid] = true
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// readStat reads pid, state and ppid from /proc/PID/stat. The command name may hold
// spaces and parentheses, so the fields are taken after its last ')'.
func readStat(pid int) (procEntry, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procEntry{}, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procEntry{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) == 0 {
		return procEntry{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procEntry{}, false
	}
	return procEntry{pid: pid, ppid: ppid, state: f[0][0]}, true
}
