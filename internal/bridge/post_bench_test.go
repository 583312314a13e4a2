package bridge

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// BenchmarkPost is one tools/call through Bridge.post against a loopback HTTP server that
// answers it as JSON or as an SSE event: the bridge's per-message cost over HTTP, with the
// server's and the loopback's.
func BenchmarkPost(b *testing.B) {
	const answer = `{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"hi"}]}}`
	line := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":"hi"}}}`)
	for _, kind := range []string{"json", "sse"} {
		b.Run(kind, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if kind == "sse" {
					w.Header().Set("Content-Type", "text/event-stream")
					io.WriteString(w, "event: message\ndata: "+answer+"\n\n")
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, answer)
			}))
			defer srv.Close()
			out := &countWriter{}
			br := New(Options{URL: srv.URL}, out)
			defer br.stop()
			m, err := wire.Parse(line)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := br.post(m, line, nil); err != nil {
					b.Fatal(err)
				}
			}
			if out.n < b.N {
				b.Fatalf("%d answers written for %d posts", out.n, b.N)
			}
		})
	}
}

// countWriter counts the writes (one per message) and keeps nothing.
type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n++; return len(p), nil }
