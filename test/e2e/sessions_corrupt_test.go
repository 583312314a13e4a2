package e2e

// A state file that is not a sound bbolt database stops `mcpgw serve` before it listens:
// the gateway refuses to start rather than drop every session silently, and says which
// file is at fault.

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCorruptStateFile(t *testing.T) {
	bin := needGatewayBin(t)

	// A sound state file with a session in it, cut short afterwards by "truncated".
	var sound []byte
	{
		g := startGateway(t, "log: {level: info, format: text}\nstore: bolt\n")
		s := sessOpen(t, g.URL, nil)
		if a := s.call(t, "ping", map[string]any{}); !a.ok() {
			t.Fatalf("ping: %s", a)
		}
		g.Stop()
		b, err := os.ReadFile(filepath.Join(g.StateDir, "mcpgw.db"))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 4*4096 {
			t.Fatalf("the sound state file has only %d bytes", len(b))
		}
		sound = b
	}
	random := make([]byte, 64<<10)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"text", []byte(strings.Repeat("this is not a bbolt database\n", 1000))},
		{"random", random},
		// The two meta pages survive; the pages they point to are gone.
		{"truncated", sound[:2*4096+512]},
		// A bbolt header whose meta pages were overwritten.
		{"zeroed-meta", append(make([]byte, 2*4096), sound[2*4096:]...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stateDir := t.TempDir()
			dbPath := filepath.Join(stateDir, "mcpgw.db")
			if err := os.WriteFile(dbPath, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			port := freePort(t)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			cfg := sessWriteConfig(t, "mcpgw.yaml", fmt.Sprintf(`listen: %s
state_dir: %s
store: bolt
log: {level: info, format: text}
servers:
  ev: {type: stdio, command: %s}
`, addr, stateDir, yamlQuote(everythingServer(t))))

			// Watch the port while the gateway runs: it must never listen.
			stop := make(chan struct{})
			listened := make(chan bool, 1)
			go func() {
				seen := false
				defer func() { listened <- seen }()
				for i := 0; i < 2000; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if sessListening(addr) {
						seen = true
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
			start := time.Now()
			res := runTool(t, 30*time.Second, nil, bin, "serve", "--config", cfg)
			close(stop)
			elapsed := time.Since(start)
			if res.TimedOut {
				// Still running: it started on a corrupt file. Ask it what it serves.
				t.Fatalf("mcpgw serve did not exit within 30 s on a corrupt state file (listening: %v)\nstderr:\n%s",
					sessListening(addr), res.Stderr)
			}
			t.Logf("exit %d after %s; stderr: %s", res.ExitCode, elapsed.Round(time.Millisecond), strings.TrimSpace(res.Stderr))
			if res.ExitCode == 0 {
				t.Errorf("mcpgw serve exited 0 on a corrupt state file")
			}
			if !strings.Contains(res.Stderr, dbPath) {
				t.Errorf("stderr does not name the state file %s:\n%s", dbPath, res.Stderr)
			}
			if strings.Contains(res.Stderr, "panic:") || strings.Contains(res.Stderr, "goroutine ") || strings.Contains(res.Stderr, "SIGBUS") {
				t.Errorf("mcpgw crashed instead of refusing cleanly:\n%s", res.Stderr)
			}
			if <-listened {
				t.Errorf("mcpgw listened on %s while refusing to start", addr)
			}
			if sessListening(addr) {
				t.Errorf("something listens on %s after mcpgw exited", addr)
			}
			if resp, err := probeClient.Get("http://" + addr + "/healthz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Errorf("/healthz answers 200 on %s", addr)
				}
			}
			if _, err := os.Stat(filepath.Join(stateDir, "mcpgw.sock")); err == nil {
				t.Errorf("mcpgw created its socket %s although it refused to start", filepath.Join(stateDir, "mcpgw.sock"))
			}
			// The file is left as it was, for the operator to inspect.
			if b, err := os.ReadFile(dbPath); err != nil || string(b) != string(tc.data) {
				t.Errorf("the corrupt state file was changed or removed (err %v, %d bytes, was %d)", err, len(b), len(tc.data))
			}
		})
	}
}
