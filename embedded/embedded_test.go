package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/embedded"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// countingFixture is the plugintest fixture, counting the Get calls that reach it (an
// atomic: the test reads it while the gateway's goroutines write it).
type countingFixture struct {
	*plugintest.Fixture
	gets atomic.Int64
}

func (f *countingFixture) Get(ctx context.Context, conn, key string, in plugin.GetInput) (plugin.Resource, error) {
	f.gets.Add(1)
	return f.Fixture.Get(ctx, conn, key, in)
}

// host is a test host process: its own HTTP server with the gateway mounted on it.
type host struct {
	gw  *embedded.Gateway
	srv *httptest.Server
	url string
}

// testConfig is a gateway config for a host listening on addr: its own state dir, sessions
// in memory, an agent that may write and one that may only read.
func testConfig(t *testing.T, addr, extra string) []byte {
	return fmt.Appendf(nil, `
listen: %s
state_dir: %s
store: memory
auth: {audit: {path: "off"}}
agents:
  writer: {}
  reader: {read_only: true}
%s`, addr, t.TempDir(), extra)
}

// newHost embeds a gateway with the provider registered as plugin name, mounted on an
// httptest server. Both stop when the test ends.
func newHost(t *testing.T, name string, p plugin.Plugin, extra string) *host {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// The tests start from a whole catalogue: Start waits for the plugin (a gateway
	// serves at once by default, TestEmbedServesWhilePluginStarts).
	g, err := embedded.NewYAML(testConfig(t, ln.Addr().String(), extra), embedded.Options{ConnectWait: 10 * time.Second})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.RegisterPlugin(name, p); err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		ln.Close()
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "the host's own route") })
	mux.Handle("/", g.Handler())
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &host{gw: g, srv: srv, url: srv.URL}
}

// connect opens a go-sdk client session to url/mcp, as agent.
func connect(t *testing.T, url, agent string, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	if hc == nil {
		hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	hc.Transport = headerTransport{hc.Transport, agent}
	c := mcp.NewClient(&mcp.Implementation{Name: "embed-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type headerTransport struct {
	rt    http.RoundTripper
	agent string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Agent-ID", h.agent)
	return h.rt.RoundTrip(r)
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func getPod(t *testing.T, cs *mcp.ClientSession, tool, id string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool,
		Arguments: map[string]any{"connectionId": "prod", "id": id, "namespace": "default"}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func structuredName(res *mcp.CallToolResult) string {
	m, _ := res.StructuredContent.(map[string]any)
	s, _ := m["name"].(string)
	return s
}

// TestEmbedServesInProcessPlugin: a host mounts the gateway's handler next to its own
// routes, registers the fixture provider in code, and a go-sdk client lists and calls its
// tools; the agent's read_only applies to them as to any plugin.
func TestEmbedServesInProcessPlugin(t *testing.T) {
	f := &countingFixture{Fixture: plugintest.New()}
	h := newHost(t, "kube", f, "")

	resp, err := http.Get(h.url + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the host's own route: %s", resp.Status)
	}

	cs := connect(t, h.url, "writer", nil)
	names := toolNames(t, cs)
	for _, want := range []string{"kube_core_v1_Pod_get", "kube_core_v1_Pod_find", "kube_core_v1_Pod_delete",
		"kube_apps_v1_Deployment_create", "kube_list_connections", "kube_list_resource_types"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s; got %v", want, names)
		}
	}
	res := getPod(t, cs, "kube_core_v1_Pod_get", "web-1")
	if res.IsError || structuredName(res) != "web-1" {
		t.Fatalf("get web-1: isError=%v structured=%v", res.IsError, res.StructuredContent)
	}
	if n := f.gets.Load(); n != 1 {
		t.Errorf("the provider saw %d Get calls, want 1", n)
	}
	res = getPod(t, cs, "kube_core_v1_Pod_get", "nope")
	if !res.IsError {
		t.Errorf("get of a missing pod is not an isError result: %v", res.StructuredContent)
	}

	// The reader agent's view: the same plugin, read-only.
	ro := toolNames(t, connect(t, h.url, "reader", nil))
	if !slices.Contains(ro, "kube_core_v1_Pod_get") {
		t.Errorf("reader lacks kube_core_v1_Pod_get: %v", ro)
	}
	for _, n := range ro {
		if strings.HasSuffix(n, "_delete") || strings.HasSuffix(n, "_create") || strings.HasSuffix(n, "_update") {
			t.Errorf("reader sees write tool %s", n)
		}
	}
}

// TestEmbedTwoGateways: two gateways in one process, each with its own provider under
// the same plugin name, do not share calls, plugins or sessions.
func TestEmbedTwoGateways(t *testing.T) {
	fa := &countingFixture{Fixture: plugintest.New()}
	fb := &countingFixture{Fixture: plugintest.New()}
	a := newHost(t, "kube", fa, "")
	b := newHost(t, "kube", fb, "plugins:\n  kube: {type: go, read_only: true}\n")

	ca, cb := connect(t, a.url, "writer", nil), connect(t, b.url, "writer", nil)
	if na := toolNames(t, ca); !slices.Contains(na, "kube_core_v1_Pod_delete") {
		t.Errorf("gateway a lacks the delete tool: %v", na)
	}
	// b's config makes its plugin read-only: its view differs from a's.
	if nb := toolNames(t, cb); slices.Contains(nb, "kube_core_v1_Pod_delete") || !slices.Contains(nb, "kube_core_v1_Pod_get") {
		t.Errorf("gateway b (read-only plugin) lists %v", nb)
	}
	for range 3 {
		if res := getPod(t, ca, "kube_core_v1_Pod_get", "web-0"); res.IsError {
			t.Fatalf("a: %v", res.Content)
		}
	}
	if res := getPod(t, cb, "kube_core_v1_Pod_get", "web-2"); res.IsError || structuredName(res) != "web-2" {
		t.Fatalf("b: isError=%v %v", res.IsError, res.StructuredContent)
	}
	if ga, gb := fa.gets.Load(), fb.gets.Load(); ga != 3 || gb != 1 {
		t.Errorf("Get calls: provider a %d (want 3), provider b %d (want 1)", ga, gb)
	}
	// Closing a leaves b serving.
	if err := a.gw.Close(); err != nil {
		t.Fatal(err)
	}
	if res := getPod(t, cb, "kube_core_v1_Pod_get", "web-3"); res.IsError {
		t.Fatalf("b after a closed: %v", res.Content)
	}
}

// TestEmbedCloseStopsEverything: a gateway that listened itself, served the bridge's
// socket, and had a client session leaves no goroutine behind after Close, and its
// socket file is gone.
func TestEmbedCloseStopsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := embedded.NewYAML(testConfig(t, ln.Addr().String(), ""), embedded.Options{ConnectWait: 10 * time.Second})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = g.Close()
		}
	}()
	if err := g.RegisterPlugin("kube", plugintest.New()); err != nil {
		t.Fatal(err)
	}
	// An in-process server too: Close ends the gateway's session of it and the in-memory
	// server that carried it.
	if err := g.AddMCPServer("own", ownServer("own")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- g.Serve(ln) }()
	sock, err := g.StartSocket("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("socket: %v", err)
	}

	tr := http.DefaultTransport.(*http.Transport).Clone()
	cs := connect(t, "http://"+ln.Addr().String(), "writer", &http.Client{Transport: tr})
	if names := toolNames(t, cs); !slices.Contains(names, "kube_core_v1_Pod_get") {
		t.Fatalf("tools/list: %v", names)
	}
	if res := getPod(t, cs, "kube_core_v1_Pod_get", "web-0"); res.IsError {
		t.Fatalf("call: %v", res.Content)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "own__greet", Arguments: map[string]any{"name": "x"}}); err != nil || res.IsError {
		t.Fatalf("in-process call: %+v, %v", res, err)
	}
	if err := cs.Close(); err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("client close: %v", err)
	}

	closed = true
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after Close: %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
	tr.CloseIdleConnections()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("the socket file is still there after Close: %v", err)
	}
	if err := g.Start(ctx); err == nil {
		t.Error("Start after Close succeeded")
	}
	if _, err := g.StartSocket(""); !errors.Is(err, embedded.ErrClosed) {
		t.Errorf("StartSocket after Close: %v, want ErrClosed", err)
	}

	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEmbedRefusals: bad input gets a clear error.
