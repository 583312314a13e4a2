package e2e

// Helpers for the session, replica and handshake tests (sessions_*_test.go): a gateway
// started again on the same config, port and state dir; gateways on a config file shared
// by several replicas; a redis-server on loopback; and a Node script driven line by line.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// sessSimpleText is what the go-sdk everything-server's test_simple_text answers.
const sessSimpleText = "This is a simple text response for testing."

// sessRestartGateway starts mcpgw again with g's config file, hence on g's port and state
// dir (after g was killed), and waits until it is healthy.
func sessRestartGateway(t testing.TB, g *Gateway, name string) *Gateway {
	t.Helper()
	p := startProcess(t, name, needGatewayBin(t), []string{"serve", "--config", g.Config}, nil)
	if err := waitHTTP(p, g.Base+"/healthz", http.StatusOK, readyTimeout); err != nil {
		t.Fatalf("%s did not become healthy on %s: %v", name, g.Addr, err)
	}
	if err := waitStarted(p, g.Base, readyTimeout); err != nil {
		t.Fatal(err)
	}
	ng := *g
	ng.Proc = p
	return &ng
}

// sessStartReplica runs `mcpgw serve --config cfgPath` with the environment variables
// E2E_LISTEN (127.0.0.1:PORT on a fresh port) and E2E_STATE (a fresh state dir), for a
// config file several replicas share (`listen: ${E2E_LISTEN}`, `state_dir: ${E2E_STATE}`).
func sessStartReplica(t testing.TB, name, cfgPath string) *Gateway {
	t.Helper()
	bin := needGatewayBin(t)
	stateDir := t.TempDir()
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		port := freePort(t)
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		p := startProcess(t, name, bin, []string{"serve", "--config", cfgPath},
			[]string{"E2E_LISTEN=" + addr, "E2E_STATE=" + stateDir})
		g := &Gateway{Proc: p, Addr: addr, Base: "http://" + addr, URL: "http://" + addr + "/mcp",
			Port: port, StateDir: stateDir, Config: cfgPath}
		if lastErr = waitHTTP(p, g.Base+"/healthz", http.StatusOK, readyTimeout); lastErr == nil {
			if err := waitStarted(p, g.Base, readyTimeout); err != nil {
				t.Fatal(err)
			}
			return g
		}
		if !addrInUse(p) {
			break
		}
	}
	t.Fatalf("%s did not become healthy: %v", name, lastErr)
	return nil
}

// sessRedis is a redis-server the test started on 127.0.0.1.
type sessRedis struct {
	*Proc
	Port int
	Dir  string
}

// sessNeedRedis returns the redis-server binary; without it the test skips, or fails
// under MCPGW_REQUIRE_PEERS=1.
func sessNeedRedis(t testing.TB) string {
	t.Helper()
	needPeers(t)
	return peers.Command(t, "redis-server")
}

// sessStartRedis runs redis-server on 127.0.0.1:port (0: a fresh port) without persistence,
// in dir (a fresh temp dir when ""), and waits until it answers PING.
func sessStartRedis(t testing.TB, name string, port int, dir string) *sessRedis {
	t.Helper()
	bin := sessNeedRedis(t)
	if dir == "" {
		dir = t.TempDir()
	}
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		p0 := port
		if p0 == 0 {
			p0 = freePort(t)
		}
		p := startProcess(t, name, bin, []string{
			"--port", strconv.Itoa(p0), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", dir, "--protected-mode", "yes", "--daemonize", "no",
		}, nil)
		if lastErr = sessWaitRedis(p, p0, readyTimeout); lastErr == nil {
			return &sessRedis{Proc: p, Port: p0, Dir: dir}
		}
		p.Stop()
		if port != 0 || !addrInUse(p) {
			break
		}
	}
	t.Fatalf("%s: %v", name, lastErr)
	return nil
}

// sessWaitRedis waits until redis on 127.0.0.1:port answers PING with PONG.
func sessWaitRedis(p *Proc, port int, timeout time.Duration) error {
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for i := 0; time.Now().Before(deadline); i++ {
		if p != nil && p.Exited() {
			return fmt.Errorf("%s: %w", p.Name, errExited)
		}
		if err := sessRedisPing(addr); err == nil {
			return nil
		} else {
			last = err.Error()
		}
		time.Sleep(backoff(i))
	}
	return fmt.Errorf("redis %s: no PONG within %s (last: %s)", addr, timeout, last)
}

