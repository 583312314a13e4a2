package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// uiEditReport is what js/ui-edit-e2e.mjs prints.
type uiEditReport struct {
	OK          bool                   `json:"ok"`
	Failures    []string               `json:"failures"`
	Steps       []string               `json:"steps"`
	Screenshots []string               `json:"screenshots"`
	Axe         map[string][]axeResult `json:"axe"`
	// Notes are the help notes each page shows: page → data-note → text.
	Notes map[string]map[string]string `json:"notes"`
	// ProxySwitch is whether the edit form of the stdio_proxy server showed the switch
	// on (nil: the form has no such switch).
	ProxySwitch *bool `json:"proxySwitch"`
	// Saved is per server the form saved: "saved", or the error the form showed.
	Saved map[string]string `json:"saved"`
	// TaskChoices are the names the New task dialog offers.
	AgentSaved string `json:"agentSaved"`
	// NoneFrom is what ui-none's form showed its servers come from ("list" or
	// "defaults"), NoneSaved what its save answered.
	NoneFrom  string `json:"noneFrom"`
	NoneSaved string `json:"noneSaved"`
	// KeptNote is what keep's edit form says it keeps without a field.
	KeptNote    string   `json:"keptNote"`
	TaskChoices []string `json:"taskChoices"`
	TaskSaved   string   `json:"taskSaved"`
}