func TestEmbedRefusals(t *testing.T) {
	if _, err := embedded.New(nil, embedded.Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := embedded.NewYAML([]byte("listen: [oops"), embedded.Options{}); err == nil {
		t.Error("bad YAML accepted")
	}
	sqlPlugin := "plugins:\n  kube: {type: sql, connections: {a: {driver: sqlite, dsn: ':memory:', database: a}}}\n"
	g, err := embedded.NewYAML(testConfig(t, "127.0.0.1:0", sqlPlugin), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.RegisterPlugin("kube", plugintest.New()); err == nil || !strings.Contains(err.Error(), `type "sql"`) {
		t.Errorf("registering over a sql plugin: %v", err)
	}
	if err := g.RegisterPlugin("bad name!", plugintest.New()); err == nil {
		t.Error("a plugin name outside the name rules was accepted")
	}
	if err := g.RegisterPlugin("x", nil); err == nil {
		t.Error("a nil provider was accepted")
	}
	_ = g.Close()

	g, err = embedded.NewYAML(testConfig(t, "127.0.0.1:0", "plugins:\n  tickets: {type: go}\n"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	err = g.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no provider was registered") {
		t.Errorf("Start with a go plugin lacking its provider: %v", err)
	}
}

// TestEmbedVouch: in auth mode none a request the gateway cannot tell is from its own
// user (here: forwarded for a remote client) is refused, unless the host vouches for it
// with embedded.Vouch, as a host that authenticates in front of the gateway does.
func TestEmbedVouch(t *testing.T) {
	h := newHost(t, "kube", plugintest.New(), "")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	serve := func(vouch bool) int {
		r := httptest.NewRequest(http.MethodPost, h.url+"/mcp", strings.NewReader(init))
		r.Host = strings.TrimPrefix(h.url, "http://")
		r.RemoteAddr = "127.0.0.1:40000"
		r.Header.Set("X-Forwarded-For", "203.0.113.9")
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("X-Agent-ID", "writer")
		if vouch {
			r = embedded.Vouch(r)
		}
		w := httptest.NewRecorder()
		h.gw.Handler().ServeHTTP(w, r)
		return w.Code
	}
	if code := serve(false); code != http.StatusUnauthorized {
		t.Errorf("a forwarded request the host did not vouch for: HTTP %d, want 401", code)
	}
	if code := serve(true); code != http.StatusOK {
		t.Errorf("a request the host vouched for: HTTP %d, want 200", code)
	}
}
