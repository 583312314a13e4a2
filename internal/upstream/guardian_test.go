//go:build linux

package upstream

// The guardian (RunChild) run for real: the test binary re-executes itself as
// `TESTBINARY __mcpgw_child sh -c SCRIPT`, as the gateway does with its own binary. Every
// process a test starts carries a marker in its environment, so that the test can find
// all of them (also those whose pids it never learnt) and kill survivors at cleanup.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ChildArg {
		RunChild(os.Args[2:])
		return
	}
	if os.Getenv(listenChildEnv) != "" {
		listenChild() // busypoll_linux_test.go
		return
	}
	if os.Getenv(silentServerEnv) != "" {
		silentServer() // discover_probe_test.go
		return
	}
	os.Exit(m.Run())
}

const (
	markEnv = "MCPGW_GUARDIAN_TEST_MARK"
	// goneWithin bounds how long after the event every descendant must be gone.
	goneWithin = 5 * time.Second
)

// leafScript starts a `sleep 600` that writes its pid to $D/name, in a new session
// (setsid), or in a new session after a double fork (the intermediate shell exits, so
// the sleep is an orphan).
func leafScript(name, how string) string {
	leaf := `sh -c 'echo $$ > "$D/` + name + `.tmp" && mv "$D/` + name + `.tmp" "$D/` + name + `"; exec sleep 600'`
	switch how {
	case "setsid":
		return "setsid " + leaf + " &\n"
	case "double-fork":
		return "( setsid " + leaf + " & )\n"
	}
	return leaf + " &\n"
}

type guardianRun struct {
	cmd  *exec.Cmd
	pid  int // the guardian's
	dir  string
	mark string
	done chan struct{}
	ws   syscall.WaitStatus
}

// startGuardianScript starts the guardian over `sh -c script` in its own process group
// (as the gateway does), with D set to a temp dir for pid files.
func startGuardianScript(t *testing.T, script string) *guardianRun {
	t.Helper()
	r := &guardianRun{dir: t.TempDir(), mark: newMark(t), done: make(chan struct{})}
	r.cmd = exec.Command(os.Args[0], ChildArg, "sh", "-c", script)
	r.cmd.Env = append(os.Environ(), "D="+r.dir, markEnv+"="+r.mark)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.pid = r.cmd.Process.Pid
	go func() {
		_ = r.cmd.Wait()
		if st, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			r.ws = st
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-r.pid, syscall.SIGKILL)
		killMarked(r.mark)
		select {
		case <-r.done:
		case <-time.After(5 * time.Second):
		}
	})
	return r
}

func newMark(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "guardian-test-" + hex.EncodeToString(b)
}

// pidFile waits (bounded) for $D/name and returns the pid in it.
func (r *guardianRun) pidFile(t *testing.T, name string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(r.dir, name)); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pid in %s within 10 s", name)
	return 0
}

func (r *guardianRun) waitExit(t *testing.T, within time.Duration) syscall.WaitStatus {
	t.Helper()
	select {
	case <-r.done:
		return r.ws
	case <-time.After(within):
		t.Fatalf("the guardian did not exit within %s", within)
		return 0
	}
}

// markedProcs lists live (not zombie) processes whose environment holds mark.
func markedProcs(mark string) []procEntry {
	ents, _ := os.ReadDir("/proc")
	want := []byte(markEnv + "=" + mark)
	var out []procEntry
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		if p, ok := readStat(pid); ok && p.state != 'Z' && p.state != 'X' {
			out = append(out, p)
		}
	}
	return out
}

