package wire_test

import (
	"testing"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// envelope104 is a typical client tools/call, 104 bytes (encoding/json with RawMessage takes about 1.2 µs to
// read such an envelope with encoding/json and json.RawMessage).
var envelope104 = []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"echo__echo","arguments":{"text":"hi"}}}`)

func BenchmarkParseEnvelope(b *testing.B) {
	if len(envelope104) != 104 {
		b.Fatalf("message is %d bytes, want 104", len(envelope104))
	}
	b.SetBytes(int64(len(envelope104)))
	b.ReportAllocs()
	var m wire.Msg
	for b.Loop() {
		m = wire.Msg{}
		if err := wire.ParseInto(envelope104, &m); err != nil {
			b.Fatal(err)
		}
	}
	if m.Method != "tools/call" || string(m.ID) != "17" {
		b.Fatalf("parsed %+v", m)
	}
}

// BenchmarkResult builds the response the gateway sends for a forwarded result.
func BenchmarkResult(b *testing.B) {
	id := []byte("17")
	res := []byte(`{"content":[{"type":"text","text":"{\"text\":\"hi\"}"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		_ = wire.Result(id, res)
	}
}
