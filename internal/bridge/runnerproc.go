package bridge

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/mcpgw/mcpgw/internal/runnerlink"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// runnerProc is one stdio server a runner started for the gateway.
type runnerProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	wmu   sync.Mutex
	wbuf  []byte
	done  chan struct{}
	stop  sync.Once
}

// newRunnerStarter starts servers as the gateway asks: the runner's own environment with
// the spec's on top (the gateway sends the server's env and the executor's env_injection,
// never its own environment), in the spec's directory, as a process group of its own.
func newRunnerStarter(log *slog.Logger, maxMessage int) runnerlink.Starter {
	if maxMessage <= 0 {
		maxMessage = runnerlink.DefaultMaxMessage
	}
	return func(spec runnerlink.Spec, out runnerlink.Outputs) (runnerlink.Process, error) {
		cmd := exec.Command(spec.Command, spec.Args...)
		cmd.Env = os.Environ()
		for k, v := range spec.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Dir = spec.Dir
		cmd.SysProcAttr = runnerProcAttr()
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		log.Info("server started", "server", spec.Name, "pid", cmd.Process.Pid)
		p := &runnerProc{cmd: cmd, stdin: stdin, done: make(chan struct{})}
		errDone := make(chan struct{})
		go func() {
			defer close(errDone)
			s := bufio.NewScanner(stderr)
			s.Buffer(make([]byte, 64<<10), 1<<20)
			for s.Scan() {
				out.Stderr(s.Text())
			}
		}()
		go func() {
			r := bufio.NewReaderSize(stdout, 64<<10)
			var readErr error
			for {
				line, err := wire.ReadLine(r, maxMessage)
				if len(line) > 0 {
					out.Message(line)
				}
				if err != nil {
					readErr = err
					break
				}
			}
			if errors.Is(readErr, wire.ErrLineTooLarge) {
				p.Stop()
			}
			select {
			case <-errDone:
			case <-time.After(100 * time.Millisecond):
			}
			werr := cmd.Wait()
			close(p.done)
			switch {
			case errors.Is(readErr, wire.ErrLineTooLarge):
				out.Exited(fmt.Errorf("it sent a message larger than %d bytes", maxMessage))
			case werr != nil:
				out.Exited(werr)
			default:
				out.Exited(nil)
			}
			log.Info("server ended", "server", spec.Name, "err", werr)
		}()
		return p, nil
	}
}

// Write gives the server one message, as one line on its stdin.
func (p *runnerProc) Write(msg []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.wbuf = wire.AppendLine(p.wbuf[:0], msg)
	_, err := p.stdin.Write(p.wbuf)
	if cap(p.wbuf) > 1<<20 {
		p.wbuf = nil
	}
	return err
}

// Stop ends the server: stdin closed, then its group is sent SIGTERM, then SIGKILL.
func (p *runnerProc) Stop() {
	p.stop.Do(func() {
		_ = p.stdin.Close()
		go func() {
			select {
			case <-p.done:
				killGroup(p.cmd.Process)
				return
			case <-time.After(500 * time.Millisecond):
			}
			termGroup(p.cmd.Process)
			select {
			case <-p.done:
			case <-time.After(2 * time.Second):
			}
			killGroup(p.cmd.Process)
		}()
	})
}
