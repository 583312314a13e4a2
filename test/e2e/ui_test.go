package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/peers"
)

// chromiumPath is where Debian's chromium package puts the browser (`make peers`
// installs it; playwright-core drives it; no browser is ever downloaded).
const chromiumPath = "/usr/bin/chromium"

// uiReport is what js/ui-e2e.mjs prints.
type uiReport struct {
	OK               bool                   `json:"ok"`
	Failures         []string               `json:"failures"`
	Steps            []string               `json:"steps"`
	Screenshots      []string               `json:"screenshots"`
	Axe              map[string][]axeResult `json:"axe"`
	CSP              string                 `json:"csp"`
	NoCSRFStatus     int                    `json:"noCsrfStatus"`
	TestConnection   string                 `json:"testConnection"`
	SharedError      string                 `json:"sharedError"`
	TaskDefaults     map[string]bool        `json:"taskDefaults"`
	TaskServers      string                 `json:"taskServers"`
	TaskLoaded       string                 `json:"taskLoaded"`
	SessionRow       string                 `json:"sessionRow"`
	SessionView      string                 `json:"sessionView"`
	SessionsAfterEnd string                 `json:"sessionsAfterEnd"`
	Client           *ClientReport          `json:"client"`
	UsageTable       string                 `json:"usageTable"`
	UsageTotal       string                 `json:"usageTotal"`
	UsageTokens      string                 `json:"usageTokens"`
	BothListsWarning bool                   `json:"bothListsWarning"`
	PluginRow        string                 `json:"pluginRow"`
	PluginRestarted  string                 `json:"pluginRestarted"`
	AgentWarnings    string                 `json:"agentWarnings"`
	ProjectRow       string                 `json:"projectRow"`
}

