package gateway_test

// S9 of `make bench` (bench/, docs/performance.md): the in-process forwarding path. A real
// gateway (config, registry, memory store, HTTP handler behind httptest) forwards tools/call
// to a fast hand-written echo upstream, also behind httptest. Everything runs in this
// process, so allocs/op counts the load client and the upstream too; the "direct"
// sub-benchmark measures exactly those (client → upstream), and the "gateway" one reports
// gw-allocs/op and gw-B/op: its own totals less the direct path's, i.e. what the gateway
// adds per forwarded call (its HTTP server side, dispatch, and its upstream HTTP client).
// It stays here, not in dispatch: the path it measures is the whole gateway's (transport,
// session, dispatch, upstream client, audit and metrics), which only this package composes.
//
//	go test -run '^$' -bench BenchmarkForwardToolCall -benchmem ./internal/gateway/
//	go test -run '^$' -bench 'BenchmarkForwardToolCall/gateway' -benchmem \
//	    -memprofile mem.out -cpuprofile cpu.out ./internal/gateway/ && go tool pprof -top -sample_index=alloc_space gateway.test mem.out

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/registry/pluginkind"
	"github.com/mcpgw/mcpgw/internal/store"
)

// benchEcho is a minimal MCP server: an "echo" tool that returns its arguments as text.
type benchEcho struct{}

func (benchEcho) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if len(m.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	out := make([]byte, 0, 256)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, m.ID...)
	out = append(out, `,"result":`...)
	switch m.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "bench-upstream-session")
		out = append(out, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench-echo","version":"1"}}`...)
	case "tools/list":
		out = append(out, `{"tools":[{"name":"echo","description":"Returns its arguments.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}`...)
	case "tools/call":
		var p struct {
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		q, _ := json.Marshal(string(p.Arguments))
		out = append(out, `{"content":[{"type":"text","text":`...)
		out = append(out, q...)
		out = append(out, `}]}`...)
	default:
		out = append(out, `{}`...)
	}
	out = append(out, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

// benchClient is one initialized session on an MCP endpoint.
type benchClient struct {
	url  string
	c    *http.Client
	hdr  http.Header
	buf  bytes.Buffer
	body []byte
	id   int64
	tool string
}

func newBenchClient(tb testing.TB, url, tool string) *benchClient {
	tb.Helper()
	bc := &benchClient{url: url, tool: tool, c: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 30 * time.Second}}
	bc.hdr = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	st, h := bc.post(tb, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`))
	if st != http.StatusOK {
		tb.Fatalf("initialize: HTTP %d: %s", st, bc.buf.Bytes())
	}
	bc.hdr = bc.hdr.Clone()
	bc.hdr.Set("Mcp-Session-Id", h.Get("Mcp-Session-Id"))
	bc.hdr.Set("MCP-Protocol-Version", "2025-11-25")
	if st, _ := bc.post(tb, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); st != http.StatusAccepted {
		tb.Fatalf("initialized: HTTP %d", st)
	}
	tb.Cleanup(bc.c.CloseIdleConnections)
	return bc
}

func (bc *benchClient) post(tb testing.TB, body []byte) (int, http.Header) {
	req, err := http.NewRequest(http.MethodPost, bc.url, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header = bc.hdr
	resp, err := bc.c.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	bc.buf.Reset()
	_, _ = bc.buf.ReadFrom(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

var resultMark = []byte(`"result":{"content"`)

// call sends one tools/call and checks that its result came back.
func (bc *benchClient) call(tb testing.TB) {
	bc.id++
	bc.body = append(bc.body[:0], `{"jsonrpc":"2.0","id":`...)
	bc.body = strconv.AppendInt(bc.body, bc.id, 10)
	bc.body = append(bc.body, `,"method":"tools/call","params":{"name":"`...)
	bc.body = append(bc.body, bc.tool...)
	bc.body = append(bc.body, `","arguments":{"text":"hello from the benchmark"}}}`...)
	if st, _ := bc.post(tb, bc.body); st != http.StatusOK || !bytes.Contains(bc.buf.Bytes(), resultMark) {
		tb.Fatalf("tools/call: HTTP %d: %s", st, bc.buf.Bytes())
	}
}

// allocsPerCall measures n calls' mallocs and bytes (outside any timer).
func allocsPerCall(tb testing.TB, bc *benchClient, n int) (allocs, bytes float64) {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	for i := 0; i < n; i++ {
		bc.call(tb)
	}
	runtime.ReadMemStats(&b)
	return float64(b.Mallocs-a.Mallocs) / float64(n), float64(b.TotalAlloc-a.TotalAlloc) / float64(n)
}

func BenchmarkForwardToolCall(b *testing.B) {
	up := httptest.NewServer(benchEcho{})
	defer up.Close()

	srv := startBenchGateway(b, "", up.URL)

	b.Run("direct", func(b *testing.B) {
		bc := newBenchClient(b, up.URL, "echo")
		for i := 0; i < 200; i++ {
			bc.call(b)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			bc.call(b)
		}
	})
	b.Run("gateway", func(b *testing.B) {
		direct := newBenchClient(b, up.URL, "echo")
		bc := newBenchClient(b, srv.URL+"/mcp", "echo__echo")
		for i := 0; i < 200; i++ {
			bc.call(b)
			direct.call(b)
		}
		dAllocs, dBytes := allocsPerCall(b, direct, 2000)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.ReportAllocs()
		b.ResetTimer()
		n := 0
		for b.Loop() {
			bc.call(b)
			n++
		}
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		allocs := float64(m1.Mallocs-m0.Mallocs) / float64(n)
		bytes := float64(m1.TotalAlloc-m0.TotalAlloc) / float64(n)
		b.ReportMetric(allocs-dAllocs, "gw-allocs/op")
		b.ReportMetric(bytes-dBytes, "gw-B/op")
	})
}

// startBenchGateway serves a gateway in front of the streamable HTTP upstream upURL (server
// "echo"), with extra config lines before servers:, and stops it when b ends.
func startBenchGateway(b *testing.B, extra, upURL string) *httptest.Server {
	b.Helper()
	return serveBenchGateway(b, fmt.Sprintf("%sservers:\n  echo:\n    type: streamable_http\n    url: %s\n", extra, upURL))
}

// serveBenchGateway serves a gateway built from body (the config after listen, state_dir
// and store) behind httptest, and stops it when b ends.
func serveBenchGateway(b *testing.B, body string) *httptest.Server {
	b.Helper()
	srv := httptest.NewUnstartedServer(nil)
	yaml := fmt.Sprintf("listen: %s\nstate_dir: %s\nstore: memory\n%s", srv.Listener.Addr().String(), b.TempDir(), body)
	cfg, _, err := config.Parse([]byte(yaml))
	if err != nil {
		b.Fatalf("config: %v", err)
	}
	log := slog.New(slog.DiscardHandler)
	reg := registry.New(cfg, log)
	reg.PluginKinds = pluginkind.All()
	gw, err := gateway.New(cfg, reg, store.NewMemory(), log)
	if err != nil {
		b.Fatalf("gateway.New: %v", err)
	}
	reg.Start(30 * time.Second)
	gw.Start()
	srv.Config.Handler = gw.Handler()
	srv.Start()
	b.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		gw.Close()
		reg.Close()
	})
	return srv
}
