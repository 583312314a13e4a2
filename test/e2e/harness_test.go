// Package e2e runs mcpgw end to end against real MCP peers: the protocol's conformance
// suite, the reference TypeScript SDK client, the npm reference servers and the go-sdk
// conformance everything-server. `make test` installs the peers (scripts/peers.sh) and
// sets the environment below; without MCPGW_PEERS every test here skips.
//
//	MCPGW_PEERS    the peers cache (.cache in the repo): bin/everything-server, ...
//	MCPGW_BIN      the mcpgw binary under test (bin/mcpgw)
//	MCPGW_E2E_DIR  this directory (node_modules, js/); defaults to the working directory
//
// Rules every helper keeps: servers listen on 127.0.0.1 only, every wait and loop is
// bounded in time and count, and every process is stopped by its pid (its process group)
// when the test ends, also on failure. A failed test prints the tail of each log.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

const (
	// stopGrace is how long a process gets after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// readyTimeout bounds every wait for a process to become ready.
	readyTimeout = 60 * time.Second
	// logTailBytes is how much of a log a failed test prints.
	logTailBytes = 6000
	// startAttempts bounds retries when a freshly picked port was taken meanwhile.
	startAttempts = 3
)

// needPeers returns $MCPGW_PEERS, the directory `make peers` (scripts/peers.sh) installs
// the peers into. Unset, the test skips, or fails under MCPGW_REQUIRE_PEERS=1.
func needPeers(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("MCPGW_PEERS")
	if dir == "" {
		peers.Missing(t, "MCPGW_PEERS not set", "`make test-e2e` sets it after `make peers` installed them into .cache")
	}
	return dir
}

// needGatewayBin returns $MCPGW_BIN: unset, the test skips (fails under
// MCPGW_REQUIRE_PEERS=1); set but missing, it fails.
func needGatewayBin(t testing.TB) string {
	t.Helper()
	needPeers(t)
	bin := os.Getenv("MCPGW_BIN")
	if bin == "" {
		peers.Missing(t, "MCPGW_BIN not set", "`make test-e2e` sets it to bin/mcpgw after `make build`")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("MCPGW_BIN: %v", err)
	}
	return bin
}

// e2eDir is test/e2e: $MCPGW_E2E_DIR, else the working directory (go test runs a
// package's tests in its own directory).
func e2eDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("MCPGW_E2E_DIR"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("freePort: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Proc is a process a test started. It runs in its own process group, so stopping it
// also stops the children it spawned (unless they moved to a group of their own).
type Proc struct {
	Name    string
	Pid     int
	LogPath string
	Cmd     *exec.Cmd

	done    chan struct{}
	waitErr error
	stopMu  sync.Mutex
	stopped bool
}

// startProcess starts cmd with args, extra env (KEY=VALUE, added to the test's own
// environment), stdout and stderr going to a log file in a temp dir. The process is
// stopped by its pid (process group: SIGTERM, SIGKILL after 5 s) when the test ends; a
// failed test prints the log's tail.
func startProcess(t testing.TB, name, cmd string, args, env []string) *Proc {
	t.Helper()
	return startProcessIn(t, "", name, cmd, args, env)
}

// startProcessIn is startProcess with a working directory ("" for the test's own).
func startProcessIn(t testing.TB, dir, name, cmd string, args, env []string) *Proc {
	t.Helper()
	logDir := t.TempDir() // created before the stop cleanup, so removed after it
	logPath := filepath.Join(logDir, sanitize(name)+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := exec.Command(cmd, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	c.Stdin = nil // /dev/null
	c.Stdout = f
	c.Stderr = f
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s (%s): %v", name, cmd, err)
	}
	f.Close() // the child has its own copy
	p := &Proc{Name: name, Pid: c.Process.Pid, LogPath: logPath, Cmd: c, done: make(chan struct{})}
	go func() {
		p.waitErr = c.Wait()
		close(p.done)
	}()
	t.Logf("started %s pid %d: %s %s (log %s)", name, p.Pid, cmd, strings.Join(args, " "), logPath)
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("--- tail of %s log (%s) ---\n%s", name, logPath, p.Tail(logTailBytes))
		}
	})
	return p
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// ExitErr is the process's Wait error; valid once Exited.
func (p *Proc) ExitErr() error {
	<-p.done
	return p.waitErr
}

// Stop ends the process: SIGTERM to its process group, SIGKILL after stopGrace, then
// waits for it. Any members of its group still alive afterwards get SIGKILL as well.
// Safe to call more than once.
func (p *Proc) Stop() {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	if !p.Exited() {
		_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(stopGrace):
			_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
			select {
			case <-p.done:
			case <-time.After(stopGrace):
			}
		}
	}
	// Children left behind in the group (the leader may have exited first).
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}

