package registry

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

// A server of type inprocess comes up with the handler given to ProvideServer, under its
// exposed names; one without a handler is down, saying why.
func TestProvideServer(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "own", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "hello"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
	})
	cfg := &config.Config{Naming: testNaming, Servers: map[string]*config.ServerDef{}}
	cfg.Upstream.MaxMessageBytes = 1 << 20
	for _, name := range []string{"own", "missing"} {
		cfg.Servers[name] = &config.ServerDef{Type: config.TransportInProcess, Timeouts: config.Timeouts{Connect: 5 * time.Second, Call: 5 * time.Second}}
	}
	r := New(cfg, slog.New(slog.DiscardHandler))
	r.ProvideServer("own", &upstream.InProcess{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)})
	r.Start(10 * time.Second)
	t.Cleanup(r.Close)
	own := waitUp(t, r, "own", "hello")
	if got := own.Catalog().Tools[0].Exposed; got != "own"+testNaming.Separator+"hello" {
		t.Errorf("exposed name %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	var st Status
	for time.Now().Before(deadline) {
		if st = r.Server("missing").Status(); st.Error != "" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st.State == StateUp || !strings.Contains(st.Error, "no in-process server was given") || st.Transport != config.TransportInProcess {
		t.Fatalf("server without a handler: %+v", st)
	}
}
