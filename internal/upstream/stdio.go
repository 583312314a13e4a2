package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// ChildArg is the first argument with which the gateway binary runs itself as the guardian
// of one stdio upstream (see RunChild). An empty Dialer.GuardianPath spawns upstreams
// directly.
const ChildArg = "__mcpgw_child"

// MaxMessageBytes is the default bound of one message read from an upstream (the setting
// upstream.max_message_bytes).
const MaxMessageBytes = 32 << 20

// stdioWriteTimeout bounds writing one message that has no call deadline of its own (a
// notification, a reply): an upstream that stops reading its stdin must not hold the
// writer, and so every session on the instance, for ever.
const stdioWriteTimeout = 30 * time.Second

type stdioTransport struct {
	name   string
	cmd    *exec.Cmd
	stdin  *os.File // the pipe's write end: a pollable file, so writes can have deadlines
	stdout io.ReadCloser
	log    *slog.Logger
	maxMsg int
	// guarded: the process is a guardian (Dialer.GuardianPath), which takes its tree down itself.
	guarded bool
	wmu     sync.Mutex
	wbuf    []byte // the line being written, under wmu
	doneCh  chan struct{}
	errMu   sync.Mutex
	// exitErr says why the transport ended; failure, set first, wins over what the exit
	// looked like (a process killed for an oversized message exits with a signal).
	exitErr error
	failure error
	closing bool
	// stderr keeps the last lines of the process's stderr (starterr.go).
	stderr *stderrTail
}

// stdioSpec is what starts one stdio upstream.
type stdioSpec struct {
	name, command string
	args, env     []string
	dir           string
	maxMessage    int    // 0: MaxMessageBytes
	guardian      string // the guardian binary (Dialer.GuardianPath; "": none)
}

func newStdio(sp stdioSpec, log *slog.Logger) *stdioTransport {
	var cmd *exec.Cmd
	if sp.guardian != "" {
		cmd = exec.Command(sp.guardian, append([]string{ChildArg, sp.command}, sp.args...)...)
	} else {
		cmd = exec.Command(sp.command, sp.args...)
	}
	cmd.Env = sp.env
	cmd.Dir = sp.dir
	// Its own process group, and on Linux a parent-death signal (stdio_linux.go,
	// stdio_darwin.go, stdio_windows.go).
	cmd.SysProcAttr = stdioProcAttr(sp.guardian != "")
	maxMsg := sp.maxMessage
	if maxMsg <= 0 {
		maxMsg = MaxMessageBytes
	}
	return &stdioTransport{name: sp.name, cmd: cmd, log: log, maxMsg: maxMsg, guarded: sp.guardian != "", doneCh: make(chan struct{}), stderr: newStderrTail()}
}

func (t *stdioTransport) start(deliver func([]byte, *Call)) error {
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	t.cmd.Stdin, t.stdin = pr, pw
	if t.stdout, err = t.cmd.StdoutPipe(); err != nil {
		return err
	}
	stderr, err := t.cmd.StderrPipe()
	if err != nil {
		return err
	}
	containChildren(t.log)
	if err := t.cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return fmt.Errorf("start %q: %w", t.cmd.Path, err)
	}
	pr.Close() // the child's end
	go t.logStderr(stderr)
	go func() {
		r := bufio.NewReaderSize(t.stdout, 64<<10)
		var readErr error
		for {
			line, err := wire.ReadLine(r, t.maxMsg)
			if len(line) > 0 {
				deliver(line, nil)
			}
			if errors.Is(err, wire.ErrLineTooLarge) {
				// The message cannot be read, so the call it answers cannot be told; the
				// instance is restarted rather than left to answer calls out of step.
				t.fail(&RestartError{fmt.Sprintf("the upstream sent a message larger than %d bytes (upstream.max_message_bytes); instance restarted", t.maxMsg)})
				readErr = err
				break
			}
			if err != nil {
				readErr = err
				break
			}
		}
		// Wait closes the stderr pipe: let its reader take the last lines first (a
		// start failure reports them), but not wait on a child that keeps it open.
		select {
		case <-t.stderr.done:
		case <-time.After(100 * time.Millisecond):
		}
		waitErr := t.cmd.Wait()
		t.errMu.Lock()
		switch {
		case t.failure != nil:
			t.exitErr = t.failure
		case t.closing:
			t.exitErr = ErrClosed
		case waitErr != nil:
			t.exitErr = fmt.Errorf("process exited: %v", waitErr)
		case readErr != nil && !errors.Is(readErr, io.EOF):
			t.exitErr = readErr
		default:
			t.exitErr = errors.New("process exited")
		}
		t.errMu.Unlock()
		close(t.doneCh)
	}()
	return nil
}