// Kill9 sends SIGKILL to the process (the leader only, as a crash would) and waits
// until it has exited. Its group's leftovers are still reaped by Stop at cleanup.
func (p *Proc) Kill9() {
	_ = syscall.Kill(p.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
	}
}

// Log returns the whole log so far.
func (p *Proc) Log() string {
	b, _ := os.ReadFile(p.LogPath)
	return string(b)
}

// Tail returns up to n bytes from the end of the log.
func (p *Proc) Tail(n int) string { return tailFile(p.LogPath, n) }

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
		return "...\n" + string(b)
	}
	return string(b)
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// errExited says the process ended while we were waiting for it to become ready.
var errExited = errors.New("process exited before it was ready")

// waitPort waits until addr (host:port) accepts TCP connections, the process exits,
// or timeout passes.
func waitPort(p *Proc, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for i := 0; time.Now().Before(deadline); i++ {
		if p != nil && p.Exited() {
			return fmt.Errorf("%s: %w (%v)", p.Name, errExited, p.waitErr)
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		time.Sleep(backoff(i))
	}
	return fmt.Errorf("%s did not accept connections within %s", addr, timeout)
}

// waitHTTP waits until GET url answers want, the process exits, or timeout passes.
func waitHTTP(p *Proc, url string, want int, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for i := 0; time.Now().Before(deadline); i++ {
		if p != nil && p.Exited() {
			return fmt.Errorf("%s: %w (%v)", p.Name, errExited, p.waitErr)
		}
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(backoff(i))
	}
	return fmt.Errorf("GET %s: no %d within %s (last: %s)", url, want, timeout, last)
}

// waitStarted waits until the gateway's /readyz no longer says starting: every server and
// plugin has first come up or failed (or the gateway's start window passed).
func waitStarted(p *Proc, base string, timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for i := 0; time.Now().Before(deadline); i++ {
		if p != nil && p.Exited() {
			return fmt.Errorf("%s: %w (%v)", p.Name, errExited, p.waitErr)
		}
		resp, err := client.Get(base + "/readyz")
		if err == nil {
			var r struct {
				Starting bool `json:"starting"`
			}
			err = json.NewDecoder(resp.Body).Decode(&r)
			resp.Body.Close()
			if err == nil && !r.Starting {
				return nil
			}
			last = resp.Status + ", starting"
		} else {
			last = err.Error()
		}
		time.Sleep(backoff(i))
	}
	return fmt.Errorf("GET %s/readyz: still starting after %s (last: %s)", base, timeout, last)
}

func backoff(i int) time.Duration {
	d := time.Duration(25*(i+1)) * time.Millisecond
	if d > 250*time.Millisecond {
		d = 250 * time.Millisecond
	}
	return d
}

// addrInUse reports whether a process that failed to start did so because its port was
// taken between freePort and its bind (worth a retry on another port).
func addrInUse(p *Proc) bool {
	return p.Exited() && strings.Contains(strings.ToLower(p.Log()), "address already in use")
}

// Gateway is an mcpgw process started by startGateway.
type Gateway struct {
	*Proc
	Addr     string // 127.0.0.1:PORT
	Base     string // http://127.0.0.1:PORT
	URL      string // http://127.0.0.1:PORT/mcp
	Port     int
	StateDir string
	Config   string // path of the config file
}

// GatewayOptions are the rarer knobs of startGatewayOpts.
type GatewayOptions struct {
	Env  []string // extra KEY=VALUE for the gateway (for ${VAR} in the config)
	Args []string // extra arguments after `serve --config FILE`
}

// startGateway starts `$MCPGW_BIN serve --config FILE` with configYAML and waits until
// GET /healthz answers 200. See gatewayConfig for the placeholders configYAML may use;
// `listen:` and `state_dir:` are added when it has none.
func startGateway(t testing.TB, configYAML string) *Gateway {
	t.Helper()
	return startGatewayOpts(t, configYAML, GatewayOptions{})
}

// startGatewayOpts is startGateway with extra environment and arguments.
func startGatewayOpts(t testing.TB, configYAML string, o GatewayOptions) *Gateway {
	t.Helper()
	bin := needGatewayBin(t)
	stateDir := t.TempDir()
	cfgDir := t.TempDir()
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		port := freePort(t)
		cfgPath := filepath.Join(cfgDir, fmt.Sprintf("mcpgw-%d.yaml", attempt))
		cfg := gatewayConfig(t, configYAML, port, stateDir)
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"serve", "--config", cfgPath}, o.Args...)
		p := startProcess(t, "mcpgw", bin, args, o.Env)
		g := &Gateway{
			Proc:     p,
			Addr:     fmt.Sprintf("127.0.0.1:%d", port),
			Base:     fmt.Sprintf("http://127.0.0.1:%d", port),
			URL:      fmt.Sprintf("http://127.0.0.1:%d/mcp", port),
			Port:     port,
			StateDir: stateDir,
			Config:   cfgPath,
		}
		lastErr = waitHTTP(p, g.Base+"/healthz", http.StatusOK, readyTimeout)
		if lastErr == nil {
			// The gateway serves at once; the tests start from a whole catalogue, as a
			// load balancer would (its servers and plugins first up or failed).
			if err := waitStarted(p, g.Base, readyTimeout); err != nil {
				t.Fatal(err)
			}
			return g
		}
		if !addrInUse(p) {
			break
		}
		t.Logf("mcpgw: port %d was taken, retrying", port)
	}
	t.Fatalf("mcpgw did not become healthy: %v", lastErr)
	return nil
}

