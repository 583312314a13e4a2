package gateway_test

// S13 of `make bench` (bench/, docs/performance.md), the gateway part: a plugin tool call
// through the whole gateway (its HTTP handler behind httptest, session, view, permission,
// the dispatcher, the answer, metrics, audit), all in this process, against a ping on the
// same session and the provider called directly. Each iteration makes one call of each
// kind, so that load from elsewhere on the machine hits them alike:
//
//	ping          the transport and session reference
//	inprocess     the sql plugin's `get` by primary key on SQLite, plugin type sql
//	direct        the same provider's Get and json.Marshal, with a cancellable context
//	outofprocess  the same tool on a second gateway running bin/mcpgw-plugin-sql
//	              ($MCPGW_PLUGIN_SQL_BIN, else built from cmd/mcpgw-plugin-sql)
//
// and reports each p50 plus the medians of the per-iteration differences:
// inprocess-over-ping-and-direct-ns (what the gateway's plugin path adds to the provider's
// own call) and outofprocess-over-inprocess-ns.
//
//	go test -run '^$' -bench BenchmarkPluginToolCall ./gateway/

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/sqlplugin"
	"github.com/mcpgw/mcpgw/plugin"
)

// benchPluginGateway serves one plugin (plugins.bench) behind httptest and returns a session
// on it, once the plugin's tool answers.
func benchPluginGateway(b *testing.B, pluginYAML string) *benchClient {
	b.Helper()
	srv := serveBenchGateway(b, "plugins:\n  bench:\n"+pluginYAML)
	bc := newBenchClient(b, srv.URL+"/mcp", "bench_bench_v1_items_get")
	deadline := time.Now().Add(30 * time.Second)
	for !bc.benchPluginCall(b, false) {
		if time.Now().After(deadline) {
			b.Fatalf("the plugin tool did not answer within 30s: %s", bc.buf.Bytes())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return bc
}

var benchStructured = []byte(`"structuredContent"`)

// benchPluginCall makes one tools/call of the plugin's get; must: fail the benchmark unless it
// answered with the row.
func (bc *benchClient) benchPluginCall(b *testing.B, must bool) bool {
	bc.id++
	bc.body = append(bc.body[:0], `{"jsonrpc":"2.0","id":`...)
	bc.body = fmt.Appendf(bc.body, "%d", bc.id)
	bc.body = append(bc.body, `,"method":"tools/call","params":{"name":"bench_bench_v1_items_get","arguments":{"connectionId":"db","id":"1"}}}`...)
	st, _ := bc.post(b, bc.body)
	ok := st == 200 && bytes.Contains(bc.buf.Bytes(), benchStructured)
	if must && !ok {
		b.Fatalf("tools/call: HTTP %d: %s", st, bc.buf.Bytes())
	}
	return ok
}

func (bc *benchClient) benchPing(b *testing.B) {
	bc.id++
	bc.body = fmt.Appendf(bc.body[:0], `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, bc.id)
	if st, _ := bc.post(b, bc.body); st != 200 {
		b.Fatalf("ping: HTTP %d: %s", st, bc.buf.Bytes())
	}
}

// benchPluginSQLBin is bin/mcpgw-plugin-sql: $MCPGW_PLUGIN_SQL_BIN, else built into a temp dir.
func benchPluginSQLBin(b *testing.B) string {
	b.Helper()
	if p := os.Getenv("MCPGW_PLUGIN_SQL_BIN"); p != "" {
		return p
	}
	bin := filepath.Join(b.TempDir(), "mcpgw-plugin-sql")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/mcpgw-plugin-sql").CombinedOutput(); err != nil {
		b.Fatalf("go build cmd/mcpgw-plugin-sql: %v\n%s", err, out)
	}
	return bin
}

func BenchmarkPluginToolCall(b *testing.B) {
	dbPath := filepath.Join(b.TempDir(), "bench.db")
	db, err := sql.Open("sqlite", dbPath)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, stock INTEGER NOT NULL DEFAULT 0);
INSERT INTO items (name, price, stock) VALUES ('keyboard', 49.5, 12), ('mouse', 19.9, 40)`); err != nil {
		b.Fatal(err)
	}
	db.Close()
	conn := fmt.Sprintf("db: {driver: sqlite, dsn: %q}", dbPath)
	in := benchPluginGateway(b, "    type: sql\n    connections:\n      "+conn+"\n")
	out := benchPluginGateway(b, fmt.Sprintf("    command: %q\n    config:\n      connections:\n        %s\n", benchPluginSQLBin(b), conn))
	prov, err := sqlplugin.Open(context.Background(), sqlplugin.Config{Connections: map[string]sqlplugin.ConnectionConfig{"db": {Driver: "sqlite", DSN: dbPath}}})
	if err != nil {
		b.Fatal(err)
	}
	defer prov.Close()
	direct := func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r, err := prov.Get(ctx, "db", "bench::v1::items", plugin.GetInput{ID: "1"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
	kinds := []func(){func() { in.benchPing(b) }, func() { in.benchPluginCall(b, true) }, direct, func() { out.benchPluginCall(b, true) }}
	for i := 0; i < 200; i++ {
		for _, k := range kinds {
			k()
		}
	}
	var lat [4][]time.Duration
	var overIn, overOut []time.Duration
	for i := 0; b.Loop(); i++ {
		var d [4]time.Duration
		for k := range kinds {
			j := (k + i) % len(kinds) // rotate the order, so no kind always runs first
			t0 := time.Now()
			kinds[j]()
			d[j] = time.Since(t0)
			lat[j] = append(lat[j], d[j])
		}
		overIn = append(overIn, d[1]-d[0]-d[2])
		overOut = append(overOut, d[3]-d[1])
	}
	med := func(xs []time.Duration) float64 {
		if len(xs) == 0 {
			return 0
		}
		slices.Sort(xs)
		return float64(xs[len(xs)/2].Nanoseconds())
	}
	b.ReportMetric(med(lat[0]), "ping-p50-ns")
	b.ReportMetric(med(lat[1]), "inprocess-p50-ns")
	b.ReportMetric(med(lat[2]), "direct-p50-ns")
	b.ReportMetric(med(lat[3]), "outofprocess-p50-ns")
	b.ReportMetric(med(overIn), "inprocess-over-ping-and-direct-ns")
	b.ReportMetric(med(overOut), "outofprocess-over-inprocess-ns")
}
