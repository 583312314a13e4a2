package gatewaytest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// ExecSQL runs one statement on the SQLite file at dbPath, as another program would,
// waiting for the lock the plugin's refresh may hold (busy_timeout).
func ExecSQL(t *testing.T, dbPath, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

const shopSeed = `
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER, team TEXT);
INSERT INTO users (name, age, team) VALUES
  ('ada', 36, 'core'), ('grace', 85, 'core'), ('linus', 28, 'kernel'),
  ('margaret', 33, 'core'), ('ken', 40, 'core');
`

// PluginConfig is a gateway with the everything upstream and the sql plugin "shop" over a
// SQLite file seeded in a temp dir (and a second, in-memory connection "scratch"). extra is
// appended (agents, tasks). It returns the config and the database file's path.
func PluginConfig(t *testing.T, extra string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	seed := filepath.Join(dir, "shop.sql")
	if err := os.WriteFile(seed, []byte(shopSeed), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "data", "shop.db")
	return fmt.Sprintf(`
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
log: {level: debug}
# The full list: these tests read the plugin's tools by name, whatever auto would pick.
http: {handshake: full}
servers:
  everything:
    type: streamable_http
    url: {{everything}}
plugins:
  shop:
    type: sql
    refresh: 100ms
    connections:
      main: {driver: sqlite, dsn: %q, seed: %q}
      scratch: {driver: sqlite, dsn: ":memory:", database: scratch, seed: %q}
%s`, db, seed, seed, extra), db
}

// InitAs opens a session for an agent (X-Agent-ID) with the given client capabilities.
func (g *GW) InitAs(t *testing.T, agent, caps string) string {
	t.Helper()
	r := g.Do(t, Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"plugins_test","version":"1"}}}`,
		Header: map[string]string{"X-Agent-ID": agent}})
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize as %s: HTTP %d %s", agent, r.Status, r.Body)
	}
	g.Do(t, Req{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Header: SessionHeaders(sid, "2025-11-25")})
	return sid
}

// ToolResult is a tools/call result.
type ToolResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
	IsError    bool            `json:"isError"`
}

// Text is the result's text content, concatenated.
func (r ToolResult) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// CallTool calls a tool and returns its result (a JSON-RPC error fails the test).
func (g *GW) CallTool(t *testing.T, sid, name, args string) ToolResult {
	t.Helper()
	r := g.Call(t, sid, 7, "tools/call", `{"name":`+string(wire.Quote(name))+`,"arguments":`+args+`}`)
	m := r.Message(t)
	if m.Error != nil {
		t.Fatalf("tools/call %s: JSON-RPC error %s", name, m.Error)
	}
	var res ToolResult
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatalf("tools/call %s: %v in %s", name, err, m.Result)
	}
	return res
}

// Page is one page of a plugin's list tool.
type Page struct {
	Items      []map[string]any `json:"items"`
	NextCursor string           `json:"nextCursor"`
}
