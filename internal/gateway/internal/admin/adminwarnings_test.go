package admin_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// warningsOf are an answer's warnings as field: message strings.
func warningsOf(t *testing.T, a gatewaytest.APIAnswer) []string {
	t.Helper()
	var b struct {
		Warnings []struct{ Field, Message string }
	}
	if err := json.Unmarshal(a.Raw, &b); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	var out []string
	for _, w := range b.Warnings {
		out = append(out, w.Field+": "+w.Message)
	}
	return out
}

// TestAdminAgentExecutorWarnings: saving an agent (PUT and PATCH) whose servers its
// executor's policy would skip answers 200/201 with a warning naming the server, the
// transport and the executor, the same words GET /api/resolve says; an agent whose
// servers all pass has none.
func TestAdminAgentExecutorWarnings(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML+`  local:
    type: stdio
    command: `+gatewaytest.EverythingBin()+`
executors:
  box: {type: local_docker, mcp_policy: {allow_stdio: false}}
  open: {type: local_pc}
`)
	a := g.API(t, "PUT", "/api/agents/coder", `{"servers":["everything","local"],"executor":"box"}`, nil)
	if a.Status != 201 {
		t.Fatalf("PUT /api/agents/coder: %s", a)
	}
	want := `agents.coder.servers: server "local" skipped: executor "box" does not allow transport stdio`
	if ws := warningsOf(t, a); len(ws) != 1 || ws[0] != want {
		t.Errorf("PUT warnings: %q\nwant [%q]", ws, want)
	}
	// The same reasoning as /api/resolve: the same words there.
	res := g.API(t, "GET", "/api/resolve?agent=coder", "", nil)
	if !strings.Contains(string(res.Raw), strings.TrimPrefix(strings.ReplaceAll(want, `"`, `\"`), "agents.coder.servers: ")) {
		t.Errorf("GET /api/resolve?agent=coder says otherwise: %s", res)
	}

	// An executor that allows stdio: no warning.
	a = g.API(t, "PATCH", "/api/agents/coder", `{"executor":"open"}`, nil)
	if a.Status != 200 {
		t.Fatalf("PATCH to executor open: %s", a)
	}
	if ws := warningsOf(t, a); len(ws) != 0 {
		t.Errorf("an agent whose executor allows every server: warnings %q", ws)
	}
	// PATCH back: the warning again, on the patch's answer.
	a = g.API(t, "PATCH", "/api/agents/coder", `{"executor":"box"}`, nil)
	if ws := warningsOf(t, a); a.Status != 200 || len(ws) != 1 || ws[0] != want {
		t.Errorf("PATCH back to box: %s, warnings %q", a, ws)
	}
	// Saved all the same: a warning is no refusal.
	if a := g.API(t, "GET", "/api/agents/coder", "", nil); a.Obj["executor"] != "box" {
		t.Errorf("GET /api/agents/coder: %s", a)
	}
	// The orchestrators' document says the same when it gives the agent its servers.
	a = g.API(t, "POST", "/api/mcp-config?agent=coder", `{"agent_id":"coder","enabled":true,"servers":{"everything":{},"local":{}}}`, nil)
	if ws := warningsOf(t, a); a.Status != 200 || len(ws) != 1 || ws[0] != want {
		t.Errorf("POST /api/mcp-config: %s, warnings %q, want [%q]", a, ws, want)
	}
}

// TestAdminServerCommandWarning: a stdio server saved through the API (POST, PUT, and the
// validate dry run) whose command is neither on PATH nor an existing file is a warning
// naming servers.<name>.command; it is saved all the same. A command found on PATH, or an
// absolute path that exists, gives none.
func TestAdminServerCommandWarning(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.AdminYAML)
	auth := g.LocalAuth(t)
	const missing = "mcpgw-no-such-command-4f1e"
	wantField := "servers.ghost.command: "
	a := g.API(t, "POST", "/api/servers", `{"name":"ghost","type":"stdio","command":"`+missing+`"}`, auth)
	if a.Status != 201 {
		t.Fatalf("POST a server with a missing command: %s", a)
	}
	if ws := warningsOf(t, a); len(ws) != 1 || !strings.HasPrefix(ws[0], wantField) || !strings.Contains(ws[0], missing) {
		t.Errorf("POST warnings: %q", ws)
	}
	a = g.API(t, "PUT", "/api/servers/ghost", `{"type":"stdio","command":"/nonexistent/`+missing+`","enabled":false}`, auth)
	if a.Status != 200 {
		t.Fatalf("PUT a server with a missing command: %s", a)
	}
	if ws := warningsOf(t, a); len(ws) != 1 || !strings.HasPrefix(ws[0], wantField) || !strings.Contains(ws[0], "/nonexistent/"+missing) {
		t.Errorf("PUT warnings: %q", ws)
	}
	if a := g.API(t, "GET", "/api/servers/ghost", "", nil); a.Status != 200 || a.Obj["command"] != "/nonexistent/"+missing {
		t.Errorf("the server was not saved: %s", a)
	}
	a = g.API(t, "POST", "/api/servers/validate", `{"name":"other","type":"stdio","command":"`+missing+`"}`, auth)
	if ws := warningsOf(t, a); a.Status != 200 || len(ws) != 1 || !strings.Contains(ws[0], missing) {
		t.Errorf("validate: %s", a)
	}
	for _, cmd := range []string{"sh", gatewaytest.EverythingBin()} {
		a = g.API(t, "PUT", "/api/servers/ghost", `{"type":"stdio","command":"`+cmd+`","enabled":false}`, auth)
		if ws := warningsOf(t, a); a.Status != 200 || len(ws) != 0 {
			t.Errorf("PUT with command %s: %s", cmd, a)
		}
	}
}