// TestUIEdits drives the web UI's forms in real Chromium (js/ui-edit-e2e.mjs) on what
// they do not show or used to lose:
//   - the server "keep", made through the API with timeouts, max_concurrency,
//     max_instances and a queue, is edited in the form (its description): every other
//     setting is still there after the save;
//   - the stdio_proxy server "proxy" (stdio, mode shared) opens with its stdio-proxy switch
//     on and saves after an edit; a form of it opened before a change made through the
//     API (PATCH) is refused on save (If-Match) and the change stays; a new server
//     "proxied" is added through the form with the switch on and mode shared;
//   - the New task dialog offers the sql plugin shop beside the servers, and the task made
//     there keeps it (default-enabled, so pre-checked);
//   - the agent ui-agent, whose server list asks alpha per_call, is saved from its form
//     (made read-only): alpha stays per_call;
//   - the help notes of the Servers, Executors, Tasks and Agents pages are there, and each
//     key fact they state is what docs/config.md says.
func TestUIEdits(t *testing.T) {
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
	everything := filepath.Join(needPeers(t), "bin", "everything-server")
	const token = "ui-edit-admin-token-0123456789"
	seed := filepath.Join(e2e, "..", "..", "examples", "shop.sql")
	db := filepath.Join(t.TempDir(), "shop.db")
	gw := startGateway(t, `store: memory
auth:
  mode: none
  admin_token: `+token+`
servers:
  alpha:
    type: stdio
    command: {{everything_server}}
plugins:
  shop:
    type: sql
    connections:
      shop: {driver: sqlite, dsn: `+yamlQuote(db)+`, seed: `+yamlQuote(seed)+`}
executors:
  box: {type: local_docker}
`)
	admin := bearer(token)
	admin["Content-Type"] = "application/json"
	cmd, _ := json.Marshal(everything)
	for _, body := range []string{
		`{"name": "keep", "type": "stdio", "command": ` + string(cmd) + `, "mode": "per_session",
		  "timeouts": {"connect": "7s", "call": "45s"}, "max_concurrency": 3, "max_instances": 4,
		  "queue": {"max": 5, "timeout": "9s"}, "meta": {"title": "Keep me", "description": "before"}}`,
		`{"name": "proxy", "type": "stdio", "command": ` + string(cmd) + `, "mode": "shared", "stdio_proxy": true,
		  "meta": {"description": "before"}}`,
	} {
		if a := rawRequest(t, http.MethodPost, gw.Base+"/api/servers", admin, body); a.Status != http.StatusCreated {
			t.Fatalf("POST /api/servers: %s", a)
		}
	}

	if a := rawRequest(t, http.MethodPut, gw.Base+"/api/agents/ui-agent", admin, `{"servers": [{"name": "alpha", "mode": "per_call"}]}`); a.Status != http.StatusCreated && a.Status != http.StatusOK {
		t.Fatalf("PUT /api/agents/ui-agent: %s", a)
	}
	if a := rawRequest(t, http.MethodPut, gw.Base+"/api/agents/ui-none", admin, `{"servers": []}`); a.Status != http.StatusCreated && a.Status != http.StatusOK {
		t.Fatalf("PUT /api/agents/ui-none: %s", a)
	}

	out := os.Getenv("MCPGW_UI_ARTIFACTS")
	if out == "" {
		out = filepath.Join(t.TempDir(), "screenshots")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	res := runNode(t, 3*time.Minute, "js/ui-edit-e2e.mjs", "--url", gw.Base, "--token", token, "--out", out,
		"--stdio-command", everything, "--chromium", chromiumPath, "--timeout", "150000")
	var rep uiEditReport
	if err := json.Unmarshal([]byte(lastLine(res.Stdout)), &rep); err != nil {
		t.Fatalf("no report from ui-edit-e2e.mjs (exit %d, timed out %v): %v\nstdout: %s\nstderr: %s", res.ExitCode, res.TimedOut, err, res.Stdout, res.Stderr)
	}
	for _, s := range rep.Steps {
		t.Log(s)
	}
	for _, f := range rep.Failures {
		t.Errorf("ui-edit-e2e: %s", f)
	}

	server := func(name string) map[string]any {
		a := rawRequest(t, http.MethodGet, gw.Base+"/api/servers/"+name, admin, "")
		var v map[string]any
		if a.Status != http.StatusOK || json.Unmarshal(a.Body, &v) != nil {
			t.Errorf("GET /api/servers/%s: %s", name, a)
			return map[string]any{}
		}
		return v
	}
	field := func(v map[string]any, path string) any {
		var cur any = v
		for _, k := range strings.Split(path, ".") {
			m, _ := cur.(map[string]any)
			cur = m[k]
		}
		return cur
	}

	// 1. An edit keeps what the form does not show.
	if rep.Saved["keep"] != "saved" {
		t.Errorf("saving keep in the form: %q", rep.Saved["keep"])
	}
	keep := server("keep")
	for path, want := range map[string]any{
		"meta.description": "edited in the UI", "meta.title": "Keep me", "mode": "per_session",
		"timeouts.call": "45s", "timeouts.connect": "7s", "max_concurrency": 3.0, "max_instances": 4.0,
		"queue.max": 5.0, "queue.timeout": "9s",
	} {
		if got := field(keep, path); got != want {
			t.Errorf("keep after the UI's edit: %s = %v, want %v", path, got, want)
		}
	}

	for _, k := range []string{"timeouts", "max_concurrency", "max_instances", "queue"} {
		if !strings.Contains(rep.KeptNote, k) {
			t.Errorf("keep's edit form does not say it keeps %s: %q", k, rep.KeptNote)
		}
	}

	// 2. The stdio-proxy switch: shown on for a stdio_proxy server, whose edit saves; a new
	// server saved with it.
	if rep.ProxySwitch == nil || !*rep.ProxySwitch {
		t.Errorf("the edit form of a stdio_proxy server shows the stdio-proxy switch: %v, want on", rep.ProxySwitch)
	}
	for _, name := range []string{"proxy", "proxied"} {
		if rep.Saved[name] != "saved" {
			t.Errorf("saving %s in the form: %q", name, rep.Saved[name])
			continue
		}
		s := server(name)
		if field(s, "stdio_proxy") != true || field(s, "mode") != "shared" {
			t.Errorf("%s after the form's save: stdio_proxy %v, mode %v; want true, shared", name, field(s, "stdio_proxy"), field(s, "mode"))
		}
	}
	// A form opened before a change made elsewhere: its save is refused, the change stays.
	if !strings.Contains(rep.Saved["stale"], "proxy changed since this form opened") || !strings.Contains(rep.Saved["stale"], "Nothing was saved") {
		t.Errorf("saving a form opened before proxy changed elsewhere: %q; want the If-Match refusal", rep.Saved["stale"])
	}
	if p := server("proxy"); field(p, "meta.description") != "edited in the UI" || field(p, "meta.title") != "changed elsewhere" {
		t.Errorf("proxy after the UI's edit, a change elsewhere and a stale form's save: %v", p["meta"])
	}

	// 3. The New task dialog offers plugins, and the task keeps them.
	if !slices.Contains(rep.TaskChoices, "shop") || !slices.Contains(rep.TaskChoices, "alpha") {
		t.Errorf("the New task dialog offers %v; want the servers and the plugin shop", rep.TaskChoices)
	}
	if rep.TaskSaved != "saved" {
		t.Errorf("creating the task in the dialog: %q", rep.TaskSaved)
	} else {
		a := rawRequest(t, http.MethodGet, gw.Base+"/api/tasks/ui-shop-task", admin, "")
		var task struct {
			Servers []string `json:"enabled_mcp_servers"`
		}
		if a.Status != http.StatusOK || json.Unmarshal(a.Body, &task) != nil {
			t.Errorf("GET /api/tasks/ui-shop-task: %s", a)
		} else if !slices.Contains(task.Servers, "shop") || !slices.Contains(task.Servers, "alpha") {
			t.Errorf("the task made in the dialog has %v; want alpha and the plugin shop (both default-enabled)", task.Servers)
		}
	}

	// 4. An agent's per-server mode survives a save of its form.
	if rep.AgentSaved != "saved" {
		t.Errorf("saving ui-agent in its form: %q", rep.AgentSaved)
	} else {
		a := rawRequest(t, http.MethodGet, gw.Base+"/api/agents/ui-agent", admin, "")
		if a.Status != http.StatusOK || !strings.Contains(string(a.Body), `"per_call"`) || !strings.Contains(string(a.Body), `"read_only": true`) {
			t.Errorf("ui-agent after the form's save (read-only on; alpha per_call kept): %s", a)
		}
	}

	// 4b. An agent that lists no server (servers: []) keeps its empty list through a save
	// of its form: the form used to drop an empty list, which gave the agent every
	// default server.
	if rep.NoneFrom != "list" || rep.NoneSaved != "saved" {
		t.Errorf("ui-none's form: servers from %q (want list), save %q", rep.NoneFrom, rep.NoneSaved)
	} else {
		a := rawRequest(t, http.MethodGet, gw.Base+"/api/agents/ui-none", admin, "")
		var got struct {
			Servers  *[]any `json:"servers"`
			ReadOnly bool   `json:"read_only"`
		}
		if a.Status != http.StatusOK || json.Unmarshal(a.Body, &got) != nil || got.Servers == nil || len(*got.Servers) != 0 || !got.ReadOnly {
			t.Errorf("ui-none after the form's save (read-only on; servers [] kept): %s", a)
		}
	}

	// 5. The help notes, each key fact as docs/config.md states it.
	checkHelpNotes(t, rep.Notes)
	for _, page := range []string{"servers-edit", "tasks-new"} {
		if _, ok := rep.Axe[page]; !ok {
			t.Errorf("axe-core did not check %s", page)
		}
	}
	if res.ExitCode != 0 || !rep.OK {
		t.Errorf("ui-edit-e2e.mjs exit %d, ok %v\nstderr: %s", res.ExitCode, rep.OK, res.Stderr)
	}
}

// checkHelpNotes: every note the pages must show is there, and each fact it states is
// found, in the same words, in docs/config.md (backticks and spacing aside).
func checkHelpNotes(t *testing.T, notes map[string]map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2eDir(t), "..", "..", "docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	flat := func(s string) string {
		return strings.TrimSpace(regexp.MustCompile(`\s+`).ReplaceAllString(strings.ReplaceAll(s, "`", ""), " "))
	}
	doc := flat(string(b))
	// page, note, and the facts (in the note's words) that docs/config.md must state too.
	for _, c := range []struct {
		page, note string
		facts      []string
	}{
		{"servers", "modes", []string{
			"stdio → per_session, an OAuth server with per-user grants → per_agent, others → shared",
			"true lets a stdio server run shared: one process multiplexed for every session",
		}},
		{"servers", "executor-policy", []string{
			"A shared server has one connection for every session, opened before any executor asked for it, so its URL is not rewritten",
		}},
		{"executors", "url_rewrite", []string{
			"A shared server has one connection for every session, opened before any executor asked for it, so its URL is not rewritten",
		}},
		{"executors", "env_injection", []string{
			"The policy's value wins over the server's own env, unless the server sets allow_env_override: true; env_injection_overrides_server: true on the executor makes its value win even then",
		}},
		{"tasks", "task-servers", []string{
			"enabled_mcp_servers (servers and plugins)",
		}},
		{"agents", "agent-servers", []string{
			"in the sessions of agents that list no servers",
			"no server and no plugin; the agent's sessions open and list no tools",
		}},
	} {
		text, ok := notes[c.page][c.note]
		if !ok {
			t.Errorf("the %s page shows no help note %q (it shows %v)", c.page, c.note, notes[c.page])
			continue
		}
		for _, f := range c.facts {
			if !strings.Contains(flat(text), f) {
				t.Errorf("the %s page's note %q does not say %q:\n%s", c.page, c.note, f, text)
			}
			if !strings.Contains(doc, f) {
				t.Errorf("docs/config.md does not say %q, which the %s page's note %q says", f, c.page, c.note)
			}
		}
	}
}
