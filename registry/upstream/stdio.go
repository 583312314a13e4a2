package upstream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/registry/wire"
)

// ChildArg is the first argument with which the gateway binary runs itself as the guardian
// of one stdio upstream (see RunChild). Empty GuardianPath spawns upstreams directly.
const ChildArg = "__mcpgw_child"

// GuardianPath is the binary that understands ChildArg (the mcpgw daemon sets it to itself).
// The guardian keeps an upstream's whole process group from outliving the gateway, even
// when the gateway is killed with SIGKILL.
var GuardianPath string

// MaxMessageBytes bounds one message read from an upstream.
const MaxMessageBytes = 64 << 20

type stdioTransport struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  io.ReadCloser
	log     *slog.Logger
	wmu     sync.Mutex
	doneCh  chan struct{}
	errMu   sync.Mutex
	exitErr error
	closing bool
}

func newStdio(name, command string, args []string, env []string, dir string, log *slog.Logger) *stdioTransport {
	var cmd *exec.Cmd
	if GuardianPath != "" {
		cmd = exec.Command(GuardianPath, append([]string{ChildArg, command}, args...)...)
	} else {
		cmd = exec.Command(command, args...)
	}
	cmd.Env = env
	cmd.Dir = dir
	// A guardian is told with SIGTERM so that it can take its group down; a bare upstream
	// is killed outright.
	sig := syscall.SIGKILL
	if GuardianPath != "" {
		sig = syscall.SIGTERM
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: sig}
	return &stdioTransport{name: name, cmd: cmd, log: log, doneCh: make(chan struct{})}
}

func (t *stdioTransport) start(deliver func([]byte, *Call)) error {
	var err error
	if t.stdin, err = t.cmd.StdinPipe(); err != nil {
		return err
	}
	if t.stdout, err = t.cmd.StdoutPipe(); err != nil {
		return err
	}
	stderr, err := t.cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("start %q: %w", t.cmd.Path, err)
	}
	go t.logStderr(stderr)
	go func() {
		r := bufio.NewReaderSize(t.stdout, 64<<10)
		var readErr error
		for {
			line, err := wire.ReadLine(r, MaxMessageBytes)
			if len(line) > 0 {
				deliver(line, nil)
			}
			if err != nil {
				readErr = err
				break
			}
		}
		waitErr := t.cmd.Wait()
		t.errMu.Lock()
		switch {
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

// readLine reads one newline-terminated message, bounded by MaxMessageBytes.

func (t *stdioTransport) logStderr(r io.Reader) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		t.log.Info("upstream stderr", "server", t.name, "line", s.Text())
	}
}

func (t *stdioTransport) send(ctx context.Context, msg []byte, _ *Call) error {
	select {
	case <-t.doneCh:
		return fmt.Errorf("%w: %v", ErrClosed, t.err())
	default:
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	_, err := t.stdin.Write(buf)
	if err != nil {
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
	pgid := t.cmd.Process.Pid
	select {
	case <-t.doneCh:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return nil
	case <-time.After(500 * time.Millisecond):
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-t.doneCh:
	case <-time.After(2 * time.Second):
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	select {
	case <-t.doneCh:
	case <-time.After(2 * time.Second):
	}
	return nil
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

// commandLine is how a stdio endpoint is shown in logs and health.
func commandLine(command string, args []string) string {
	return strings.TrimSpace(command + " " + strings.Join(args, " "))
}
