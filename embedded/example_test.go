package embedded_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/embedded"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// A host starts a gateway from a config value, with its own MCP server (a go-sdk server)
// reached in memory, serves the gateway's handler, and a client calls the server's tool
// through it.
func Example() {
	// The host's listener: the gateway answers requests for the config's listen address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "embed-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cfg := &config.Config{Listen: ln.Addr().String(), StateDir: dir, Store: "memory"}

	gw, err := embedded.New(cfg, embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	// The host's own MCP server, with one tool; the gateway lists it as clock__now.
	clock := mcp.NewServer(&mcp.Implementation{Name: "clock", Version: "1"}, nil)
	mcp.AddTool(clock, &mcp.Tool{Name: "now", Description: "The time."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "12:00"}}}, nil, nil
		})
	if err := gw.AddMCPServer("clock", clock); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Start(ctx); err != nil {
		panic(err)
	}
	srv := httptest.NewUnstartedServer(gw.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	// Any MCP client: here go-sdk's, over streamable HTTP.
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		panic(err)
	}
	for _, t := range tools.Tools {
		fmt.Println("tool:", t.Name)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "clock__now"})
	if err != nil {
		panic(err)
	}
	fmt.Println("result:", res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// tool: clock__now
	// result: 12:00
}

// A provider written in Go (a plugin.Plugin: here package plugintest's fixture) is served
// as tools, one for each operation of each resource type. Handler answers without a
// listener of its own: here a request recorder asks /readyz, addressed to the config's
// listen address.
func ExampleGateway_RegisterPlugin() {
	dir, err := os.MkdirTemp("", "embed-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	yaml := "listen: 127.0.0.1:9000\nstore: memory\nstate_dir: " + dir + "\nplugins:\n  k8s: {type: go, refresh: -1s}\n"
	gw, err := embedded.NewYAML([]byte(yaml), embedded.Options{ConnectWait: 10 * time.Second})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	if err := gw.RegisterPlugin("k8s", plugintest.New()); err != nil {
		panic(err)
	}
	if err := gw.Start(context.Background()); err != nil {
		panic(err)
	}
	req := httptest.NewRequest("GET", "http://127.0.0.1:9000/readyz", nil)
	rec := httptest.NewRecorder()
	gw.Handler().ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	// Output: 200
}

// Gateways given one store share the sessions it holds; the host closes it after them.
func ExampleOpenStore() {
	st, err := embedded.OpenStore("memory", "")
	if err != nil {
		panic(err)
	}
	defer st.Close()
	for _, name := range []string{"a", "b"} {
		gw, err := embedded.NewYAML([]byte("listen: 127.0.0.1:0\nstore: memory\n"), embedded.Options{Store: st})
		if err != nil {
			panic(err)
		}
		fmt.Println("gateway", name, "shares the store")
		_ = gw.Close()
	}
	// Output:
	// gateway a shares the store
	// gateway b shares the store
}

// A host's main that is also the guardian of its stdio upstreams: RunGuardian first,
// then its own work, with Options.GuardianPath set to its own executable.
func ExampleRunGuardian() {
	embedded.RunGuardian(os.Args) // does not return when the gateway started this process as a guardian
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	gw, err := embedded.NewYAML([]byte("servers:\n  files: {type: stdio, command: mcp-files}\n"), embedded.Options{GuardianPath: exe})
	if err != nil {
		panic(err)
	}
	defer gw.Close()
	// gw.Start, then serve its Handler ...
}
