package e2e

// Helpers for the gateway-core end-to-end tests (gateway_*_test.go): /readyz and
// /metrics, the process tree under /proc, a go-sdk client with its notifications
// counted, and peers started on a port of the test's choosing (to restart them there).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/statedir"
)

// exposedNameRE is what docs/config.md (naming) promises every exposed tool name matches.
var exposedNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ---------------------------------------------------------------------------------------
// /readyz and /metrics

// readyzReport is the JSON of GET /readyz.
type readyzReport struct {
	Ready     bool             `json:"ready"`
	Store     string           `json:"store"`
	Sessions  int              `json:"sessions"`
	Upstreams []upstreamStatus `json:"upstreams"`
}

// upstreamStatus is one upstream in /readyz.
type upstreamStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	Mode      string `json:"mode"`
	State     string `json:"state"`
	Error     string `json:"error"`
	Restarts  int    `json:"restarts"`
	Tools     int    `json:"tools"`
}

func (r *readyzReport) upstream(name string) *upstreamStatus {
	for i := range r.Upstreams {
		if r.Upstreams[i].Name == name {
			return &r.Upstreams[i]
		}
	}
	return nil
}

var probeClient = &http.Client{Timeout: 5 * time.Second}

// getReadyzRaw is GET /readyz with the gateway's local token (state_dir/local-token), an
// admin credential in every auth mode: /readyz shows its detail only to an admin.
func getReadyzRaw(g *Gateway) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, g.Base+"/readyz", nil)
	if err != nil {
		return nil, err
	}
	if tok, err := statedir.ReadToken(g.StateDir); err == nil {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return probeClient.Do(req)
}

// getReadyz fetches and decodes GET /readyz (any status: 503 still carries the JSON),
// with its detail: as an operator, with the gateway's local token.
func getReadyz(g *Gateway) (*readyzReport, error) {
	resp, err := getReadyzRaw(g)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var r readyzReport
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("readyz (HTTP %d): %v: %s", resp.StatusCode, err, b)
	}
	return &r, nil
}

// upstreamState is the state of one upstream in /readyz ("" if unknown).
func upstreamState(g *Gateway, name string) (upstreamStatus, error) {
	r, err := getReadyz(g)
	if err != nil {
		return upstreamStatus{}, err
	}
	u := r.upstream(name)
	if u == nil {
		return upstreamStatus{}, fmt.Errorf("readyz has no upstream %q: %+v", name, r.Upstreams)
	}
	return *u, nil
}

// getMetrics returns the text of GET /metrics.
func getMetrics(g *Gateway) (string, error) {
	resp, err := probeClient.Get(g.Base + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("metrics: HTTP %d", resp.StatusCode)
	}
	return string(b), err
}

