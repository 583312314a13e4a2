package e2e

// Helpers for the stdio bridge tests (bridge_*_test.go): the mcpgw-bridge binary, a
// gateway on a short state dir (the Unix socket path is limited to 107 bytes), a Go
// driver that speaks NDJSON JSON-RPC to the bridge's stdin/stdout, and helper roles of the
// test binary itself (a go-sdk echo server over stdio, a parent process for the bridge).

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
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bridgeHelperArg, as the test binary's first argument, runs a helper role instead of the
// tests (see init below): the gateway spawns `e2e.test bridgeHelperArg echo-server` as a
// stdio upstream, and TestBridgeLifecycle runs `e2e.test bridgeHelperArg bridge-parent`.
const bridgeHelperArg = "mcpgw-e2e-bridge-helper"

func init() {
	if len(os.Args) < 3 || os.Args[1] != bridgeHelperArg {
		return
	}
	switch os.Args[2] {
	case "echo-server":
		os.Exit(runEchoServer())
	case "bridge-parent":
		os.Exit(runBridgeParent(os.Args[3:]))
	default:
		fmt.Fprintf(os.Stderr, "%s: unknown role %q\n", bridgeHelperArg, os.Args[2])
		os.Exit(2)
	}
}

// runEchoServer is a go-sdk v1.8.0 server over stdio with one tool, echo, that returns its
// message unchanged (no prefix; frames up to 64 MiB, where go-sdk's default is 16 MiB).
// The npm server-everything's echo cannot carry 16 MiB: the TypeScript
// SDK's stdio ReadBuffer stops at 10 MiB and its HTTP transports at 4 MiB.
func runEchoServer() int {
	type echoIn struct {
		Message string `json:"message"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpgw-e2e-echo", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns message unchanged."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{MaxLineLength: 64 << 20}); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "echo-server:", err)
		return 1
	}
	return 0
}

// runBridgeParent starts args[1:] (the bridge) with this process's stdin, stdout and
// stderr, writes its pid to the file args[0], and waits for it. Killing this process
// leaves the bridge's stdin open (the test holds the pipe), so only its parent-death
// handling can make it leave.
func runBridgeParent(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "bridge-parent: want PIDFILE CMD [ARGS...]")
		return 2
	}
	c := exec.Command(args[1], args[2:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "bridge-parent:", err)
		return 1
	}
	if err := os.WriteFile(args[0], []byte(strconv.Itoa(c.Process.Pid)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "bridge-parent:", err)
		return 1
	}
	_ = c.Wait()
	return 0
}

// bridgeBin is mcpgw-bridge: $MCPGW_BRIDGE_BIN, else next to $MCPGW_BIN (make build puts
// both in bin/).
func bridgeBin(t testing.TB) string {
	t.Helper()
	gw := needGatewayBin(t)
	p := os.Getenv("MCPGW_BRIDGE_BIN")
	if p == "" {
		p = filepath.Join(filepath.Dir(gw), "mcpgw-bridge")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("mcpgw-bridge missing (make build): %v", err)
	}
	return p
}

// shortStateDir is a fresh state dir directly under the temp dir, short enough for the
// socket path limit; removed when the test ends (after the processes it registered
// later are stopped: cleanups run last-in first-out).
func shortStateDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "gw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	if n := len(filepath.Join(d, "mcpgw.sock")); n > 100 {
		t.Fatalf("socket path %d bytes long: set TMPDIR to something shorter", n)
	}
	return d
}

// startBridgeGateway starts a gateway on stateDir with body (placeholders as in
// startGateway) and returns it with its socket path. Calling it again with the same
// stateDir restarts the daemon on the same state (and socket).
func startBridgeGateway(t testing.TB, stateDir, body string) (*Gateway, string) {
	t.Helper()
	g := startGateway(t, "state_dir: "+yamlQuote(stateDir)+"\n"+body)
	sock := filepath.Join(stateDir, "mcpgw.sock")
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("gateway is healthy but has no socket: %v", err)
	}
	return g, sock
}

// selfExe is the test binary (for the helper roles).
func selfExe(t testing.TB) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ---------------------------------------------------------------------------------------
// A Go driver of the bridge's stdio

// brMsg is any JSON-RPC message the bridge wrote.
type brMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *brRPCError     `json:"error,omitempty"`
}

type brRPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (m brMsg) String() string {
	if m.Error != nil {
		return fmt.Sprintf("id %s error %d %q", m.ID, m.Error.Code, m.Error.Message)
	}
	r := string(m.Result)
	if len(r) > 300 {
		r = r[:300] + "…"
	}
	return fmt.Sprintf("id %s result %s", m.ID, r)
}

// bridgeConn drives a process whose stdin/stdout carry the bridge's NDJSON: the bridge
// itself, or a parent that passed its own stdio down to it.
type bridgeConn struct {
	Name    string
	Pid     int // the process the test started (the bridge, or its parent)
	LogPath string

	stdin  *os.File // write end
	stdout *os.File // read end
	wmu    sync.Mutex
	nextID atomic.Int64

	mu         sync.Mutex
	pending    map[string]chan brMsg
	answered   map[string]int // responses per id
	unexpected []string       // responses to ids nobody asked, unparseable lines
	notes      []brMsg        // notifications and server requests
	noteCh     chan struct{}  // a signal per notification (lossy)
	readErr    error

	eof    chan struct{} // stdout reached EOF
	exited chan struct{} // the process exited
	exitMu sync.Mutex
	exit   error

	stopOnce sync.Once
}

// startBridge starts mcpgw-bridge with args and drives its stdio.
func startBridge(t testing.TB, args ...string) *bridgeConn {
	t.Helper()
	return startBridgeCmd(t, "mcpgw-bridge", bridgeBin(t), args)
}

// startBridgeCmd starts cmd in its own process group with stdin and stdout on pipes the
// test holds and stderr to a log file; it is stopped by pid at cleanup.
func startBridgeCmd(t testing.TB, name, cmd string, args []string) *bridgeConn {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), sanitize(name)+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(cmd, args...)
	c.Stdin, c.Stdout, c.Stderr = inR, outW, logf
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	inR.Close()
	outW.Close()
	bc := &bridgeConn{Name: name, Pid: c.Process.Pid, LogPath: logPath, stdin: inW, stdout: outR,
		pending: map[string]chan brMsg{}, answered: map[string]int{}, noteCh: make(chan struct{}, 1024),
		eof: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		err := c.Wait()
		bc.exitMu.Lock()
		bc.exit = err
		bc.exitMu.Unlock()
		close(bc.exited)
	}()
	go bc.readLoop()
	t.Logf("started %s pid %d: %s %s (log %s)", name, bc.Pid, cmd, strings.Join(args, " "), logPath)
	t.Cleanup(func() {
		bc.stop()
		if t.Failed() {
			t.Logf("--- tail of %s log (%s) ---\n%s", name, logPath, tailFile(logPath, logTailBytes))
		}
	})
	return bc
}

// stop closes stdin, then stops the process group by pid: SIGTERM, SIGKILL after
// stopGrace.
func (bc *bridgeConn) stop() {
	bc.stopOnce.Do(func() {
		bc.stdin.Close()
		select {
		case <-bc.exited:
		case <-time.After(500 * time.Millisecond):
			_ = syscall.Kill(-bc.Pid, syscall.SIGTERM)
			select {
			case <-bc.exited:
			case <-time.After(stopGrace):
				_ = syscall.Kill(-bc.Pid, syscall.SIGKILL)
				select {
				case <-bc.exited:
				case <-time.After(stopGrace):
				}
			}
		}
		_ = syscall.Kill(-bc.Pid, syscall.SIGKILL) // leftovers of the group
		bc.stdout.Close()
	})
}

func (bc *bridgeConn) exitErr() error {
	bc.exitMu.Lock()
	defer bc.exitMu.Unlock()
	return bc.exit
}

func (bc *bridgeConn) readLoop() {
	defer close(bc.eof)
	r := bufio.NewReaderSize(bc.stdout, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			bc.dispatch(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				bc.mu.Lock()
				bc.readErr = err
				bc.mu.Unlock()
			}
			return
		}
	}
}

func (bc *bridgeConn) dispatch(line []byte) {
	var m brMsg
	if err := json.Unmarshal(line, &m); err != nil || m.JSONRPC != "2.0" {
		s := string(line)
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		bc.mu.Lock()
		bc.unexpected = append(bc.unexpected, fmt.Sprintf("not JSON-RPC (%v): %s", err, s))
		bc.mu.Unlock()
		return
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if m.Method != "" {
		bc.notes = append(bc.notes, m)
		select {
		case bc.noteCh <- struct{}{}:
		default:
		}
		return
	}
	key := string(m.ID)
	bc.answered[key]++
	if ch, ok := bc.pending[key]; ok {
		delete(bc.pending, key)
		ch <- m
		return
	}
	bc.unexpected = append(bc.unexpected, "response nobody waits for: "+m.String())
}

// write sends one line (a newline is added).
func (bc *bridgeConn) write(b []byte) error {
	bc.wmu.Lock()
	defer bc.wmu.Unlock()
	_, err := bc.stdin.Write(append(b, '\n'))
	return err
}

// expect registers a wait for the response to id.
func (bc *bridgeConn) expect(id json.RawMessage) <-chan brMsg {
	ch := make(chan brMsg, 1)
	bc.mu.Lock()
	bc.pending[string(id)] = ch
	bc.mu.Unlock()
	return ch
}

// newRequest builds a request with a fresh numeric id.
func (bc *bridgeConn) newRequest(method string, params any) (json.RawMessage, []byte) {
	id := json.RawMessage(strconv.FormatInt(bc.nextID.Add(1), 10))
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return id, b
}

// send writes a request and returns where its response lands.
func (bc *bridgeConn) send(method string, params any) (json.RawMessage, <-chan brMsg, error) {
	id, b := bc.newRequest(method, params)
	ch := bc.expect(id)
	return id, ch, bc.write(b)
}

// errBridgeTimeout is a request that got no answer in time (the bridge hung).
var errBridgeTimeout = errors.New("no answer in time")

// wait waits for a response, the bridge's stdout closing, or timeout.
func (bc *bridgeConn) wait(ch <-chan brMsg, timeout time.Duration) (brMsg, error) {
	select {
	case m := <-ch:
		return m, nil
	case <-bc.eof:
		select {
		case m := <-ch:
			return m, nil
		default:
		}
		return brMsg{}, fmt.Errorf("the bridge's stdout closed (exit: %v)", bc.exitErr())
	case <-time.After(timeout):
		return brMsg{}, fmt.Errorf("%w (%s)", errBridgeTimeout, timeout)
	}
}

// request sends and waits.
func (bc *bridgeConn) request(method string, params any, timeout time.Duration) (brMsg, error) {
	_, ch, err := bc.send(method, params)
	if err != nil {
		return brMsg{}, fmt.Errorf("write %s: %w", method, err)
	}
	return bc.wait(ch, timeout)
}

// notify sends a notification.
func (bc *bridgeConn) notify(method string, params any) error {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return bc.write(b)
}

// bridgeProtocolVersion is what the Go driver offers at initialize.
const bridgeProtocolVersion = "2025-06-18"

// initialize runs the MCP handshake and returns the initialize result.
func (bc *bridgeConn) initialize(t testing.TB) json.RawMessage {
	t.Helper()
	m, err := bc.request("initialize", map[string]any{
		"protocolVersion": bridgeProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpgw-e2e-bridge-driver", "version": "1.0.0"},
	}, 30*time.Second)
	if err != nil {
		t.Fatalf("%s: initialize: %v", bc.Name, err)
	}
	if m.Error != nil || m.Result == nil {
		t.Fatalf("%s: initialize: %s", bc.Name, m)
	}
	if err := bc.notify("notifications/initialized", nil); err != nil {
		t.Fatalf("%s: notifications/initialized: %v", bc.Name, err)
	}
	return m.Result
}

// tools lists every tool name (all pages, bounded).
func (bc *bridgeConn) tools(t testing.TB) []string {
	t.Helper()
	names, err := bc.tryTools(30 * time.Second)
	if err != nil {
		t.Fatalf("%s: tools/list: %v", bc.Name, err)
	}
	return names
}

func (bc *bridgeConn) tryTools(timeout time.Duration) ([]string, error) {
	var names []string
	cursor := ""
	for page := 0; page < 100; page++ {
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		m, err := bc.request("tools/list", params, timeout)
		if err != nil {
			return nil, err
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s", m)
		}
		var r struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Result, &r); err != nil {
			return nil, err
		}
		for _, tl := range r.Tools {
			names = append(names, tl.Name)
		}
		if r.NextCursor == "" || r.NextCursor == cursor {
			return names, nil
		}
		cursor = r.NextCursor
	}
	return names, errors.New("more than 100 pages")
}

// toolCallParams are the params of a tools/call (with a progress token when not "").
func toolCallParams(name string, args any, progressToken string) map[string]any {
	p := map[string]any{"name": name, "arguments": args}
	if args == nil {
		p["arguments"] = map[string]any{}
	}
	if progressToken != "" {
		p["_meta"] = map[string]any{"progressToken": progressToken}
	}
	return p
}

// callTool calls a tool and returns the joined text of a successful (not isError) result.
func (bc *bridgeConn) callTool(name string, args any, timeout time.Duration) (string, error) {
	m, err := bc.request("tools/call", toolCallParams(name, args, ""), timeout)
	if err != nil {
		return "", err
	}
	return callText(m)
}

// callText is the text of a tools/call response, or an error for a JSON-RPC error or
// an isError result.
func callText(m brMsg) (string, error) {
	if m.Error != nil {
		return "", fmt.Errorf("JSON-RPC error %d: %s", m.Error.Code, m.Error.Message)
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		return "", fmt.Errorf("result: %v", err)
	}
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	text := strings.Join(parts, "\n")
	if r.IsError {
		if len(text) > 300 {
			text = text[:300]
		}
		return "", fmt.Errorf("isError result: %s", text)
	}
	return text, nil
}

// notifications returns the notifications (and server requests) received so far.
func (bc *bridgeConn) notifications() []brMsg {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return append([]brMsg(nil), bc.notes...)
}

// waitNotification waits until a notification matching pred has arrived.
func (bc *bridgeConn) waitNotification(timeout time.Duration, pred func(brMsg) bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		for _, n := range bc.notifications() {
			if pred(n) {
				return true
			}
		}
		select {
		case <-bc.noteCh:
		case <-deadline.C:
			return false
		}
	}
}

// protocolProblems lists unparseable output and answers to ids never asked.
func (bc *bridgeConn) protocolProblems() []string {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	out := append([]string(nil), bc.unexpected...)
	if bc.readErr != nil {
		out = append(out, "read error: "+bc.readErr.Error())
	}
	return out
}

// answerCount is how many responses carried id.
func (bc *bridgeConn) answerCount(id json.RawMessage) int {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return bc.answered[string(id)]
}

// waitExit waits until the process the test started has exited.
func (bc *bridgeConn) waitExit(timeout time.Duration) bool {
	select {
	case <-bc.exited:
		return true
	case <-time.After(timeout):
		return false
	}
}

// log is the process's stderr so far.
func (bc *bridgeConn) log() string {
	b, _ := os.ReadFile(bc.LogPath)
	return string(b)
}

// vmRSSKiB reads VmRSS of pid from /proc (KiB).
func vmRSSKiB(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, errors.New("no VmRSS line")
}
