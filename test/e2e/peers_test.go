package e2e

// Baselines: the harness and the real peers, without the gateway. When one of these
// fails, the peers or the harness broke, not mcpgw.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// The active suite of @modelcontextprotocol/conformance 0.1.16: 30 scenarios, 40 checks,
// all passing against the go-sdk everything-server in stateful mode.
const (
	activeScenarios = 30
	activeChecks    = 40
)

func TestHarnessConformanceDirect(t *testing.T) {
	needPeers(t)
	url := startEverythingHTTP(t)
	r := conformance(t, url)
	t.Logf("conformance direct: %d/%d checks passed in %d scenarios (exit %d)", r.Passed, r.Total(), len(r.Scenarios), r.ExitCode)
	if r.Passed != activeChecks || r.Failed != 0 || len(r.Scenarios) != activeScenarios {
		t.Errorf("want %d/%d checks in %d scenarios, got %d passed, %d failing, %d scenarios; failing:\n  %s",
			activeChecks, activeChecks, activeScenarios, r.Passed, r.Failed, len(r.Scenarios),
			strings.Join(r.FailedScenarios(), "\n  "))
	}
	if r.ExitCode != 0 {
		t.Errorf("conformance exited %d", r.ExitCode)
	}
}

// recorder is a reverse proxy on 127.0.0.1 that records the JSON-RPC methods clients
// POST to the target, so a test can see what a real client put on the wire.
type recorder struct {
	*httptest.Server
	mu      sync.Mutex
	methods []string
}

func newRecorder(t testing.TB, target string) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	rec := &recorder{}
	proxy := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u) },
		FlushInterval: -1, // stream SSE as it comes
	}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
			r.Body.Close()
			if err == nil {
				rec.note(body)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (rec *recorder) note(body []byte) {
	var msgs []struct {
		Method string `json:"method"`
	}
	if len(body) > 0 && body[0] != '[' {
		body = append(append([]byte{'['}, body...), ']')
	}
	if json.Unmarshal(body, &msgs) != nil {
		return
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, m := range msgs {
		if m.Method != "" {
			rec.methods = append(rec.methods, m.Method)
		}
	}
}

func (rec *recorder) saw(method string) bool {
	return slices.Contains(rec.seen(), method)
}

func (rec *recorder) seen() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.methods)
}

// TestHarnessAggregateClientDirect drives js/aggregate-client.mjs (TypeScript SDK)
// against the npm reference server-everything over both HTTP transports: tool listing,
// a call, progress notifications, and a call aborted through an AbortController, which
// must put notifications/cancelled on the wire.
func TestHarnessAggregateClientDirect(t *testing.T) {
	needPeers(t)
	for _, tc := range []struct{ mode, transport string }{
		{"streamableHttp", "http"},
		{"sse", "sse"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			target := startServerEverythingNode(t, tc.mode)
			rec := newRecorder(t, target)
			u, _ := url.Parse(target)
			steps := []Step{
				{"op": "call", "name": "echo", "args": map[string]any{"message": "hello"}},
				{"op": "call", "name": "trigger-long-running-operation", "args": map[string]any{"duration": 1, "steps": 4}, "progress": true},
				{"op": "call", "name": "trigger-long-running-operation", "args": map[string]any{"duration": 20, "steps": 20}, "progress": true, "abortAfterMs": 1500},
				{"op": "listPrompts"},
				{"op": "readResource", "uri": "demo://resource/static/document/architecture.md"},
				{"op": "ping"},
			}
			rep := runAggregateClient(t, rec.URL+u.Path, steps, ClientOptions{
				Transport: tc.transport,
				Headers:   []string{"X-Agent-ID: e2e"},
				Timeout:   60 * time.Second,
			})
			if !rep.OK {
				t.Fatalf("client failed: %+v", rep.Error)
			}
			for _, want := range []string{"echo", "trigger-long-running-operation", "get-sum"} {
				if !slices.Contains(rep.Tools, want) {
					t.Errorf("tools/list lacks %q: %v", want, rep.Tools)
				}
			}
			if len(rep.Results) != len(steps) {
				t.Fatalf("got %d results for %d steps", len(rep.Results), len(steps))
			}
			if r := rep.Results[0]; !r.OK || !strings.Contains(string(r.Result), "Echo: hello") {
				t.Errorf("echo: %+v %s", r.Error, r.Result)
			}
			// Over SSE the last progress notification may trail the result, so ask for most.
			if r := rep.Results[1]; !r.OK || len(r.Progress) < 3 {
				t.Errorf("long-running: ok=%v error=%+v progress=%d (want >= 3)", r.OK, r.Error, len(r.Progress))
			}
			if r := rep.Results[2]; r.OK || !r.Aborted {
				t.Errorf("aborted call: ok=%v aborted=%v error=%+v", r.OK, r.Aborted, r.Error)
			}
			for i, r := range rep.Results[3:] {
				if !r.OK {
					t.Errorf("step %d (%s): %+v", i+3, r.Op, r.Error)
				}
			}
			if !rec.saw("notifications/cancelled") {
				t.Errorf("the aborted call sent no notifications/cancelled; methods seen: %v", rec.seen())
			}
		})
	}
}

// TestHarnessInspectorDirect checks the Inspector CLI (installed without its
// postinstall script) against the npm server-everything over stdio.
func TestHarnessInspectorDirect(t *testing.T) {
	needPeers(t)
	cmd, args := serverEverythingStdio(t)
	var out struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	full := append(append([]string{cmd}, args...), "--method", "tools/list")
	res := runInspector(t, 90*time.Second, &out, full...)
	if res.ExitCode != 0 {
		t.Fatalf("inspector exit %d (timed out %v)\nstdout: %s\nstderr: %s", res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	}
	var names []string
	for _, tl := range out.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "echo") || len(names) < 10 {
		t.Errorf("inspector tools/list: %v", names)
	}
}

// TestHarnessProcessStop checks that stopping a process also stops its children (the
// process group), so no test leaves servers behind. Needs no peers.
func TestHarnessProcessStop(t *testing.T) {
	sh := peers.Command(t, "sh")
	pidFile := t.TempDir() + "/child.pid"
	p := startProcess(t, "sleeper", sh, []string{"-c", "sleep 300 & echo $! > " + pidFile + "; wait"}, nil)
	var child int
	for i := 0; i < 100 && child == 0; i++ {
		if b, err := os.ReadFile(pidFile); err == nil {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if child == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if child == 0 {
		t.Fatal("child pid not written")
	}
	start := time.Now()
	p.Stop()
	if !p.Exited() {
		t.Fatal("leader still running after Stop")
	}
	if d := time.Since(start); d > stopGrace+time.Second {
		t.Errorf("Stop took %s", d)
	}
	gone := false
	for i := 0; i < 100 && !gone; i++ {
		// The child is reparented to init (or a subreaper); ESRCH once reaped, and a
		// zombie counts as gone too.
		if err := syscall.Kill(child, 0); err != nil {
			gone = true
		} else if b, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat"); bytes.Contains(b, []byte(") Z ")) {
			gone = true
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if !gone {
		_ = syscall.Kill(child, syscall.SIGKILL)
		t.Errorf("child %d survived Stop", child)
	}
}
