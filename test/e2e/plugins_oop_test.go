package e2e

// The sql plugin out of process: bin/mcpgw runs bin/mcpgw-plugin-sql (plugins.<name>.command)
// for a go-sdk client. Killed mid-session, the plugin's tools leave the session with
// notifications/tools/list_changed (and only sessions that had them are told); restarted
// with backoff, they come back. A gateway killed with SIGKILL takes its plugin with it.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oopPluginSQLBin is mcpgw-plugin-sql: $MCPGW_PLUGIN_SQL_BIN, else next to $MCPGW_BIN (make
// build puts both in bin/).
func oopPluginSQLBin(t testing.TB) string {
	t.Helper()
	gw := needGatewayBin(t)
	p := os.Getenv("MCPGW_PLUGIN_SQL_BIN")
	if p == "" {
		p = filepath.Join(filepath.Dir(gw), "mcpgw-plugin-sql")
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("mcpgw-plugin-sql missing (make build builds it): %v", err)
	}
	return p
}

// oopPluginGateway starts a gateway whose plugin "shop" is mcpgw-plugin-sql over a
// SQLite copy of the example shop. The plugin starts only while the file gate exists (a
// shell checks it, then execs the plugin), so a test can hold a restart back and see the
// plugin's absence before it returns.
func oopPluginGateway(t *testing.T, gate string, checked bool) *Gateway {
	t.Helper()
	bin := oopPluginSQLBin(t)
	seed := filepath.Join(e2eDir(t), "..", "..", "examples", "shop.sql")
	db := filepath.Join(t.TempDir(), "shop.db")
	cfg := `store: memory
log: {level: debug, format: text}
plugins:
  shop:
    command: /bin/sh
    args: ["-c", '[ -e "$0" ] || exit 1; exec "$1"', ` + yamlQuote(gate) + `, ` + yamlQuote(bin) + `]
    default_enabled: false
    config:
      connections:
        shop: {driver: sqlite, dsn: ` + yamlQuote(db) + `, seed: ` + yamlQuote(seed) + `}
agents:
  writer: {servers: [shop]}
  bystander: {}
`
	if checked {
		return startGatewayChecked(t, cfg)
	}
	return startGateway(t, cfg)
}

// oopPluginPid is the pid of the gateway's mcpgw-plugin-sql process (0: none yet).
func oopPluginPid(g *Gateway) int {
	for _, p := range descendants(g.Pid) {
		if strings.Contains(p.Cmdline, "mcpgw-plugin-sql") && p.State != "Z" {
			return p.Pid
		}
	}
	return 0
}

func oopHasShopTools(names []string) bool {
	return slices.Contains(names, "shop_shop_v1_customers_count")
}

func TestPluginOutOfProcessKilledAndRestarted(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	g := oopPluginGateway(t, gate, true)
	w := pluginClient(t, g, map[string]string{"X-Agent-ID": "writer"}, nil)
	by := pluginClient(t, g, map[string]string{"X-Agent-ID": "bystander"}, nil)

	// The gateway never waits long for a plugin: its tools may arrive after the session.
	if desc, ok := waitFor(30*time.Second, func() (bool, string) {
		names, err := w.tryToolNames()
		return err == nil && oopHasShopTools(names), strings.Join(names, " ")
	}); !ok {
		t.Fatalf("the plugin's tools did not appear within 30s: %s\n%s", desc, g.Tail(4000))
	}
	if res, out := callJSON(t, w, "shop_shop_v1_customers_count", map[string]any{"connectionId": "shop"}); res.IsError || out["count"] != float64(6) {
		t.Fatalf("count before the kill: %s", resultText(res))
	}
	pid := oopPluginPid(g)
	if pid == 0 {
		t.Fatalf("no mcpgw-plugin-sql under the gateway: %s", describeProcs(descendants(g.Pid)))
	}
	drain := func(gc *goClient) {
		for {
			select {
			case <-gc.changedCh:
			default:
				return
			}
		}
	}
	drain(w)
	before := by.listChanged.Load()

	// Kill it with the gate closed: the restarts fail until the test opens it again.
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.changedCh:
	case <-time.After(20 * time.Second):
		t.Fatalf("no tools/list_changed within 20s of killing the plugin\n%s", g.Tail(4000))
	}
	if names := w.toolNames(t); oopHasShopTools(names) {
		t.Fatalf("the killed plugin's tools are still listed: %v", names)
	}
	ctxRes, err := w.CallTool(t.Context(), &mcp.CallToolParams{Name: "shop_shop_v1_customers_count", Arguments: map[string]any{"connectionId": "shop"}})
	if err == nil && !ctxRes.IsError {
		t.Errorf("calling a tool of the killed plugin worked: %s", resultText(ctxRes))
	}
	// A restart attempt runs, and fails, while the gate is closed.
	if _, ok := waitFor(20*time.Second, func() (bool, string) { return strings.Count(g.Log(), `msg="plugin down"`) >= 2, "" }); !ok {
		t.Errorf("no failed restart attempt logged within 20s\n%s", g.Tail(4000))
	}
	if names := w.toolNames(t); oopHasShopTools(names) {
		t.Fatalf("the plugin's tools are listed while it cannot start: %v", names)
	}

	// Open the gate: the next attempt (backoff) starts it, and the tools come back.
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.changedCh:
	case <-time.After(60 * time.Second):
		t.Fatalf("no tools/list_changed within 60s of allowing the restart\n%s", g.Tail(4000))
	}
	if names := w.toolNames(t); !oopHasShopTools(names) {
		t.Fatalf("the restarted plugin's tools are not back: %v", names)
	}
	if res, out := callJSON(t, w, "shop_shop_v1_customers_count", map[string]any{"connectionId": "shop"}); res.IsError || out["count"] != float64(6) {
		t.Fatalf("count after the restart: %s", resultText(res))
	}
	if pid2 := oopPluginPid(g); pid2 == 0 || pid2 == pid {
		t.Errorf("plugin process after the restart: %d (killed: %d)", pid2, pid)
	}
	// The bystander's view never had the plugin: it was told nothing. (The writer got both
	// notifications; the gateway sends each change to every affected session at once.)
	if n := by.listChanged.Load() - before; n != 0 {
		t.Errorf("a session without the plugin got %d tools/list_changed", n)
	}
	if !strings.Contains(g.Log(), "plugin down") || !strings.Contains(g.Log(), "exited") {
		t.Errorf("the gateway's log does not say the plugin went down because its process exited\n%s", g.Tail(4000))
	}
}

// A gateway killed with SIGKILL cannot stop its plugin: the plugin notices the
// connection closing and exits by itself.
func TestPluginOutOfProcessFollowsAKilledGateway(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	g := oopPluginGateway(t, gate, false)
	var pid int
	if _, ok := waitFor(30*time.Second, func() (bool, string) { pid = oopPluginPid(g); return pid != 0, "" }); !ok {
		t.Fatalf("no plugin process within 30s\n%s", g.Tail(4000))
	}
	killPidsAtCleanup(t, func() []int { return []int{pid} })
	g.Kill9()
	if _, ok := waitFor(10*time.Second, func() (bool, string) { return !pidAlive(pid), "" }); !ok {
		t.Fatalf("the plugin (pid %d) still runs 10s after its gateway was killed", pid)
	}
}
