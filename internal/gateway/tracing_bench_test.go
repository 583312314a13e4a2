package gateway_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// BenchmarkToolCallTracing: one tools/call through the gateway with tracing off, on at
// sample_ratio 0 (spans started, not recorded) and on at 1 (two spans per call, exported
// to a sink that discards them), with the allocations each adds per call (docs/tracing.md).
func BenchmarkToolCallTracing(b *testing.B) {
	up := httptest.NewServer(benchEcho{})
	defer up.Close()
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	for _, c := range []struct{ name, tracing string }{
		{"off", ""},
		{"ratio0", "tracing: {otlp_endpoint: " + sink.URL + ", sample_ratio: 0}\n"},
		{"ratio1", "tracing: {otlp_endpoint: " + sink.URL + ", sample_ratio: 1}\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := startBenchGateway(b, c.tracing, up.URL)
			bc := newBenchClient(b, srv.URL+"/mcp", "echo__echo")
			for i := 0; i < 200; i++ {
				bc.call(b)
			}
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
			b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(n), "allocs/call")
		})
	}
}
