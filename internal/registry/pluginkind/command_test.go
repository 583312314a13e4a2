//go:build linux

package pluginkind_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/peers"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/registry/pluginkind"
	"github.com/mcpgw/mcpgw/plugin"
)

// buildPluginSQLExe builds cmd/mcpgw-plugin-sql into a temp dir.
func buildPluginSQLExe(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		peers.Missing(t, "the go command is not on PATH (this test builds cmd/mcpgw-plugin-sql)", "install Go (go.mod names the version)")
	}
	bin := filepath.Join(t.TempDir(), "mcpgw-plugin-sql")
	cmd := exec.Command(goBin, "build", "-o", bin, "../../../cmd/mcpgw-plugin-sql")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/mcpgw-plugin-sql: %v\n%s", err, out)
	}
	return bin
}

// pidOfExe finds the one running process whose executable is path.
func pidOfExe(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && exe == path {
			return pid
		}
	}
	return 0
}

// TestCommandPluginCrashAndRestart: an out-of-process plugin comes up with its tools; its
// process killed, it is down at once with its tools gone and the change announced; it is
// started again with backoff and its tools come back.
func TestCommandPluginCrashAndRestart(t *testing.T) {
	bin := buildPluginSQLExe(t)
	dbPath := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO users (name) VALUES ('ada')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cfg := &config.Config{Naming: config.Naming{Prefix: "always", Separator: "__", MaxLength: 64}, Upstream: config.UpstreamDefaults{ConnectTimeout: 30 * time.Second},
		Plugins: map[string]*config.PluginDef{"shop": {Command: bin, Refresh: -1, Config: map[string]any{
			"connections": map[string]any{"main": map[string]any{"driver": "sqlite", "dsn": dbPath}}}}}}
	r := registry.NewWithOptions(cfg, registry.Options{Log: slog.New(slog.DiscardHandler), Timing: registry.Timing{BackoffMin: 20 * time.Millisecond}})
	r.PluginKinds = registry.PluginKinds{registry.KindCommand: pluginkind.Command()}
	var mu sync.Mutex
	var changes []string
	r.OnChange = func(s string) { mu.Lock(); changes = append(changes, s); mu.Unlock() }
	t.Cleanup(r.Close)
	r.Start(30 * time.Second)
	p := r.Plugin("shop")
	waitState(t, p, registry.StateUp)
	if st := p.Status(); st.Type != "command" || st.Connections != 1 {
		t.Errorf("status: %+v", st)
	}
	if names := toolNames(r.ViewWith([]string{"shop"}, nil, nil, nil, false)); !slices.Contains(names, "shop_shop_v1_users_get") {
		t.Fatalf("tools: %v", names)
	}
	pid := pidOfExe(t, bin)
	if pid == 0 {
		t.Fatal("no process runs the plugin")
	}
	mu.Lock()
	changes = nil
	mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Down (the only way out of up here), then up again with a new process.
	deadline := time.Now().Add(20 * time.Second)
	sawDown := false
	for {
		st, why := p.State()
		if st == registry.StateDown {
			sawDown = true
			if !strings.Contains(why, "exited") && !strings.Contains(why, "connection") && !strings.Contains(why, "not reachable") {
				t.Errorf("down because %q", why)
			}
		}
		if st == registry.StateUp && sawDown {
			break
		}
		if st == registry.StateUp && p.Status().Restarts > 0 {
			break // went down and up between two looks
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %s (%s) 20s after the kill", st, why)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if st := p.Status(); st.Restarts < 1 {
		t.Errorf("restarts after the kill: %+v", st)
	}
	// OnChange runs on its own goroutine: wait (bounded) for both announcements.
	for deadline = time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(changes)
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("changes announced for the crash and the restart: %d, want at least 2", n)
		}
	}
	if names := toolNames(r.ViewWith([]string{"shop"}, nil, nil, nil, false)); !slices.Contains(names, "shop_shop_v1_users_get") {
		t.Errorf("tools after the restart: %v", names)
	}
	if pid2 := pidOfExe(t, bin); pid2 == 0 || pid2 == pid {
		t.Errorf("process after the restart: %d (was %d)", pid2, pid)
	}
	r.Close()
	deadline = time.Now().Add(10 * time.Second)
	for pidOfExe(t, bin) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the plugin process outlived the registry's Close by 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCommandKindBusyWaitPerRegistry: two registries given one pluginkind.All() value run
// the same plugin executable; the one with upstream.busy_poll busy-waits for its plugin
// calls (the catalogue read and a tool call go through the host's interceptor) and
// counts them as its own, the one without never does, and an Apply that turns it off
// stops the first one's waits.
func TestCommandKindBusyWaitPerRegistry(t *testing.T) {
	if runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skip("busy waiting needs two CPUs: with one it is always off")
	}
	bin := buildPluginSQLExe(t)
	dbPath := filepath.Join(t.TempDir(), "shop.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO users (name) VALUES ('ada')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	kinds := pluginkind.All()
	var regs []*registry.Registry
	for _, poll := range []time.Duration{50 * time.Millisecond, 0} {
		cfg := &config.Config{Naming: config.Naming{Prefix: "always", Separator: "__", MaxLength: 64},
			Upstream: config.UpstreamDefaults{ConnectTimeout: 30 * time.Second, BusyPoll: poll},
			Plugins: map[string]*config.PluginDef{"shop": {Command: bin, Refresh: -1, Config: map[string]any{
				"connections": map[string]any{"main": map[string]any{"driver": "sqlite", "dsn": dbPath}}}}}}
		r := registry.New(cfg, slog.New(slog.DiscardHandler))
		r.PluginKinds = kinds
		t.Cleanup(r.Close)
		r.Start(30 * time.Second)
		waitState(t, r.Plugin("shop"), registry.StateUp)
		regs = append(regs, r)
	}
	call := func(r *registry.Registry) {
		t.Helper()
		v := r.ViewWith([]string{"shop"}, nil, nil, nil, false)
		i := slices.IndexFunc(v.Tools, func(tl *registry.Tool) bool { return tl.Exposed == "shop_shop_v1_users_list" })
		if i < 0 {
			t.Fatalf("no list tool in %v", toolNames(v))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := r.PluginFor(v.Tools[i]).Call(ctx, v.Tools[i].PluginTool, json.RawMessage(`{"connectionId":"main"}`), plugin.CallOptions{})
		if err != nil || res.IsError {
			t.Fatalf("call %s: %+v, %v", v.Tools[i].Exposed, res, err)
		}
	}
	started := regs[0].PluginBusyStats()
	call(regs[0])
	call(regs[1])
	a, b := regs[0].PluginBusyStats(), regs[1].PluginBusyStats()
	if started.Waits < 1 || a.Waits <= started.Waits || b != (registry.BusyStats{}) {
		t.Fatalf("busy waits: with busy_poll %+v after the start and %+v after a call, without %+v; want them in the first only, for the call too", started, a, b)
	}
	off := *regs[0].Config()
	off.Upstream.BusyPoll = 0
	regs[0].Apply(&off)
	call(regs[0])
	if a2 := regs[0].PluginBusyStats(); a2.Waits != a.Waits {
		t.Errorf("busy waits after busy_poll went to 0: %+v, before %+v", a2, a)
	}
}