// gatewayConfig fills the placeholders of a gateway config template:
//
//	{{listen}}     127.0.0.1:PORT          {{port}}       PORT
//	{{state_dir}}  the gateway's state dir {{peers}}      $MCPGW_PEERS
//	{{everything_server}}  $MCPGW_PEERS/bin/everything-server
//	{{e2e_dir}}    test/e2e                {{node}}       the Node 22 binary
//
// and prepends `listen: 127.0.0.1:PORT` and `state_dir: DIR` when the template has no
// such top-level key. ${VAR} is left alone for the gateway's own expansion.
func gatewayConfig(t testing.TB, tmpl string, port int, stateDir string) string {
	t.Helper()
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	peers := os.Getenv("MCPGW_PEERS")
	r := strings.NewReplacer(
		"{{listen}}", listen,
		"{{port}}", strconv.Itoa(port),
		"{{state_dir}}", stateDir,
		"{{peers}}", peers,
		"{{everything_server}}", filepath.Join(peers, "bin", "everything-server"),
		"{{e2e_dir}}", e2eDir(t),
		"{{node}}", nodePath(t),
	)
	cfg := r.Replace(tmpl)
	var head strings.Builder
	if !hasTopKey(cfg, "state_dir") {
		fmt.Fprintf(&head, "state_dir: %s\n", stateDir)
	}
	if !hasTopKey(cfg, "listen") {
		fmt.Fprintf(&head, "listen: %s\n", listen)
	}
	return head.String() + cfg
}

func hasTopKey(yaml, key string) bool {
	for _, line := range strings.Split(yaml, "\n") {
		if strings.HasPrefix(line, key+":") {
			return true
		}
	}
	return false
}
