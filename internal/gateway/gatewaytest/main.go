package gatewaytest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The go-sdk conformance everything-server is the real upstream of the tests: a binary
// from $MCPGW_PEERS/bin, or built here from the go.mod tool dependency. everything is the
// one a test binary runs, set by Main before any test runs and only read after.
var everything struct {
	bin string // path of the binary
	url string // a shared streamable HTTP instance for all tests
}

// EverythingBin is the path of the everything-server binary (to run it over stdio).
func EverythingBin() string { return everything.bin }

// EverythingURL is the streamable HTTP endpoint of the everything-server Main started,
// shared by every test of the binary; Start puts it in place of {{everything}}.
func EverythingURL() string { return everything.url }

// Main runs a test binary's tests with the everything-server up, and returns their exit
// code. A package whose tests use the harness calls it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(gatewaytest.Main(m)) }
func Main(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "mcpgw-gateway-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	everything.bin = filepath.Join(os.Getenv("MCPGW_PEERS"), "bin", "everything-server")
	if _, err := os.Stat(EverythingBin()); os.Getenv("MCPGW_PEERS") == "" || err != nil {
		everything.bin = filepath.Join(tmp, "everything-server")
		build := exec.Command("go", "build", "-o", EverythingBin(), "github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building everything-server: %v\n%s", err, out)
			return 1
		}
	}
	url, stop, err := StartEverything(filepath.Join(tmp, "everything-server.log"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	everything.url = url
	return m.Run()
}

// StartEverything runs the everything-server as a stateful streamable HTTP server on a
// free loopback port. stop kills exactly that process.
func StartEverything(logPath string) (url string, stop func(), err error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		addr := l.Addr().String()
		l.Close()
		logf, err := os.Create(logPath)
		if err != nil {
			return "", nil, err
		}
		cmd := exec.Command(EverythingBin(), "-http", addr, "-stateless=false")
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			logf.Close()
			return "", nil, err
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
		stop := func() {
			_ = cmd.Process.Kill()
			<-exited
		}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
				c.Close()
				return "http://" + addr + "/mcp", stop, nil
			}
			select {
			case <-exited:
				lastErr = fmt.Errorf("everything-server exited at start (see %s)", logPath)
			case <-time.After(20 * time.Millisecond):
				continue
			}
			break
		}
		stop()
		if lastErr == nil {
			lastErr = fmt.Errorf("everything-server did not listen on %s within 10s", addr)
		}
	}
	return "", nil, lastErr
}