// sessRedisCmd sends one command (RESP array of bulk strings) and returns the first line
// of the reply ("+PONG", ":1", "$-1", ...).
func sessRedisCmd(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

func sessRedisPing(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// sessListening reports whether something accepts TCP connections on addr.
func sessListening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// sessNode is a Node script whose stdout is read line by line and whose stdin the test
// writes to. Its process group is killed at cleanup.
type sessNode struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	errb  sessBuffer
	done  chan struct{}
}

// sessStartNode starts `node SCRIPT ARGS...` (Node 22, in test/e2e).
func sessStartNode(t testing.TB, script string, args ...string) *sessNode {
	t.Helper()
	c := exec.Command(node(t), append([]string{script}, args...)...)
	c.Dir = e2eDir(t)
	c.Env = append(os.Environ(), nodeEnv(t)...)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	n := &sessNode{cmd: c, stdin: stdin, lines: make(chan string, 64), done: make(chan struct{})}
	c.Stderr = &n.errb
	if err := c.Start(); err != nil {
		t.Fatalf("start node %s: %v", script, err)
	}
	pid := c.Process.Pid
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			n.lines <- sc.Text()
		}
		close(n.lines)
	}()
	go func() {
		wg.Wait()
		_ = c.Wait()
		close(n.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		select {
		case <-n.done:
		case <-time.After(stopGrace):
		}
		if t.Failed() {
			t.Logf("--- stderr of %s ---\n%s", script, n.errb.String())
		}
	})
	return n
}

// next returns the next stdout line, or false on EOF or after timeout.
func (n *sessNode) next(timeout time.Duration) (string, bool) {
	select {
	case l, ok := <-n.lines:
		return l, ok
	case <-time.After(timeout):
		return "", false
	}
}

// send writes one line to the script's stdin.
func (n *sessNode) send(line string) error {
	_, err := io.WriteString(n.stdin, line+"\n")
	return err
}

// sessWriteConfig writes a config file into a fresh temp dir and returns its path.
func sessWriteConfig(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// sessBuffer is a goroutine-safe bytes.Buffer.
type sessBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *sessBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *sessBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// ---------------------------------------------------------------------------------------
// Raw streamable HTTP sessions (status codes and exact bytes, which client libraries hide)

// sessProtocol is what raw sessions negotiate: 2025-06-18 answers with plain JSON bodies.
const sessProtocol = "2025-06-18"

var sessHTTP = &http.Client{Timeout: 30 * time.Second}

// sessAnswer is one raw HTTP exchange.
type sessAnswer struct {
	Status int
	Header http.Header
	Body   []byte
	Result json.RawMessage // the JSON-RPC result, exactly as sent
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
}

func (a sessAnswer) String() string {
	b := a.Body
	if len(b) > 300 {
		b = append(append([]byte{}, b[:300]...), "..."...)
	}
	return fmt.Sprintf("HTTP %d: %s", a.Status, b)
}

// ok reports an HTTP 200 with a JSON-RPC result.
func (a sessAnswer) ok() bool { return a.Status == http.StatusOK && a.Result != nil && a.Error == nil }

// sessPost POSTs body with hdr and reads the whole answer (a JSON body or an event
// stream, searched for the JSON-RPC response).
func sessPost(url string, hdr map[string]string, body string) (sessAnswer, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return sessAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := sessHTTP.Do(req)
	if err != nil {
		return sessAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return sessAnswer{}, err
	}
	a := sessAnswer{Status: resp.StatusCode, Header: resp.Header, Body: b}
	candidates := [][]byte{b}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		candidates = nil
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
				candidates = append(candidates, []byte(strings.TrimSpace(d)))
			}
		}
	}
	for _, c := range candidates {
		var r struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int             `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if json.Unmarshal(c, &r) == nil && (r.Result != nil || r.Error != nil) {
			a.Result, a.Error = r.Result, r.Error
			break
		}
	}
	return a, nil
}

// sessRaw is a streamable HTTP session driven by hand.
type sessRaw struct {
	URL    string            // where requests go (may be changed to another replica)
	Header map[string]string // identity headers sent on every request
	ID     string
	next   int
}

// sessInit POSTs initialize with hdr; the answer is the caller's to judge.
func sessInit(url string, hdr map[string]string) (sessAnswer, error) {
	return sessPost(url, hdr, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcpgw-e2e-sessions","version":"1.0.0"}}}`, sessProtocol))
}

