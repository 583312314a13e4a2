package e2e

// A newcomer's first hour with the bridge: `make install`, `make run`'s daemon met by a
// bare `mcpgw-bridge` (no flags), client-config's absolute paths, and
// `printf '<request>\n' | mcpgw-bridge` delivering its answer.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// repoRoot is the repository (test/e2e's grandparent).
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join(e2eDir(t), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "examples", "mcpgw.yaml")); err != nil {
		t.Fatalf("repository root not found: %v", err)
	}
	return root
}

// isolateUserDirs points HOME and XDG_STATE_HOME (for this test and the processes it
// starts) at fresh short directories, so that nothing reads or writes the real user's
// state, and unsets the variables that would steer the daemon or the bridge elsewhere. It
// returns the default state dir the daemon and the bridge should both land on.
func isolateUserDirs(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	xdg := shortStateDir(t)
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", xdg)
	t.Setenv("MCPGW_STATE_DIR", "") // the config treats empty as unset
	t.Setenv("MCPGW_SOCKET", "")
	t.Setenv("MCPGW_CONFIG", "")
	return filepath.Join(xdg, "mcpgw")
}

// TestBridgeMakeRunDefaults: the daemon `make run` starts (examples/mcpgw.yaml, run from
// the repository root, MCPGW_STATE_DIR unset) and a bare `mcpgw-bridge` meet on the
// default socket, and `mcpgw client-config --via bridge` prints absolute paths.
func TestBridgeMakeRunDefaults(t *testing.T) {
	needPeers(t)
	gw := needGatewayBin(t)
	bridgeBin(t)
	root := repoRoot(t)
	stateDir := isolateUserDirs(t)

	// The example config as it is, but on a free port: 8080 may be a developer's `make run`.
	example, err := os.ReadFile(filepath.Join(root, "examples", "mcpgw.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	if n := bytes.Count(example, []byte("listen: 127.0.0.1:8080\n")); n != 1 {
		t.Fatalf("examples/mcpgw.yaml has %d `listen: 127.0.0.1:8080` lines, want 1", n)
	}
	cfg := filepath.Join(t.TempDir(), "mcpgw.yaml")
	body := bytes.Replace(example, []byte("listen: 127.0.0.1:8080\n"), []byte(fmt.Sprintf("listen: 127.0.0.1:%d\n", port)), 1)
	if err := os.WriteFile(cfg, body, 0o600); err != nil {
		t.Fatal(err)
	}
	// make run builds .cache/bin/everything-server, which the example names relative to
	// the repository root; the peers install put it there.
	if _, err := os.Stat(filepath.Join(root, ".cache", "bin", "everything-server")); err != nil {
		t.Fatalf("everything-server missing (make peers): %v", err)
	}
	p := startProcessIn(t, root, "mcpgw-make-run", gw, []string{"serve", "--config", cfg}, nil)
	if err := waitHTTP(p, fmt.Sprintf("http://127.0.0.1:%d/healthz", port), http.StatusOK, readyTimeout); err != nil {
		t.Fatal(err)
	}
	if err := waitStarted(p, fmt.Sprintf("http://127.0.0.1:%d", port), readyTimeout); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(stateDir, "mcpgw.sock")
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the daemon has no socket at the default place %s: %v\n%s", sock, err, p.Tail(2000))
	}

	bc := startBridge(t, "--agent", "first-hour") // no --socket, no $MCPGW_SOCKET
	bc.initialize(t)
	if names := bc.tools(t); !slices.Contains(names, "everything__test_simple_text") {
		t.Fatalf("tools through the bare bridge: %v, want everything__test_simple_text among them", names)
	}

	// client-config: the bridge's absolute path, and no --socket (the default is right).
	// Run where make run runs, as a user does: the example's relative paths (the
	// everything-server, the plugin's seed file) are relative to the repository root.
	cc := exec.Command(gw, "client-config", "--config", cfg, "--agent", "a1", "--client", "claude-code", "--via", "bridge")
	cc.Dir = root
	var ccErr bytes.Buffer
	cc.Stderr = &ccErr
	out, err := cc.Output()
	if err != nil {
		t.Fatalf("client-config: %v\n%s", err, ccErr.String())
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("client-config output: %v\n%s", err, out)
	}
	e := doc.MCPServers["mcpgw"]
	if !filepath.IsAbs(e.Command) {
		t.Errorf("client-config command %q is not absolute", e.Command)
	}
	if fi, err := os.Stat(e.Command); err != nil || fi.IsDir() {
		t.Errorf("client-config command %q: %v", e.Command, err)
	}
	if slices.Contains(e.Args, "--socket") {
		t.Errorf("client-config args %q: --socket with the default state dir", e.Args)
	}
}

