package embedded_test

import (
	"context"
	"errors"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/embedded"
)

// TestMain makes the test binary a guardian (RunGuardian, as a host's main does) and,
// with EMBED_TEST_STDIO=1, a stdio MCP server with one tool.
func TestMain(m *testing.M) {
	embedded.RunGuardian(os.Args)
	if os.Getenv("EMBED_TEST_STDIO") == "1" {
		s := mcp.NewServer(&mcp.Implementation{Name: "stdio", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
		})
		_ = s.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunGuardian: a program whose main calls RunGuardian runs, as a guardian, the
// command its arguments carry, passing its output through and exiting with its status;
// other arguments are not a guardian's.
func TestRunGuardian(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the command run is sh")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if embedded.IsGuardian([]string{exe, "-test.run=x"}) || embedded.IsGuardian([]string{exe}) {
		t.Fatal("test arguments taken for a guardian's")
	}
	args := []string{"__mcpgw_child", "sh", "-c", "echo guarded; exit 3"}
	if !embedded.IsGuardian(append([]string{exe}, args...)) {
		t.Fatal("the gateway's guardian arguments not recognised")
	}
	out, err := exec.Command(exe, args...).Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || strings.TrimSpace(string(out)) != "guarded" {
		t.Fatalf("guardian: %q, %v", out, err)
	}
}

// TestGuardianPath: with GuardianPath, a stdio upstream runs under the guardian and its
// tools are served.
func TestGuardianPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix test")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	extra := "servers:\n  echo: {type: stdio, command: " + exe + ", env: {EMBED_TEST_STDIO: '1'}}\n"
	h := startOn(t, extra, embedded.Options{GuardianPath: exe, ConnectWait: 20 * time.Second})
	cs := connect(t, h, "writer", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo__ping"})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "pong" {
		t.Fatalf("call under the guardian: %+v, %v (tools %v)", res, err, toolNames(t, cs))
	}
	if runtime.GOOS == "linux" && !guardianRuns(exe) {
		t.Fatal("no process of the test binary runs as a guardian")
	}
}

// guardianRuns reports whether a process runs exe as a guardian (Linux: /proc).
func guardianRuns(exe string) bool {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && args[0] == exe && embedded.IsGuardian(args) {
			return true
		}
	}
	return false
}

// TestStoreOption: gateways given one store share it, and it outlives their Close; an
// unknown store spec and an empty Store are errors.
func TestStoreOption(t *testing.T) {
	st := embedded.MemoryStore()
	for range 2 {
		g, err := embedded.NewYAML(testConfig(t, "127.0.0.1:0", ""), embedded.Options{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	bolt, err := embedded.OpenStore("bolt", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := bolt.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := embedded.OpenStore("nosuch", ""); err == nil || !strings.Contains(err.Error(), "unknown store") {
		t.Fatalf("OpenStore(nosuch): %v", err)
	}
	if err := (&embedded.Store{}).Close(); err != nil {
		t.Fatalf("Close of an empty Store: %v", err)
	}
	g, err := embedded.NewYAML(testConfig(t, "127.0.0.1:0", ""), embedded.Options{Store: &embedded.Store{}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "empty Store") {
		t.Fatalf("Start with an empty Store: %v", err)
	}
}

// startOn starts a gateway with opts on a test server of its own and returns the server's
// URL. Both stop when the test ends.
func startOn(t *testing.T, extra string, opts embedded.Options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := embedded.NewYAML(testConfig(t, ln.Addr().String(), extra), opts)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(context.Background()); err != nil {
		ln.Close()
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(g.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}
