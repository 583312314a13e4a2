package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// runnerEvent is one line of js/runner-client.mjs.
type runnerEvent struct {
	Event string   `json:"event"`
	Tools []string `json:"tools"`
	OK    bool     `json:"ok"`
	Text  string   `json:"text"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// runnerClient is a TS-SDK client session driven line by line.
type runnerClient struct {
	t       *testing.T
	n       *sessNode
	mu      sync.Mutex
	changed int // list_changed notifications seen
}

func startRunnerClient(t *testing.T, url string, headers ...string) *runnerClient {
	t.Helper()
	args := []string{"--url", url, "--timeout", "240000"}
	for _, h := range headers {
		args = append(args, "--header", h)
	}
	c := &runnerClient{t: t, n: sessStartNode(t, "js/runner-client.mjs", args...)}
	if ev := c.next(60 * time.Second); ev.Event != "ready" {
		t.Fatalf("runner-client (%v) did not connect: %+v", headers, ev)
	}
	return c
}

// next is the client's next event that is not a list_changed (those are counted).
func (c *runnerClient) next(timeout time.Duration) runnerEvent {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		line, ok := c.n.next(time.Until(deadline))
		if !ok {
			c.t.Fatalf("runner-client: no event within %s", timeout)
		}
		var ev runnerEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			c.t.Fatalf("runner-client printed %q", line)
		}
		if ev.Event == "list_changed" {
			c.mu.Lock()
			c.changed++
			c.mu.Unlock()
			continue
		}
		return ev
	}
}

func (c *runnerClient) do(cmd map[string]any) runnerEvent {
	c.t.Helper()
	b, _ := json.Marshal(cmd)
	if err := c.n.send(string(b)); err != nil {
		c.t.Fatal(err)
	}
	return c.next(90 * time.Second)
}

func (c *runnerClient) tools() []string { return c.do(map[string]any{"op": "list"}).Tools }

func (c *runnerClient) call(name string, args map[string]any) runnerEvent {
	return c.do(map[string]any{"op": "call", "name": name, "args": args})
}

// says is the call's text, or its error's message.
func (ev runnerEvent) says() string {
	if ev.Error != nil {
		return ev.Error.Message
	}
	return ev.Text
}

// forwardUnix serves a Unix socket at path whose every connection is relayed to the
// gateway's TCP address: how a runner in a network namespace of its own reaches the host's
// loopback listener. Stopped when the test ends.
func forwardUnix(t *testing.T, path, addr string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			open = append(open, in, out)
			mu.Unlock()
			wg.Add(2)
			pipe := func(dst, src net.Conn) {
				defer wg.Done()
				_, _ = io.Copy(dst, src)
				dst.Close()
				src.Close()
			}
			go pipe(out, in)
			go pipe(in, out)
		}
	}()
}

// runnerTree is the directory tree standing for a container: the workspace the runner's
// servers see at the host's path, and the socket it reaches the gateway by.
type runnerTree struct {
	root, work, sock string
}

// startNetnsRunner starts `mcpgw-bridge runner` in new network, mount and PID namespaces
// (as a container would run it): the tree's workspace is bound over hostDir there, so the
// runner's servers see the container's files at that path, and its only way out is the
// Unix socket in its tree.
func startNetnsRunner(t *testing.T, tree runnerTree, hostDir, executor, key string) *Proc {
	t.Helper()
	script := "mount --make-rprivate / && mount --bind " + tree.work + " " + hostDir +
		" && exec " + bridgeBin(t) + " runner --gateway unix:" + tree.sock + " --executor " + executor + " --max-backoff 2s"
	return startProcess(t, "runner-"+executor, "unshare", []string{"--net", "--mount", "--pid", "--fork", "sh", "-c", script},
		[]string{"MCPGW_RUNNER_TOKEN=" + key})
}

func needNetns(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the runner runs in network, mount and PID namespaces of its own (unshare)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("needs unshare (util-linux) to give the runner namespaces of its own")
	}
}

// TestRunnerServesExecutorFromItsNamespace: a runner started in network, mount and PID
// namespaces of its own (a container, with a tree of its own and no network) hosts the npm
// filesystem server for executor box. A TS-SDK client of executor box lists and calls it
// through the gateway's one URL and sees the container's files; a client of another
// executor sees the host's (its server runs on the gateway's host); a client of an
// executor whose runner is not connected gets calls that fail naming that executor. A
// wrong key, or another executor's, is refused. Killing the runner fails box's calls naming the executor;
// restarting it brings the tools back with notifications/tools/list_changed. Removing the
// key from the config cuts the runner off, and it stops.
func TestRunnerServesExecutorFromItsNamespace(t *testing.T) {
	needGatewayBin(t)
	needNetns(t)
	fsScript := npmServerScript(t, "server-filesystem")
	base := t.TempDir()
	hostDir := filepath.Join(base, "workspace")
	tree := runnerTree{root: filepath.Join(base, "container")}
	tree.work = filepath.Join(tree.root, "workspace")
	tree.sock = filepath.Join(tree.root, "run", "gw.sock")
	for _, d := range []string{hostDir, tree.work, filepath.Dir(tree.sock)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(hostDir, "host-only.txt"), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree.work, "container-only.txt"), []byte("inside the container"), 0o644); err != nil {
		t.Fatal(err)
	}
	key := "mcpgw_runner_e2e_" + strings.Repeat("k", 32)
	sum := sha256.Sum256([]byte(key))
	digest := hex.EncodeToString(sum[:])
	sum2 := sha256.Sum256([]byte(key + "-box2"))
	digest2 := hex.EncodeToString(sum2[:])
	cfg := `
log: {level: info, format: text}
servers:
  fs: {type: stdio, command: {{node}}, args: [` + yamlQuote(fsScript) + `, ` + yamlQuote(hostDir) + `]}
executors:
  box: {type: local_docker, runner: {keys: ["` + digest + `"]}}
  box2: {type: local_docker, runner: {keys: ["` + digest2 + `"]}}
  other: {type: local_pc}
`
	g := startGatewayChecked(t, cfg)
	forwardUnix(t, tree.sock, g.Addr)

	// A wrong key is refused, and a runner holding it stops with exit code 3.
	bad := rawRequest(t, http.MethodGet, g.Base+"/runner", map[string]string{"Upgrade": "mcpgw-runner/1", "Connection": "Upgrade",
		"Mcpgw-Executor": "box", "Authorization": "Bearer wrong"}, "")
	if bad.Status != http.StatusUnauthorized {
		t.Fatalf("GET /runner with a wrong key: %s", bad)
	}
	// A key is bound to its executor: box's key does not open box2's runner.
	cross := rawRequest(t, http.MethodGet, g.Base+"/runner", map[string]string{"Upgrade": "mcpgw-runner/1", "Connection": "Upgrade",
		"Mcpgw-Executor": "box2", "Authorization": "Bearer " + key}, "")
	if cross.Status != http.StatusUnauthorized {
		t.Fatalf("GET /runner as box2 with box's key: %s", cross)
	}
	wrong := startNetnsRunner(t, tree, hostDir, "box", "not-the-key")
	select {
	case <-wrong.Done():
		var ee *exec.ExitError
		if err := wrong.ExitErr(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("runner with a wrong key exited with %v, want exit code 3\n%s", err, wrong.Log())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("runner with a wrong key still runs\n%s", wrong.Log())
	}

	runner := startNetnsRunner(t, tree, hostDir, "box", key)
	waitRunner(t, g, "box", "connected")

	box := startRunnerClient(t, g.URL, "X-Agent-ID: a1", "X-Executor-ID: box")
	if names := box.tools(); !contains(names, "fs__list_directory") {
		t.Fatalf("executor box lists %v", names)
	}
	ev := box.call("fs__list_directory", map[string]any{"path": hostDir})
	if !ev.OK || !strings.Contains(ev.Text, "container-only.txt") || strings.Contains(ev.Text, "host-only.txt") {
		t.Fatalf("executor box's list_directory (on its runner) answered %+v", ev)
	}
	if st := runnerState(t, g, "box"); !contains(st.Servers, "fs") {
		t.Errorf("GET /api/runners: box's runner hosts %v, want fs", st.Servers)
	}

	other := startRunnerClient(t, g.URL, "X-Agent-ID: a2", "X-Executor-ID: other")
	ev = other.call("fs__list_directory", map[string]any{"path": hostDir})
	if !ev.OK || !strings.Contains(ev.Text, "host-only.txt") || strings.Contains(ev.Text, "container-only.txt") {
		t.Fatalf("executor other's list_directory (on the gateway's host) answered %+v", ev)
	}
	box2 := startRunnerClient(t, g.URL, "X-Agent-ID: a3", "X-Executor-ID: box2")
	ev = box2.call("fs__list_directory", map[string]any{"path": hostDir})
	if ev.OK || strings.Contains(ev.says(), "container-only.txt") || !strings.Contains(ev.says(), `"box2"`) {
		t.Fatalf("executor box2 (no runner connected) got %+v; want a failure naming box2", ev)
	}

	// The runner dies: box's calls fail naming the executor.
	_ = syscall.Kill(-runner.Pid, syscall.SIGKILL)
	<-runner.Done()
	waitRunner(t, g, "box", "disconnected")
	var last runnerEvent
	if desc, ok := waitFor(30*time.Second, func() (bool, string) {
		last = box.call("fs__list_directory", map[string]any{"path": hostDir})
		return !last.OK && strings.Contains(last.says(), `"box"`), last.says()
	}); !ok {
		t.Fatalf("with box's runner gone, a call answered %q; want a failure naming executor box", desc)
	}
	t.Logf("with the runner gone: %s", last.says())

	// It comes back: the tools return with list_changed, and calls work again.
	box.mu.Lock()
	before := box.changed
	box.mu.Unlock()
	runner = startNetnsRunner(t, tree, hostDir, "box", key)
	waitRunner(t, g, "box", "connected")
	if desc, ok := waitFor(60*time.Second, func() (bool, string) {
		last = box.call("fs__list_directory", map[string]any{"path": hostDir})
		return last.OK && strings.Contains(last.Text, "container-only.txt"), last.says()
	}); !ok {
		t.Fatalf("after the runner came back, a call answered %q", desc)
	}
	box.mu.Lock()
	after := box.changed
	box.mu.Unlock()
	if after <= before {
		t.Errorf("no notifications/tools/list_changed while box's runner went and came back (%d before, %d after)", before, after)
	}

	// The key is revoked: the config reloads without it, the runner is cut off and stops.
	revoked := strings.Replace(cfg, `box: {type: local_docker, runner: {keys: ["`+digest+`"]}}`, `box: {type: local_docker, runner: {keys: ["`+strings.Repeat("0", 64)+`"]}}`, 1)
	if err := os.WriteFile(g.Config, []byte(gatewayConfig(t, revoked, g.Port, g.StateDir)), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(g.Pid, syscall.SIGHUP)
	select {
	case <-runner.Done():
		var ee *exec.ExitError
		if err := runner.ExitErr(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Errorf("runner whose key was revoked exited with %v, want exit code 3", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("runner whose key was revoked still runs\n%s", runner.Tail(4000))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runnerStateDoc is one runner of GET /api/runners.
type runnerStateDoc struct {
	Executor string   `json:"executor"`
	State    string   `json:"state"`
	Servers  []string `json:"servers"`
	Error    string   `json:"error"`
}

func runnerState(t *testing.T, g *Gateway, executor string) runnerStateDoc {
	t.Helper()
	a := rawRequest(t, http.MethodGet, g.Base+"/api/runners", nil, "")
	var doc struct {
		Runners []runnerStateDoc `json:"runners"`
	}
	if a.Status != http.StatusOK || json.Unmarshal(a.Body, &doc) != nil {
		t.Fatalf("GET /api/runners: %s", a)
	}
	for _, r := range doc.Runners {
		if r.Executor == executor {
			return r
		}
	}
	return runnerStateDoc{Executor: executor, State: "absent"}
}

func waitRunner(t *testing.T, g *Gateway, executor, state string) {
	t.Helper()
	if desc, ok := waitFor(30*time.Second, func() (bool, string) {
		st := runnerState(t, g, executor)
		return st.State == state, st.State + " " + st.Error
	}); !ok {
		t.Fatalf("runner of %s: %s, want %s", executor, desc, state)
	}
}