// RestartError is why the gateway ended a working instance that one message left unusable
// (an oversized message, a half-written line). Whoever supervises the instance starts a
// new one at once, without the backoff of a failing upstream, and keeps its tools listed.
type RestartError struct{ Reason string }

func (e *RestartError) Error() string { return e.Reason }

// fail ends the instance for a reason of the gateway's (an oversized message, a write that
// could not finish): the reason is what its calls report, and the process group is killed.
func (t *stdioTransport) fail(reason error) {
	t.errMu.Lock()
	if t.failure == nil {
		t.failure = reason
	}
	t.errMu.Unlock()
	t.log.Warn("stdio upstream failed; killing it", "server", t.name, "err", reason)
	if t.stdin != nil {
		_ = t.stdin.Close()
	}
	if t.cmd.Process != nil {
		go t.terminate() // not here: fail may run on the reader, which terminate waits for
	}
}

func (t *stdioTransport) logStderr(r io.Reader) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	defer close(t.stderr.done)
	for s.Scan() {
		t.stderr.add(s.Text())
		t.log.Info("upstream stderr", "server", t.name, "line", s.Text())
	}
}

func (t *stdioTransport) send(ctx context.Context, msg []byte, _ *Call) error {
	select {
	case <-t.doneCh:
		return fmt.Errorf("%w: %v", ErrClosed, t.err())
	default:
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(stdioWriteTimeout)
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	// One line by construction: a raw CR or LF in what a client sent cannot start a second
	// message on a line-reading upstream.
	t.wbuf = wire.AppendLine(t.wbuf[:0], msg)
	_ = t.stdin.SetWriteDeadline(deadline)
	n, err := t.stdin.Write(t.wbuf)
	if cap(t.wbuf) > 1<<20 {
		t.wbuf = nil
	}
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			if n > 0 {
				// Half a line is on the pipe: the next message would be read as its end.
				t.fail(&RestartError{"the upstream stopped reading its input mid-message; instance restarted"})
			}
			return fmt.Errorf("%w: the upstream did not read its input in time", context.DeadlineExceeded)
		}
		return fmt.Errorf("%w: write: %v", ErrClosed, err)
	}
	return nil
}

func (t *stdioTransport) afterInit(string) {}

func (t *stdioTransport) interrupt(*Call) {}

// close ends the process group: stdin closed, then SIGTERM, then SIGKILL.
func (t *stdioTransport) close() error {
	t.errMu.Lock()
	t.closing = true
	t.errMu.Unlock()
	if t.cmd.Process == nil {
		return nil
	}
	if t.stdin != nil {
		_ = t.stdin.Close()
	}
	select {
	case <-t.doneCh:
		killGroup(t.cmd.Process)
		return nil
	case <-time.After(500 * time.Millisecond):
	}
	t.terminate()
	return nil
}

// terminate ends the instance. A guardian is sent SIGTERM alone and given time: it kills
// its whole tree, including descendants that left the process group, which a SIGKILL of
// the group would orphan. A bare upstream gets SIGTERM, then its group SIGKILL. (On
// Windows, which has neither, each step terminates the process: see stdio_windows.go.)
func (t *stdioTransport) terminate() {
	p := t.cmd.Process
	wait := 2 * time.Second
	if t.guarded {
		termProcess(p)
		wait = 5 * time.Second
	} else {
		termGroup(p)
	}
	select {
	case <-t.doneCh:
	case <-time.After(wait):
	}
	killGroup(p)
	select {
	case <-t.doneCh:
	case <-time.After(2 * time.Second):
	}
}

func (t *stdioTransport) done() <-chan struct{} { return t.doneCh }

func (t *stdioTransport) err() error {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	return t.exitErr
}

// Pid is the process id of the upstream (or its guardian).
func (t *stdioTransport) Pid() int {
	if t.cmd.Process == nil {
		return 0
	}
	return t.cmd.Process.Pid
}