// metricSum adds the values of every series of name whose labels include want (0, false
// when none does).
func metricSum(text, name string, want map[string]string) (float64, bool) {
	sum, found := 0.0, false
	for _, line := range strings.Split(text, "\n") {
		if v, ok := metricValue(line, name, want); ok {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

// metricValue finds one sample of a series whose labels include all of want (in the
// Prometheus text format) and returns its value.
func metricValue(text, name string, want map[string]string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, name) || strings.HasPrefix(line, "#") {
			continue
		}
		rest := line[len(name):]
		labels := ""
		if strings.HasPrefix(rest, "{") {
			end := strings.Index(rest, "}")
			if end < 0 {
				continue
			}
			labels, rest = rest[1:end], rest[end+1:]
		} else if !strings.HasPrefix(rest, " ") {
			continue // a longer name with this prefix
		}
		ok := true
		for k, v := range want {
			if !strings.Contains(","+labels+",", ","+k+"="+strconv.Quote(v)+",") {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err == nil {
			return f, true
		}
	}
	return 0, false
}

// waitFor polls cond until it holds or timeout passes (at most a few hundred polls). It
// returns cond's last description and whether it held.
func waitFor(timeout time.Duration, cond func() (bool, string)) (string, bool) {
	deadline := time.Now().Add(timeout)
	last := ""
	for i := 0; i < 2000; i++ {
		ok, desc := cond()
		last = desc
		if ok {
			return last, true
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(backoff(i))
	}
	return last, false
}

// ---------------------------------------------------------------------------------------
// The process tree under /proc

// procInfo is one process as /proc shows it.
type procInfo struct {
	Pid, PPid int
	State     string // R, S, Z, ...
	Cmdline   string // arguments joined by spaces
}

func readProc(pid int) (procInfo, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procInfo{}, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses: cut at the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	p := procInfo{Pid: pid, PPid: ppid, State: f[0]}
	if c, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		p.Cmdline = strings.TrimSpace(strings.ReplaceAll(string(c), "\x00", " "))
	}
	return p, true
}

func allProcs() []procInfo {
	ents, _ := os.ReadDir("/proc")
	out := make([]procInfo, 0, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// descendants lists every live descendant of root (not root itself), walking ppid links.
func descendants(root int) []procInfo {
	procs := allProcs()
	children := map[int][]procInfo{}
	for _, p := range procs {
		children[p.PPid] = append(children[p.PPid], p)
	}
	var out []procInfo
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 && len(out) < 10000 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if seen[c.Pid] {
				continue
			}
			seen[c.Pid] = true
			out = append(out, c)
			queue = append(queue, c.Pid)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pid < out[j].Pid })
	return out
}

// pidAlive reports whether pid is a live process; a zombie counts as gone.
func pidAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return err == syscall.EPERM
	}
	p, ok := readProc(pid)
	return ok && p.State != "Z" && p.State != "X"
}

// killPidsAtCleanup sends SIGKILL to pids still alive when the test ends: descendants of
// a gateway that a failing test may leave behind (they are in their own process groups).
func killPidsAtCleanup(t testing.TB, pids func() []int) {
	t.Cleanup(func() {
		for _, pid := range pids() {
			if pidAlive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

func describeProcs(ps []procInfo) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  pid %d ppid %d %s: %s", p.Pid, p.PPid, p.State, p.Cmdline)
	}
	return b.String()
}

// ---------------------------------------------------------------------------------------
// A go-sdk v1.8.0 client with its notifications observed

// goClient is a connected go-sdk client session.
type goClient struct {
	*mcp.ClientSession
	listChanged atomic.Int64
	changedCh   chan struct{} // one signal per tools/list_changed (buffered, lossy)
	progress    chan *mcp.ProgressNotificationParams
}

// connectGoClient connects a go-sdk client over transport with default options plus
// handlers that record tools/list_changed and progress. The session is closed at cleanup.
func connectGoClient(t testing.TB, transport mcp.Transport) *goClient {
	t.Helper()
	return connectGoClientOpts(t, transport, nil)
}

// connectGoClientOpts is connectGoClient with a hook that may add to the client options
// (handlers that declare capabilities, for instance).
//
// The client is pinned to 2025-11-25: these tests are about sessions (GET streams,
// DELETE, per-session instances). Left to its default, a go-sdk v1.8 client stays on the
// stateless 2026-07-28 revision with mcpgw (connectGoClientProbing, TestGoSDKClient).
func connectGoClientOpts(t testing.TB, transport mcp.Transport, edit func(*mcp.ClientOptions)) *goClient {
	t.Helper()
	return connectGoClientWith(t, transport, edit, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// connectGoClientProbing connects a go-sdk client with its default options: it probes
// 2026-07-28 with server/discover first.
func connectGoClientProbing(t testing.TB, transport mcp.Transport) *goClient {
	t.Helper()
	return connectGoClientWith(t, transport, nil, nil)
}

func connectGoClientWith(t testing.TB, transport mcp.Transport, edit func(*mcp.ClientOptions), so *mcp.ClientSessionOptions) *goClient {
	t.Helper()
	gc := &goClient{changedCh: make(chan struct{}, 64), progress: make(chan *mcp.ProgressNotificationParams, 256)}
	opts := &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			gc.listChanged.Add(1)
			select {
			case gc.changedCh <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case gc.progress <- r.Params:
			default:
			}
		},
	}
	if edit != nil {
		edit(opts)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-e2e-go-client", Version: "1.0.0"}, opts)
	// The SSE transport ties its event stream to Connect's context, so that context lives
	// until cleanup; a timer bounds the connect itself.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	timer := time.AfterFunc(30*time.Second, cancel)
	cs, err := client.Connect(ctx, transport, so)
	if !timer.Stop() {
		t.Fatalf("go-sdk client: connect took over 30 s (err %v)", err)
	}
	if err != nil {
		t.Fatalf("go-sdk client: connect: %v", err)
	}
	gc.ClientSession = cs
	t.Cleanup(func() { _ = cs.Close() })
	return gc
}

// toolNames lists every tool of the session (all pages, bounded).
func (gc *goClient) toolNames(t testing.TB) []string {
	t.Helper()
	names, err := gc.tryToolNames()
	if err != nil {
		t.Fatalf("go-sdk client: tools/list: %v", err)
	}
	return names
}

func (gc *goClient) tryToolNames() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var names []string
	cursor := ""
	for page := 0; page < 100; page++ {
		res, err := gc.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			return names, nil
		}
		cursor = res.NextCursor
	}
	return names, fmt.Errorf("tools/list: more than 100 pages")
}

// waitListChanged waits until at least n tools/list_changed notifications have arrived.
func (gc *goClient) waitListChanged(n int64, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for gc.listChanged.Load() < n {
		select {
		case <-gc.changedCh:
		case <-deadline.C:
			return gc.listChanged.Load() >= n
		}
	}
	return true
}

// resultText joins the text content of a tool result.
func resultText(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// callResult is the outcome of a tool call run in the background.
type callResult struct {
	res     *mcp.CallToolResult
	err     error
	elapsed time.Duration
}

// callAsync starts a tool call with a progress token and returns where its result lands.
func (gc *goClient) callAsync(ctx context.Context, name string, args map[string]any, progressToken string) <-chan callResult {
	ch := make(chan callResult, 1)
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if progressToken != "" {
		params.Meta = mcp.Meta{"progressToken": progressToken}
	}
	go func() {
		start := time.Now()
		res, err := gc.CallTool(ctx, params)
		ch <- callResult{res: res, err: err, elapsed: time.Since(start)}
	}()
	return ch
}

// ---------------------------------------------------------------------------------------
// Peers on a chosen port

// serverEverythingScript is the npm server-everything entry point.
func serverEverythingScript(t testing.TB) string {
	t.Helper()
	p := filepath.Join(e2eDir(t), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("server-everything missing (run scripts/peers.sh): %v", err)
	}
	return p
}

// npmServerScript is node_modules/@modelcontextprotocol/NAME/dist/index.js.
func npmServerScript(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(e2eDir(t), "node_modules", "@modelcontextprotocol", name, "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s missing (run scripts/peers.sh): %v", name, err)
	}
	return p
}

// startServerEverythingNodeAt starts the npm server-everything in mode (sse or
// streamableHttp) on port and waits until it accepts connections. It binds all
// interfaces; the tests only connect to 127.0.0.1.
func startServerEverythingNodeAt(t testing.TB, mode string, port int) (*Proc, error) {
	t.Helper()
	env := append(nodeEnv(t), "PORT="+strconv.Itoa(port))
	p := startProcessIn(t, e2eDir(t), "server-everything-"+mode, node(t), []string{serverEverythingScript(t), mode}, env)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if err := waitPort(p, addr, readyTimeout); err != nil {
		p.Stop()
		return p, err
	}
	return p, nil
}

// startServerEverythingNodeProc is startServerEverythingNode that also returns the
// process and port (retrying on a port taken meanwhile).
func startServerEverythingNodeProc(t testing.TB, mode string) (*Proc, int) {
	t.Helper()
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		port := freePort(t)
		p, err := startServerEverythingNodeAt(t, mode, port)
		if err == nil {
			return p, port
		}
		lastErr = err
		if !addrInUse(p) {
			break
		}
	}
	t.Fatalf("server-everything %s: %v", mode, lastErr)
	return nil, 0
}

// ---------------------------------------------------------------------------------------
// Small things

// lockedBuffer is a goroutine-safe bytes.Buffer.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// yamlQuote quotes s for a YAML flow scalar (JSON strings are valid YAML).
func yamlQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// startGatewayChecked is startGateway that also checks, when the test ends, that
// stopping the gateway (SIGTERM) took every process it started with it: the descendants
// seen just before the stop must be gone within 5 s. Survivors are killed and reported.
func startGatewayChecked(t testing.TB, configYAML string) *Gateway {
	t.Helper()
	g := startGateway(t, configYAML)
	t.Cleanup(func() {
		if g.Exited() {
			return // killed by the test; its leftovers are the test's to judge
		}
		kids := descendants(g.Pid)
		g.Stop()
		var left []procInfo
		waitFor(5*time.Second, func() (bool, string) {
			left = left[:0]
			for _, k := range kids {
				if pidAlive(k.Pid) {
					left = append(left, k)
				}
			}
			return len(left) == 0, ""
		})
		for _, k := range left {
			_ = syscall.Kill(k.Pid, syscall.SIGKILL)
		}
		if len(left) > 0 {
			t.Errorf("5 s after the gateway stopped (SIGTERM), %d of its %d descendants were still alive (now killed):%s",
				len(left), len(kids), describeProcs(left))
		}
	})
	return g
}
