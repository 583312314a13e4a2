package pluginproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// logBuffer is how long a stderr line may be before it is passed on in pieces (go-plugin's
// PluginLogBufferSize, set to the same value).
const logBuffer = 64 << 10

// procRunner starts and waits for a plugin process for go-plugin. It is go-plugin's own
// command runner plus two things: its stderr is checked line by line before go-plugin
// reads it (go-plugin's log parser panics, in the gateway, on a JSON line whose @message,
// @level or @timestamp is not a string), and the process's exit status is kept for the
// reason the plugin is down. Going through a runner also makes go-plugin put the
// plugin's socket in a private directory of its own (mode 0700).
type procRunner struct {
	cmd    *exec.Cmd
	stdout io.ReadCloser
	raw    io.ReadCloser // the process's stderr
	stderr *io.PipeReader
	errW   *io.PipeWriter
	log    hclog.Logger

	mu      sync.Mutex
	waitErr error
	waited  bool
}

var _ runner.Runner = (*procRunner)(nil)

func newProcRunner(l hclog.Logger, cmd *exec.Cmd) (*procRunner, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	raw, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	return &procRunner{cmd: cmd, stdout: stdout, raw: raw, stderr: pr, errW: pw, log: l}, nil
}

func (r *procRunner) Start(context.Context) error {
	r.log.Debug("starting plugin", "path", r.cmd.Path, "args", r.cmd.Args)
	if err := r.cmd.Start(); err != nil {
		r.errW.Close()
		return err
	}
	go checkLogLines(r.raw, r.errW)
	r.log.Debug("plugin started", "path", r.cmd.Path, "pid", r.cmd.Process.Pid)
	return nil
}

func (r *procRunner) Wait(context.Context) error {
	err := r.cmd.Wait()
	r.mu.Lock()
	r.waitErr, r.waited = err, true
	r.mu.Unlock()
	return err
}

// exit is how the process ended, once Wait returned.
func (r *procRunner) exit() (err error, done bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waitErr, r.waited
}

func (r *procRunner) Kill(context.Context) error {
	if r.cmd.Process == nil {
		return nil
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (r *procRunner) Stdout() io.ReadCloser { return r.stdout }
func (r *procRunner) Stderr() io.ReadCloser { return r.stderr }
func (r *procRunner) Name() string          { return r.cmd.Path }

func (r *procRunner) ID() string {
	if r.cmd.Process == nil {
		return ""
	}
	return fmt.Sprint(r.cmd.Process.Pid)
}

func (r *procRunner) Diagnose(context.Context) string {
	return "the plugin may not be built for this OS and architecture, may not be executable, or may not speak go-plugin's handshake (it must call serve.Main)"
}

func (r *procRunner) PluginToHost(n, a string) (string, string, error) { return n, a, nil }
func (r *procRunner) HostToPlugin(n, a string) (string, string, error) { return n, a, nil }

// checkLogLines copies a plugin's stderr to w line by line, turning a JSON line that
// go-plugin's parser would panic on into plain text.
func checkLogLines(r io.Reader, w *io.PipeWriter) {
	br := bufio.NewReaderSize(r, logBuffer)
	whole := true // the current piece starts a line
	for {
		line, isPrefix, err := br.ReadLine()
		if err != nil {
			w.CloseWithError(err)
			return
		}
		if whole && !isPrefix && !safeLogLine(line) {
			line = append([]byte("(log line with malformed hclog fields) "), line...)
		}
		out := line
		if !isPrefix {
			out = append(line, '\n')
		}
		if _, err := w.Write(out); err != nil {
			io.Copy(io.Discard, r) // go-plugin stopped reading: drain so the plugin never blocks
			return
		}
		whole = !isPrefix
	}
}

// safeLogLine reports whether go-plugin can parse the line without panicking: not a JSON
// object, or one whose hclog fields are strings.
func safeLogLine(line []byte) bool {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' {
		return true
	}
	var m map[string]any
	if json.Unmarshal(t, &m) != nil {
		return true
	}
	for _, k := range []string{"@message", "@level", "@timestamp"} {
		if v, ok := m[k]; ok {
			if _, str := v.(string); !str {
				return false
			}
		}
	}
	return true
}
