package upstream

import (
	"os/exec"
	"runtime"
	"slices"
	"testing"
)

func pids(ps []procInfo) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.pid)
	}
	slices.Sort(out)
	return out
}

// treeAndGroup finds what the macOS guardian must stop: its descendants (also those in
// another group or session), and its group's other members (also orphans reparented to
// init), never itself, its parent or strangers.
func TestTreeAndGroup(t *testing.T) {
	const gw, guard = 100, 200
	ps := []procInfo{
		{pid: 1, ppid: 0, pgid: 1},
		{pid: gw, ppid: 1, pgid: gw},         // the gateway
		{pid: guard, ppid: gw, pgid: guard},  // the guardian, leading its group
		{pid: 201, ppid: guard, pgid: guard}, // the upstream
		{pid: 202, ppid: 201, pgid: 202},     // setsid'd child, parent alive
		{pid: 203, ppid: 202, pgid: 202},     // its child
		{pid: 204, ppid: 1, pgid: guard},     // double-forked orphan, still in the group
		{pid: 205, ppid: 1, pgid: 205},       // setsid'd orphan: out of reach
		{pid: 206, ppid: 201, pgid: guard, zombie: true},
		{pid: 300, ppid: gw, pgid: gw}, // another child of the gateway
		{pid: 400, ppid: 1, pgid: 400}, // a stranger
	}
	got := pids(treeAndGroup(ps, guard, guard))
	if want := []int{201, 202, 203, 204, 206}; !slices.Equal(got, want) {
		t.Errorf("tree and group = %v, want %v", got, want)
	}
	// Not leading a group (run by hand): descendants only.
	got = pids(treeAndGroup(ps, guard, 0))
	if want := []int{201, 202, 203, 206}; !slices.Equal(got, want) {
		t.Errorf("tree alone = %v, want %v", got, want)
	}
	// A parent loop in a listing taken mid-change does not hang it.
	loop := []procInfo{{pid: 2, ppid: 3}, {pid: 3, ppid: 2}, {pid: 4, ppid: 2}}
	if got := pids(treeAndGroup(loop, 2, 0)); !slices.Equal(got, []int{3, 4}) {
		t.Errorf("loop: %v", got)
	}
}

func TestLiveOrUnkilled(t *testing.T) {
	z := []procInfo{{pid: 5, zombie: true}}
	if liveOrUnkilled(z, nil) {
		t.Error("a zombie counted as running")
	}
	if !liveOrUnkilled(z, map[int]bool{}) {
		t.Error("a zombie not yet sent SIGKILL counted as gone")
	}
	if liveOrUnkilled(z, map[int]bool{5: true}) {
		t.Error("a killed zombie counted as running")
	}
	if !liveOrUnkilled([]procInfo{{pid: 6}}, map[int]bool{6: true}) {
		t.Error("a running process counted as gone")
	}
}

func TestWaitExitCode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("runs sh")
	}
	for _, c := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 7", 7},
		{"kill -9 $$", 128 + 9},
	} {
		err := exec.Command("sh", "-c", c.script).Run()
		if got := waitExitCode(err); got != c.want {
			t.Errorf("%q: %d, want %d (err %v)", c.script, got, c.want, err)
		}
	}
	if got := waitExitCode(exec.ErrNotFound); got != 1 {
		t.Errorf("a non-exit error: %d, want 1", got)
	}
}