// TestBridgeStdinEOF: `printf '<initialize>\n<tools/list>\n' | mcpgw-bridge` against the
// real daemon prints both answers and exits 0, and its log says it delivered them.
func TestBridgeStdinEOF(t *testing.T) {
	needPeers(t)
	bridge := bridgeBin(t)
	stateDir := shortStateDir(t)
	_, sock := startBridgeGateway(t, stateDir, `servers:
  everything:
    type: stdio
    command: {{everything_server}}
`)
	for _, mode := range [][]string{nil, {"--socket-http"}} {
		name := "line"
		if mode != nil {
			name = "socket-http"
		}
		t.Run(name, func(t *testing.T) {
			in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bridge, append([]string{"--socket", sock}, mode...)...)
			cmd.Stdin = strings.NewReader(in)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("mcpgw-bridge: %v (want exit 0)\nstderr:\n%s", err, stderr.String())
			}
			t.Logf("the bridge exited %s after starting; stderr:\n%s", time.Since(start).Round(time.Millisecond), stderr.String())
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			got := map[string]brMsg{}
			for _, l := range lines {
				var m brMsg
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("stdout line %q: %v", l, err)
				}
				got[string(m.ID)] = m
			}
			for _, id := range []string{"1", "2"} {
				if m, ok := got[id]; !ok || m.Error != nil || m.Result == nil {
					t.Errorf("id %s: %v (present %v); stdout:\n%s", id, m, ok, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), "stdin closed;") || strings.Contains(stderr.String(), "went away") {
				t.Errorf("the log does not say stdin closed, or blames the gateway:\n%s", stderr.String())
			}
		})
	}
}

// TestBridgeMakeInstall: `make install PREFIX=<temp>` puts the binaries there, says
// where and that the directory is not on PATH (with the line to add), and the installed
// binaries run. (-o build: the binaries under test are already built, and rebuilding
// them under the other tests' feet is not this test's business.)
func TestBridgeMakeInstall(t *testing.T) {
	needGatewayBin(t)
	bridgeBin(t)
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on PATH: cannot run `make install`")
	}
	root := repoRoot(t)
	prefix := filepath.Join(t.TempDir(), "prefix") // does not exist yet: install creates it
	bindir := filepath.Join(prefix, "bin")
	run := func(path string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, makeBin, "--no-print-directory", "-C", root, "-o", "build", "install", "PREFIX="+prefix)
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make install: %v\n%s", err, out)
		}
		return string(out)
	}
	out := run(os.Getenv("PATH"))
	for _, want := range []string{
		"installed " + filepath.Join(bindir, "mcpgw") + ", " + filepath.Join(bindir, "mcpgw-bridge") + " and " + filepath.Join(bindir, "mcpgw-plugin-sql"),
		bindir + " is not on your PATH",
		`export PATH="` + bindir + `:$PATH"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("make install output lacks %q:\n%s", want, out)
		}
	}
	// The out-of-process sql plugin is installed beside them, executable (the gateway
	// starts it; it has no flags of its own to run here).
	if fi, err := os.Stat(filepath.Join(bindir, "mcpgw-plugin-sql")); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("mcpgw-plugin-sql not installed as an executable: %v", err)
	}
	versions := map[string]string{}
	for _, bin := range []string{"mcpgw", "mcpgw-bridge"} {
		p := filepath.Join(bindir, bin)
		v, err := exec.Command(p, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", p, err)
		}
		f := strings.Fields(string(v))
		if len(f) != 2 || f[0] != bin {
			t.Fatalf("%s --version: %q, want %q and a version", p, v, bin)
		}
		versions[bin] = f[1]
		h, err := exec.Command(p, "-h").CombinedOutput()
		if err != nil || !strings.Contains(string(h), "usage") && !strings.Contains(string(h), "Usage") {
			t.Errorf("%s -h: %v\n%s", p, err, h)
		}
	}
	if versions["mcpgw"] != versions["mcpgw-bridge"] {
		t.Errorf("versions differ: %v", versions)
	}
	// Again, with the directory on PATH: it says so.
	if out := run(bindir + ":" + os.Getenv("PATH")); !strings.Contains(out, bindir+" is on your PATH") {
		t.Errorf("with %s on PATH, make install says:\n%s", bindir, out)
	}
}