// killMarked kills every marked process, in rounds (bounded) until none is left: one
// that forks may start another while it is killed.
func killMarked(mark string) {
	for round := 0; round < 50; round++ {
		ps := markedProcs(mark)
		if len(ps) == 0 {
			return
		}
		for _, p := range ps {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func describe(ps []procEntry) string {
	var b strings.Builder
	for _, p := range ps {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid))
		fmt.Fprintf(&b, "\n  pid %d ppid %d %c: %s", p.pid, p.ppid, p.state, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
	}
	return b.String()
}

// expectAllGone waits up to goneWithin for every process the run started to be gone.
func (r *guardianRun) expectAllGone(t *testing.T, after string) {
	t.Helper()
	deadline := time.Now().Add(goneWithin)
	var left []procEntry
	for {
		left = markedProcs(r.mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Errorf("%s after %s, %d processes the guardian started are still alive:%s", goneWithin, after, len(left), describe(left))
}

func alive(pid int) bool {
	p, ok := readStat(pid)
	return ok && p.state != 'Z' && p.state != 'X'
}

// escapeScript starts leaves in a new session and after a double fork, plus one that
// stays in the group, then execs a long sleep as the upstream.
var escapeScript = leafScript("setsid", "setsid") + leafScript("double", "double-fork") + leafScript("plain", "") +
	"exec sleep 600\n"

func (r *guardianRun) leaves(t *testing.T) []int {
	t.Helper()
	pids := []int{r.pidFile(t, "setsid"), r.pidFile(t, "double"), r.pidFile(t, "plain")}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("leaf %d is not running", pid)
		}
	}
	// The first two really left the guardian's session (and so its process group).
	gsid, err := getsid(r.pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids[:2] {
		sid, err := getsid(pid)
		if err != nil || sid == gsid {
			t.Fatalf("leaf %d: session %d (err %v), want one other than the guardian's %d", pid, sid, err, gsid)
		}
	}
	return pids
}

func getsid(pid int) (int, error) {
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(sid), nil
}

// TestGuardianTermKillsEscapedDescendants: SIGTERM (what the kernel sends the guardian
// when the gateway dies, and what the gateway's close sends) takes down descendants in
// other sessions too.
func TestGuardianTermKillsEscapedDescendants(t *testing.T) {
	r := startGuardianScript(t, escapeScript)
	pids := r.leaves(t)
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ws := r.waitExit(t, goneWithin)
	if ws.ExitStatus() != 143 {
		t.Errorf("guardian exit: %v, want status 143", ws)
	}
	r.expectAllGone(t, "SIGTERM to the guardian")
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("leaf %d survived", pid)
		}
	}
}

// TestGuardianUpstreamExitKillsEscapedDescendants: when the upstream exits on its own,
// what it left behind goes too, and the guardian leaves with the upstream's status.
func TestGuardianUpstreamExitKillsEscapedDescendants(t *testing.T) {
	script := leafScript("setsid", "setsid") + leafScript("double", "double-fork") + leafScript("plain", "") + `
i=0
while [ $i -lt 400 ] && { [ ! -s "$D/setsid" ] || [ ! -s "$D/double" ] || [ ! -s "$D/plain" ]; }; do
	i=$((i+1)); sleep 0.025
done
exit 7
`
	r := startGuardianScript(t, script)
	ws := r.waitExit(t, 15*time.Second)
	if !ws.Exited() || ws.ExitStatus() != 7 {
		t.Errorf("guardian exit: %v, want status 7 (the upstream's)", ws)
	}
	r.expectAllGone(t, "the upstream exited")
}

// TestGuardianParentGoneKillsEscapedDescendants: a guardian whose parent dies without a
// parent-death signal (here its parent is a shell, killed with SIGKILL) notices the new
// parent and takes its tree down.
func TestGuardianParentGoneKillsEscapedDescendants(t *testing.T) {
	dir := t.TempDir()
	mark := newMark(t)
	t.Cleanup(func() { killMarked(mark) })
	inner := escapeScript
	outer := `"$G" ` + ChildArg + ` sh -c "$INNER" & echo $! > "$D/guardian"; wait`
	sh := exec.Command("sh", "-c", outer)
	sh.Env = append(os.Environ(), "D="+dir, "G="+os.Args[0], "INNER="+inner, markEnv+"="+mark)
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	shDone := make(chan struct{})
	go func() { _ = sh.Wait(); close(shDone) }()
	r := &guardianRun{dir: dir, mark: mark}
	guardian := r.pidFile(t, "guardian")
	r.pid = guardian
	r.leaves(t)
	if err := syscall.Kill(sh.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-shDone
	r.expectAllGone(t, "the guardian's parent was killed")
	// The guardian exits after its last descendant: give it the same bound to finish.
	for deadline := time.Now().Add(goneWithin); alive(guardian) && time.Now().Before(deadline); {
		time.Sleep(25 * time.Millisecond)
	}
	if alive(guardian) {
		t.Errorf("guardian %d still running %s after its descendants were gone", guardian, goneWithin)
	}
}

// TestGuardianReapsOrphans: an orphan reparented to the guardian (it is a subreaper) is
// waited for when it exits, not left a zombie while the upstream runs.
func TestGuardianReapsOrphans(t *testing.T) {
	script := `( sh -c 'echo $$ > "$D/orphan.tmp" && mv "$D/orphan.tmp" "$D/orphan"; exec sleep 0.2' & )
exec sleep 600
`
	r := startGuardianScript(t, script)
	orphan := r.pidFile(t, "orphan")
	deadline := time.Now().Add(goneWithin)
	for {
		p, ok := readStat(orphan)
		if !ok {
			break // reaped
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d still in /proc (state %c, ppid %d; guardian %d) %s after it exited",
				orphan, p.state, p.ppid, r.pid, goneWithin)
		}
		time.Sleep(25 * time.Millisecond)
	}
	select {
	case <-r.done:
		t.Fatalf("the guardian exited (%v) while its upstream runs", r.ws)
	default:
	}
}

// TestGuardianKillsForkingDescendant: a descendant that keeps starting new sessions while
// the guardian kills is caught by the later rounds.
func TestGuardianKillsForkingDescendant(t *testing.T) {
	script := `setsid sh -c 'echo $$ > "$D/loop.tmp" && mv "$D/loop.tmp" "$D/loop"; while :; do setsid sleep 600 & sleep 0.005; done' &
exec sleep 600
`
	r := startGuardianScript(t, script)
	r.pidFile(t, "loop")
	// Let it start a few (bounded: the loop starts one every 5 ms).
	deadline := time.Now().Add(goneWithin)
	for len(markedProcs(r.mark)) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("the forking loop started fewer than 4 processes in %s", goneWithin)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r.waitExit(t, goneWithin)
	r.expectAllGone(t, "SIGTERM to the guardian")
}

// TestGuardianStartFailure: a command that cannot start gives 127 and a message.
func TestGuardianStartFailure(t *testing.T) {
	cmd := exec.Command(os.Args[0], ChildArg, "/nonexistent/mcpgw-guardian-test")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 {
		t.Fatalf("exit: %v, want status 127", err)
	}
	if !strings.Contains(stderr.String(), "mcpgw child: start") {
		t.Errorf("stderr %q", stderr.String())
	}
}

// TestDescendantsOf finds a grandchild in a session of its own.
func TestDescendantsOf(t *testing.T) {
	dir := t.TempDir()
	mark := newMark(t)
	t.Cleanup(func() { killMarked(mark) })
	sh := exec.Command("sh", "-c", leafScript("leaf", "setsid")+"exec sleep 600")
	sh.Env = append(os.Environ(), "D="+dir, markEnv+"="+mark)
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sh.Process.Kill(); _ = sh.Wait() })
	r := &guardianRun{dir: dir}
	leaf := r.pidFile(t, "leaf")
	found := map[int]bool{}
	for _, p := range descendantsOf(os.Getpid()) {
		found[p.pid] = true
	}
	if !found[sh.Process.Pid] || !found[leaf] {
		t.Errorf("descendantsOf(self) = %v, want %d and %d in it", found, sh.Process.Pid, leaf)
	}
}
