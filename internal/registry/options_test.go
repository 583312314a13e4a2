package registry

import (
	"log/slog"
	"testing"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// A server's TLS settings reach the options its connections are dialled with.
func TestServerOptionsCarryTLS(t *testing.T) {
	cfg, _, err := config.Parse([]byte("listen: 127.0.0.1:0\nstore: memory\nservers:\n  up:\n    type: streamable_http\n    url: https://up.example/mcp\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Servers["up"].TLS = config.TLS{CAFile: "/ca.pem", CertFile: "/c.pem", KeyFile: "/k.pem", ServerName: "internal.example"}
	want := upstream.TLSFiles{CAFile: "/ca.pem", CertFile: "/c.pem", KeyFile: "/k.pem", ServerName: "internal.example"}
	reg := New(cfg, slog.New(slog.DiscardHandler))
	if got := reg.Server("up").Options().TLS; got != want {
		t.Fatalf("Options().TLS = %+v, want %+v", got, want)
	}
}
