package upstream

import (
	"errors"
	"os/exec"
	"syscall"
)

// What the guardians outside Linux share, kept free of OS calls so that it is tested on
// every platform (guardian_tree_test.go).

// procInfo is one process as a process listing shows it.
type procInfo struct {
	pid, ppid, pgid int
	zombie          bool
}

// treeAndGroup picks from ps every process below root (by parent links, so also those
// that left root's process group or session while their parent lived) and every other
// member of process group pgid (also orphans whose parent has gone); root itself is not
// picked. pgid <= 0 picks by parent links alone.
func treeAndGroup(ps []procInfo, root, pgid int) []procInfo {
	children := map[int][]procInfo{}
	for _, p := range ps {
		children[p.ppid] = append(children[p.ppid], p)
	}
	seen := map[int]bool{root: true}
	var out []procInfo
	queue := []int{root}
	add := func(p procInfo) {
		if !seen[p.pid] {
			seen[p.pid] = true
			out = append(out, p)
			queue = append(queue, p.pid)
		}
	}
	for _, p := range ps {
		if pgid > 0 && p.pgid == pgid {
			add(p)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			add(c)
		}
	}
	return out
}

// liveOrUnkilled reports whether ps holds a process that is not a zombie, or a zombie not
// in killed (nil: zombies do not count).
func liveOrUnkilled(ps []procInfo, killed map[int]bool) bool {
	for _, p := range ps {
		if !p.zombie || (killed != nil && !killed[p.pid]) {
			return true
		}
	}
	return false
}

// waitExitCode is the status a guardian leaves with for what cmd.Wait returned: the
// upstream's exit code, 128+N for a death by signal N, 1 for anything else.
func waitExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 1
	}
	if code := ee.ExitCode(); code >= 0 {
		return code
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return 1
}
