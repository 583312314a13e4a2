package e2e

// A plugin result larger than upstream.max_message_bytes, from the sql plugin in the
// gateway's process and out of it (bin/mcpgw-plugin-sql): the call is refused with an
// isError result naming the limit and the plugin, and the gateway's memory stays near its
// baseline while it refuses. (Unbounded, a 200 MB resource made the gateway hold 3 GB.)
//
// The large row is 64 MiB of NUL characters (the worst case for JSON: 6 bytes each once
// escaped) against a 1 MiB limit: far over the limit, and written in a second or two.
// MCPGW_PLUGIN_LIMITS_FULL=1 makes it 200 MiB, the size of the original report.

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"
)

const pluginLimitBytes = 1 << 20

// pluginLimitsDB writes a SQLite database with a table docs: row 1 small, row 2 size
// bytes of text.
func pluginLimitsDB(t *testing.T, size int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "docs.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range []string{
		`CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT)`,
		`INSERT INTO docs VALUES (1, 'small')`,
		fmt.Sprintf(`INSERT INTO docs VALUES (2, CAST(zeroblob(%d) AS TEXT))`, size),
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	return path
}

// procMemory reads VmRSS and VmHWM (peak) of pid, in bytes.
func procMemory(t *testing.T, pid int) (rss, peak int64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kb int64
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fmt.Sscan(strings.TrimSpace(rest), &kb)
			rss = kb << 10
		} else if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Sscan(strings.TrimSpace(rest), &kb)
			peak = kb << 10
		}
	}
	return rss, peak
}

func TestPluginResultLimit(t *testing.T) {
	size := 64 << 20
	if os.Getenv("MCPGW_PLUGIN_LIMITS_FULL") != "" {
		size = 200 << 20
	}
	db := pluginLimitsDB(t, size)
	conn := `connections: {docs: {driver: sqlite, dsn: ` + yamlQuote(db) + `}}`
	for _, mode := range []struct{ name, plugin string }{
		{"in_process", "type: sql\n    " + conn},
		{"out_of_process", "command: " + yamlQuote(oopPluginSQLBin(t)) + "\n    config: {" + conn + "}"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			g := startGatewayChecked(t, fmt.Sprintf(`store: memory
log: {level: debug, format: text}
upstream: {max_message_bytes: %d}
plugins:
  big:
    %s
agents:
  reader: {servers: [big]}
`, pluginLimitBytes, mode.plugin))
			c := pluginClient(t, g, map[string]string{"X-Agent-ID": "reader"}, nil)
			get := func(id string) *mcp.CallToolResult {
				res, _ := callJSON(t, c, "big_docs_v1_docs_get", map[string]any{"connectionId": "docs", "id": id})
				return res
			}
			if res := get("1"); res.IsError || !strings.Contains(resultText(res), "small") {
				t.Fatalf("the small row: %s", resultText(res))
			}
			baseRSS, _ := procMemory(t, g.Pid)

			start := time.Now()
			res := get("2")
			took := time.Since(start)
			text := resultText(res)
			if !res.IsError || !strings.Contains(text, "upstream.max_message_bytes") || !strings.Contains(text, fmt.Sprint(pluginLimitBytes)) ||
				!strings.Contains(text, "big") {
				t.Errorf("the %d-byte row: want an isError result naming upstream.max_message_bytes, %d and the plugin; got %.300q", size, pluginLimitBytes, text)
			}
			_, peak := procMemory(t, g.Pid)
			t.Logf("refused in %v; gateway RSS %d MiB before, peak %d MiB", took, baseRSS>>20, peak>>20)
			if grew := peak - baseRSS; grew > 100<<20 {
				t.Errorf("refusing the %d MiB row took the gateway from %d MiB to a peak of %d MiB (more than 100 MiB above)", size>>20, baseRSS>>20, peak>>20)
			}

			// A list whose page holds the row is refused too, and the gateway still serves.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			lres, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "big_docs_v1_docs_list", Arguments: map[string]any{"connectionId": "docs"}})
			if err != nil || !lres.IsError || !strings.Contains(resultText(lres), "upstream.max_message_bytes") {
				t.Errorf("a list holding the row: %v %.300q", err, resultText(lres))
			}
			if res := get("1"); res.IsError {
				t.Errorf("the small row after the refusals: %s", resultText(res))
			}
		})
	}
}