// sessOpen initializes a session (failing the test unless it works) and sends
// notifications/initialized.
func sessOpen(t testing.TB, url string, hdr map[string]string) *sessRaw {
	t.Helper()
	a, err := sessInit(url, hdr)
	if err != nil {
		t.Fatalf("initialize at %s: %v", url, err)
	}
	sid := a.Header.Get("Mcp-Session-Id")
	if !a.ok() || sid == "" {
		t.Fatalf("initialize at %s with %v: %s", url, hdr, a)
	}
	s := &sessRaw{URL: url, Header: hdr, ID: sid, next: 1}
	n, err := sessPost(url, s.headers(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil || n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %v %s", err, n)
	}
	return s
}

func (s *sessRaw) headers() map[string]string {
	h := map[string]string{"Mcp-Session-Id": s.ID, "MCP-Protocol-Version": sessProtocol}
	for k, v := range s.Header {
		h[k] = v
	}
	return h
}

// try sends a JSON-RPC request on the session at url and returns the answer.
func (s *sessRaw) try(url, method string, params any) (sessAnswer, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return sessAnswer{}, err
	}
	s.next++
	return sessPost(url, s.headers(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.next, method, p))
}

// call sends a request on the session at s.URL, failing the test on a transport error.
func (s *sessRaw) call(t testing.TB, method string, params any) sessAnswer {
	t.Helper()
	a, err := s.try(s.URL, method, params)
	if err != nil {
		t.Fatalf("%s on session %s at %s: %v", method, s.ID, s.URL, err)
	}
	return a
}

// sessList is a tools/list result.
type sessList struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor"`
}

// list runs one tools/list (the first page) and returns its exact result bytes, failing
// the test unless it worked.
func (s *sessRaw) list(t testing.TB) (json.RawMessage, sessList) {
	t.Helper()
	a := s.call(t, "tools/list", map[string]any{})
	if !a.ok() {
		t.Fatalf("tools/list on session %s at %s: %s", s.ID, s.URL, a)
	}
	var l sessList
	if err := json.Unmarshal(a.Result, &l); err != nil {
		t.Fatalf("tools/list result: %v", err)
	}
	if l.NextCursor != "" {
		t.Fatalf("tools/list has more than one page (nextCursor %q): raise http.page_size", l.NextCursor)
	}
	return a.Result, l
}

// toolCall calls a tool and returns its text and isError, failing on a JSON-RPC error.
func (s *sessRaw) toolCall(t testing.TB, name string, args any) (string, bool, sessAnswer) {
	t.Helper()
	a := s.call(t, "tools/call", map[string]any{"name": name, "arguments": args})
	if !a.ok() {
		t.Fatalf("tools/call %s on session %s at %s: %s", name, s.ID, s.URL, a)
	}
	text, isErr := sessResultText(a.Result)
	return text, isErr, a
}

// sessResultText joins the text contents of a tools/call result and says if isError.
func sessResultText(raw json.RawMessage) (string, bool) {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(raw, &r)
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n"), r.IsError
}

// sessToolName is the name of a tool definition.
func sessToolName(def json.RawMessage) string {
	var d struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(def, &d)
	return d.Name
}

// ---------------------------------------------------------------------------------------
// A raw GET stream and a go-sdk transport with identity headers

// sessStream is a GET /mcp event stream read in the background.
type sessStream struct {
	Status int
	data   chan string // the data of each event (lossy when nobody reads)
	cancel context.CancelFunc
}

// sessOpenStream opens the session's GET stream at url with hdr; it is closed at cleanup.
func sessOpenStream(t testing.TB, url string, hdr map[string]string) *sessStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	// No overall timeout: the stream lives until cleanup; the header wait is bounded.
	timer := time.AfterFunc(15*time.Second, cancel)
	resp, err := http.DefaultClient.Do(req)
	timer.Stop()
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	st := &sessStream{Status: resp.StatusCode, data: make(chan string, 256), cancel: cancel}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		close(st.data)
		return st
	}
	go func() {
		defer resp.Body.Close()
		defer close(st.data)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(d) != "" {
				select {
				case st.data <- strings.TrimSpace(d):
				default:
				}
			}
		}
	}()
	return st
}

// wait waits for an event whose data contains want; it returns the events seen.
func (st *sessStream) wait(want string, timeout time.Duration) (bool, []string) {
	var seen []string
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case d, ok := <-st.data:
			if !ok {
				return false, append(seen, "(stream ended)")
			}
			seen = append(seen, d)
			if strings.Contains(d, want) {
				return true, seen
			}
		case <-deadline.C:
			return false, seen
		}
	}
}

// sessHeaderRT adds fixed headers to every request of a go-sdk client.
type sessHeaderRT map[string]string

func (h sessHeaderRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// sessReplaceFile replaces path's content in one rename (a watcher never sees half a
// file) and makes sure its modification time moves.
func sessReplaceFile(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	_ = os.Chtimes(tmp, later, later)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// sessDelete sends DELETE /mcp with hdr (the session's headers).
func sessDelete(t testing.TB, url string, hdr map[string]string) sessAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := sessHTTP.Do(req)
	if err != nil {
		t.Fatalf("DELETE %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return sessAnswer{Status: resp.StatusCode, Header: resp.Header, Body: b}
}