type axeResult struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// TestWebUI drives the web UI in real Chromium (js/ui-e2e.mjs): sign in; add a stdio
// server through the form (its "test connection" lists its tools) and see it come up;
// be refused a shared stdio server with the exact message; create a task with two of
// three servers; the TypeScript SDK client of that task lists exactly their tools and
// calls one; the Sessions page shows the session and ending it there makes the client's
// next request a 404; the Usage page shows the call. Every page is screenshotted (the
// paths are logged; MCPGW_UI_ARTIFACTS keeps them in a directory of your choice) and has
// no serious or critical axe-core violation. The Plugins page (reached from the nav)
// shows the sql plugin up with its connection, resource types and tools, and "Restart"
// restarts it; a project created on the Projects page (from the nav) is listed with its
// servers; saving an agent through its form whose executor refuses stdio lists the
// skipped server, its transport and the executor under the form.
func TestWebUI(t *testing.T) {
	needGatewayBin(t)
	if _, err := os.Stat(chromiumPath); err != nil {
		peers.Missing(t, chromiumPath+" (Debian's chromium package) not found", peers.Install)
	}
	e2e := e2eDir(t)
	for _, mod := range []string{"playwright-core", "axe-core"} {
		if _, err := os.Stat(filepath.Join(e2e, "node_modules", mod, "package.json")); err != nil {
			peers.Missing(t, "npm package "+mod+" not in test/e2e/node_modules", peers.Install)
		}
	}
	const token = "ui-e2e-admin-token-0123456789"
	seed := filepath.Join(e2e, "..", "..", "examples", "shop.sql")
	db := filepath.Join(t.TempDir(), "shop.db")
	gw := startGateway(t, `
auth:
  mode: none
  admin_token: `+token+`
servers:
  alpha:
    type: stdio
    command: {{everything_server}}
  beta:
    type: stdio
    command: {{everything_server}}
    default_enabled: false
plugins:
  shop:
    type: sql
    default_enabled: false
    connections:
      shop: {driver: sqlite, dsn: `+yamlQuote(db)+`, seed: `+yamlQuote(seed)+`}
executors:
  nostdio: {type: local_docker, mcp_policy: {allow_stdio: false}}
`)
	out := os.Getenv("MCPGW_UI_ARTIFACTS")
	if out == "" {
		out = filepath.Join(t.TempDir(), "screenshots")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	everything := filepath.Join(needPeers(t), "bin", "everything-server")
	start := time.Now()
	res := runNode(t, 4*time.Minute, "js/ui-e2e.mjs", "--url", gw.Base, "--token", token, "--out", out,
		"--stdio-command", everything, "--chromium", chromiumPath, "--timeout", "200000")
	t.Logf("ui-e2e.mjs ran %v (exit %d, timed out %v); screenshots in %s", time.Since(start).Round(time.Millisecond), res.ExitCode, res.TimedOut, out)
	var rep uiReport
	if err := json.Unmarshal([]byte(lastLine(res.Stdout)), &rep); err != nil {
		t.Fatalf("no report from ui-e2e.mjs: %v\nstdout: %s\nstderr: %s", err, res.Stdout, res.Stderr)
	}
	for _, s := range rep.Steps {
		t.Log(s)
	}
	for _, f := range rep.Failures {
		t.Errorf("ui-e2e: %s", f)
	}
	if res.ExitCode != 0 || !rep.OK {
		t.Errorf("ui-e2e.mjs exit %d, ok %v\nstderr: %s", res.ExitCode, rep.OK, res.Stderr)
	}

	// Checked here again from the report, so that the script cannot pass by skipping.
	if !strings.Contains(rep.CSP, "script-src 'self'") || strings.Contains(rep.CSP, "unsafe-inline") {
		t.Errorf("Content-Security-Policy: %q", rep.CSP)
	}
	if rep.NoCSRFStatus != 403 {
		t.Errorf("a POST without the CSRF token answered %d, want 403", rep.NoCSRFStatus)
	}
	if !strings.Contains(rep.TestConnection, "gamma__test_simple_text") {
		t.Errorf("test connection result: %q", rep.TestConnection)
	}
	if want := config.SharedStdioError("delta"); strings.TrimSpace(rep.SharedError) != want {
		t.Errorf("shared stdio error shown: %q\nwant %q", rep.SharedError, want)
	}
	if d := rep.TaskDefaults; !d["alpha"] || d["beta"] || !d["gamma"] {
		t.Errorf("new task dialog pre-checked %v; want alpha and gamma (default_enabled), not beta", d)
	}
	if rep.TaskServers != "alpha, gamma" {
		t.Errorf("task ui-task servers: %q", rep.TaskServers)
	}
	c := rep.Client
	if c == nil || !c.OK {
		t.Fatalf("the TypeScript client failed: %+v", c)
	}
	var alpha, gamma int
	for _, name := range c.Tools {
		switch {
		case strings.HasPrefix(name, "alpha__"):
			alpha++
		case strings.HasPrefix(name, "gamma__"):
			gamma++
		case gatewayOwnTool(name): // a thin list's describe tool
		default:
			t.Errorf("the task's session lists %q, from a server the task does not have", name)
		}
	}
	if alpha == 0 || gamma == 0 || alpha != gamma {
		t.Errorf("the task's session lists %d alpha and %d gamma tools; want the same non-zero number of each (%v)", alpha, gamma, c.Tools)
	}
	if len(c.Results) != 4 || !c.Results[0].OK {
		t.Fatalf("client steps: %+v", c.Results)
	}
	if last := c.Results[3]; last.OK || last.Error == nil || last.Error.Code != 404 {
		t.Errorf("after the session was ended on the Sessions page, the client's next request: ok %v, error %+v; want a 404", last.OK, last.Error)
	}
	if !strings.Contains(rep.SessionRow, "ui-task") || !strings.Contains(rep.SessionRow, "ui-e2e") {
		t.Errorf("the Sessions page row: %q", rep.SessionRow)
	}
	if !strings.Contains(rep.SessionView, c.SessionID) || !strings.Contains(rep.SessionView, "alpha__test_simple_text") || strings.Contains(rep.SessionView, "beta__") {
		t.Errorf("the session page (id %s): %q", c.SessionID, rep.SessionView)
	}
	if strings.Contains(rep.SessionsAfterEnd, "ui-task") {
		t.Errorf("the ended session is still listed: %q", rep.SessionsAfterEnd)
	}
	if !strings.Contains(rep.TaskLoaded, "alpha, gamma (1 session)") {
		t.Errorf("the Tasks page does not show what the running session loaded: %q", rep.TaskLoaded)
	}
	if rep.UsageTotal != "1" || !strings.Contains(rep.UsageTable, "ui-e2e") || !strings.Contains(rep.UsageTable, "test_simple_text") {
		t.Errorf("the Usage page: total %q, table %q", rep.UsageTotal, rep.UsageTable)
	}
	// The client's tools/list counted for its agent: a row of ui-e2e with list tokens (full
	// or thin: auto picks by the view's size).
	if !usageTokensRow(rep.UsageTokens, "ui-e2e") {
		t.Errorf("the Usage page's token table has no ui-e2e row with list tokens: %q", rep.UsageTokens)
	}
	if !rep.BothListsWarning {
		t.Error("an executor with an allowlist and a denylist shows no warning")
	}
	// The Plugins page: the row as read (innerText: cells split by tabs), then after Restart.
	if cells := strings.Split(rep.PluginRow, "\t"); len(cells) < 7 || strings.TrimSpace(cells[0]) != "shop" ||
		strings.TrimSpace(cells[1]) != "sql" || strings.TrimSpace(cells[2]) != "up" || !strings.HasPrefix(strings.TrimSpace(cells[3]), "1") ||
		strings.TrimSpace(cells[4]) == "0" || strings.TrimSpace(cells[5]) == "0" || strings.TrimSpace(cells[6]) != "0" {
		t.Errorf("the Plugins page's shop row (name, type, state, connections, resource types, tools, restarts): %q", rep.PluginRow)
	}
	if rep.PluginRestarted != "1" {
		t.Errorf("restarts after Restart on the Plugins page: %q, want 1", rep.PluginRestarted)
	}
	// The Projects page: the project created through its form is listed with its servers.
	if cells := strings.Split(rep.ProjectRow, "\t"); len(cells) < 5 || strings.TrimSpace(cells[0]) != "ui-proj" ||
		strings.TrimSpace(cells[1]) != "UI project" || strings.TrimSpace(cells[2]) != "api" || strings.TrimSpace(cells[3]) != "alpha, beta" {
		t.Errorf("the Projects page's ui-proj row (id, name, source, servers, tasks): %q", rep.ProjectRow)
	}
	if want := `server "alpha" skipped: executor "nostdio" does not allow transport stdio`; !strings.Contains(rep.AgentWarnings, want) {
		t.Errorf("the agent form's warnings: %q\nwant one saying %s", rep.AgentWarnings, want)
	}
	for _, page := range []string{"login", "servers", "plugins", "projects", "tasks", "sessions", "session", "usage", "agents", "agent-warnings", "executors"} {
		if _, ok := rep.Axe[page]; !ok {
			t.Errorf("axe-core did not check the %s page", page)
		}
		for _, v := range rep.Axe[page] {
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Errorf("axe %s: %s %s (%s) at %v", page, v.Impact, v.ID, v.Help, v.Nodes)
			}
		}
		if fi, err := os.Stat(filepath.Join(out, page+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("screenshot of %s: %v", page, err)
		}
	}
}

// usageTokensRow: the Usage page's token table (innerText: a row a line, cells split by
// tabs) has a row for agent whose full, thin and search tokens add up to a positive number.
func usageTokensRow(table, agent string) bool {
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "\t")
		if len(cells) >= 4 && strings.TrimSpace(cells[0]) == agent {
			sum := 0.0
			for _, c := range cells[1:4] { // full, thin and search tokens
				n, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(c), ",", ""), 64)
				if err != nil {
					return false
				}
				sum += n
			}
			return sum > 0
		}
	}
	return false
}
