package main

// Child processes: every one gets its own process group, a log file, and is stopped by
// its pid (SIGTERM, then SIGKILL to it and its group after a bound). A bench that dies
// takes them along (Pdeathsig).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

type proc struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	started time.Time
	exited  chan struct{}
	stdin   io.WriteCloser // stdio children only
	stdout  io.ReadCloser  // stdio children only
	once    sync.Once
}

// procs tracks every child so that a failing run still stops them all.
var (
	procsMu sync.Mutex
	allProc []*proc
)

func track(p *proc) {
	procsMu.Lock()
	allProc = append(allProc, p)
	procsMu.Unlock()
}

// stopAll stops every child still running, newest first.
func stopAll() {
	procsMu.Lock()
	ps := append([]*proc(nil), allProc...)
	allProc = nil
	ts := allTargets
	allTargets = nil
	procsMu.Unlock()
	for _, t := range ts {
		t.client.CloseIdleConnections()
	}
	for i := len(ps) - 1; i >= 0; i-- {
		ps[i].stop()
	}
}

func newCmd(dir, name, bin string, args []string, env []string) (*exec.Cmd, *os.File, string, error) {
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, nil, "", err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd, logf, logPath, nil
}

// startReady runs a child that prints "READY <url>" and returns once it did (bounded).
func startReady(dir, name, bin string, args []string, env []string) (*proc, string, error) {
	cmd, logf, logPath, err := newCmd(dir, name, bin, args, env)
	if err != nil {
		return nil, "", err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, "", err
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, "", fmt.Errorf("start %s: %w", name, err)
	}
	track(p)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			if u, ok := strings.CutPrefix(line, "READY "); ok {
				select {
				case lines <- u:
				default:
				}
			}
			fmt.Fprintln(logf, line)
		}
	}()
	go func() { _ = cmd.Wait(); logf.Close(); close(p.exited) }()
	select {
	case u := <-lines:
		return p, u, nil
	case <-p.exited:
		return nil, "", fmt.Errorf("%s exited before it was ready:\n%s", name, tail(logPath))
	case <-time.After(30 * time.Second):
		p.stop()
		return nil, "", fmt.Errorf("%s not ready within 30s:\n%s", name, tail(logPath))
	}
}

// startStdio runs a child whose stdin and stdout the caller speaks on.
func startStdio(dir, name, bin string, args []string, env []string) (*proc, error) {
	cmd, logf, logPath, err := newCmd(dir, name, bin, args, env)
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		logf.Close()
		return nil, err
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		logf.Close()
		return nil, err
	}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	track(p)
	go func() { _ = cmd.Wait(); logf.Close(); close(p.exited) }()
	return p, nil
}

// startPlain runs a child that signals readiness some other way (mcpgw: /healthz).
func startPlain(dir, name, bin string, args []string, env []string) (*proc, error) {
	cmd, logf, logPath, err := newCmd(dir, name, bin, args, env)
	if err != nil {
		return nil, err
	}
	cmd.Stdout = logf
	p := &proc{name: name, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	track(p)
	go func() { _ = cmd.Wait(); logf.Close(); close(p.exited) }()
	return p, nil
}

// stop sends SIGTERM to the child, waits up to 5 s, then SIGKILLs it and its group.
func (p *proc) stop() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		t0 := time.Now()
		defer func() {
			if d := time.Since(t0); d > 500*time.Millisecond {
				logf("stopping %s (pid %d) took %s", p.name, p.cmd.Process.Pid, d.Round(time.Millisecond))
			}
		}()
		if p.stdin != nil {
			_ = p.stdin.Close()
		}
		pid := p.cmd.Process.Pid
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			select {
			case <-p.exited:
			case <-time.After(5 * time.Second):
			}
		}
		// Anything left in its group (a stdio upstream whose guardian died) goes too.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	})
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// freeAddr picks a free loopback port (closed again; the child binds it).
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// waitHTTP polls url until it answers 200 (bounded).
// waitStarted waits until mcpgw's /readyz at base no longer says starting: its servers and
// plugins have first come up or failed (the gateway serves at once, with what is up).
func waitStarted(ctx context.Context, base string, p *proc, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	c := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		if resp, err := c.Get(base + "/readyz"); err == nil {
			var r struct {
				Starting bool `json:"starting"`
			}
			err = json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
			if err == nil && !r.Starting {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited:\n%s", p.name, tail(p.logPath))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return errors.New(p.name + " still starting its upstreams at " + base + ":\n" + tail(p.logPath))
}

func waitHTTP(ctx context.Context, url string, p *proc, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	c := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		if resp, err := c.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited:\n%s", p.name, tail(p.logPath))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return errors.New(p.name + " did not answer " + url + " in time:\n" + tail(p.logPath))
}
