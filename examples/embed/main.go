// Command embed is a host program that runs mcpgw inside itself: its own HTTP server
// serves its own page at / and the gateway at /mcp, a resource provider written in Go
// (a list of notes in memory) is served as MCP tools through the gateway, with no
// database and no other process, and so is the host's own MCP server (a go-sdk server
// with one tool), which the gateway reaches in memory, with no socket of its own.
//
//	go run ./examples/embed            # then point an MCP client at http://127.0.0.1:8090/mcp
//	go run ./examples/embed -socket    # also serve the Unix socket for mcpgw-bridge
//
// docs/embedding.md explains each step.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/embedded"
	"github.com/mcpgw/mcpgw/plugin"
)

// The gateway's config, as an mcpgw.yaml would hold it. The notes plugin is type go: its
// provider is given in code below. ${EMBED_STATE_DIR} is expanded from the environment.
const configYAML = `
listen: 127.0.0.1:8090
state_dir: ${EMBED_STATE_DIR}
store: memory
log: {format: text}
plugins:
  notes: {type: go, refresh: -1s}
servers:
  clock: {type: inprocess}   # given in code below (AddMCPServer)
`

func main() {
	// The host's binary is also the guardian its stdio upstreams run under
	// (Options.GuardianPath below): when the gateway starts it as one, this runs the
	// upstream and exits.
	embedded.RunGuardian(os.Args)
	socket := flag.Bool("socket", false, "also serve the Unix socket for mcpgw-bridge (in the state dir)")
	flag.Parse()
	if err := run(*socket); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

func run(socket bool) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	dir, err := os.MkdirTemp("", "mcpgw-embed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	os.Setenv("EMBED_STATE_DIR", dir)

	// 1. Build the gateway from the config.
	opts := embedded.Options{Logger: log}
	if exe, err := os.Executable(); err == nil {
		opts.GuardianPath = exe
	}
	gw, err := embedded.NewYAML([]byte(configYAML), opts)
	if err != nil {
		return err
	}
	defer gw.Close()
	// 2. Register the in-process plugin under the name the config gives it.
	if err := gw.RegisterPlugin("notes", newNotes()); err != nil {
		return err
	}
	// 2b. Add the host's own MCP server: its tools are listed as clock__now.
	if err := gw.AddMCPServer("clock", newClock()); err != nil {
		return err
	}
	// 3. Start it: the plugin's resource types become tools.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Start(ctx); err != nil {
		return err
	}
	if socket {
		path, err := gw.StartSocket("")
		if err != nil {
			return err
		}
		log.Info("bridge socket", "path", path, "bridge", "mcpgw-bridge --socket "+path)
	}
	// 4. Mount its handler in the host's own server, next to the host's routes.
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "a host program; its MCP gateway is at /mcp")
	})
	mux.Handle("/", gw.Handler())
	// ConnContext lets the gateway name a loopback client's user once per connection
	// (auth mode none serves only this process's user) instead of once per request.
	srv := &http.Server{Addr: gw.Config().Listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ConnContext: embedded.ConnContext}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Info("listening", "mcp", "http://"+srv.Addr+"/mcp")

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-sigs:
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	// 5. Stop the host's server, then the gateway.
	shut, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	_ = srv.Shutdown(shut)
	return gw.Close()
}

// notes is a small provider: one connection ("local"), one resource type of notes with
// get, list, create and delete. It knows nothing of MCP; the gateway makes the tools
// (notes_app_v1_Note_get, notes_app_v1_Note_create, ...).
type notes struct {
	mu    sync.Mutex
	next  int
	items map[string]plugin.Resource
}

const noteKey = "app::v1::Note"

func newNotes() *notes {
	return &notes{next: 2, items: map[string]plugin.Resource{"1": {"id": "1", "text": "mcpgw runs inside this program"}}}
}

var noteSchema = &jsonschema.Schema{Type: "object", Required: []string{"text"}, Properties: map[string]*jsonschema.Schema{
	"id":   {Type: "string", ReadOnly: true},
	"text": {Type: "string", Description: "the note"},
}}

func (n *notes) ResourceTypes(context.Context) ([]plugin.ResourceType, error) {
	return []plugin.ResourceType{{Key: noteKey, Description: "A short note kept in memory."}}, nil
}

func (n *notes) Capabilities(_ context.Context, key string) (plugin.Capabilities, error) {
	if key != noteKey {
		return plugin.Capabilities{}, fmt.Errorf("type %s: %w", key, plugin.ErrNotFound)
	}
	return plugin.Capabilities{CanGet: true, CanList: true, CanCreate: true, CanDelete: true, HasSchema: true}, nil
}

func (n *notes) FilterFields(context.Context, string, string) ([]plugin.FilterField, error) {
	return nil, plugin.ErrUnsupported
}

func (n *notes) ResourceSchema(_ context.Context, _, key string) (*jsonschema.Schema, error) {
	if key != noteKey {
		return nil, fmt.Errorf("type %s: %w", key, plugin.ErrNotFound)
	}
	return noteSchema, nil
}

func (n *notes) Get(_ context.Context, _, _ string, in plugin.GetInput) (plugin.Resource, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r, ok := n.items[in.ID]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("no note %q: %w", in.ID, plugin.ErrNotFound)
}

func (n *notes) List(context.Context, string, string, plugin.ListInput) (plugin.Page, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	ids := make([]string, 0, len(n.items))
	for id := range n.items {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { a, _ := strconv.Atoi(ids[i]); b, _ := strconv.Atoi(ids[j]); return a < b })
	var p plugin.Page
	for _, id := range ids {
		p.Items = append(p.Items, n.items[id])
	}
	return p, nil
}

func (n *notes) Find(context.Context, string, string, plugin.FindInput) (plugin.Page, error) {
	return plugin.Page{}, plugin.ErrUnsupported
}

func (n *notes) Create(_ context.Context, _, _ string, in plugin.CreateInput) (plugin.Resource, error) {
	text, _ := in.Data["text"].(string)
	n.mu.Lock()
	defer n.mu.Unlock()
	id := strconv.Itoa(n.next)
	n.next++
	n.items[id] = plugin.Resource{"id": id, "text": text}
	return n.items[id], nil
}

func (n *notes) Update(context.Context, string, string, plugin.UpdateInput) (plugin.Resource, error) {
	return nil, plugin.ErrUnsupported
}

func (n *notes) Delete(_ context.Context, _, _ string, in plugin.DeleteInput) (plugin.Resource, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r, ok := n.items[in.ID]
	if !ok {
		return nil, fmt.Errorf("no note %q: %w", in.ID, plugin.ErrNotFound)
	}
	delete(n.items, in.ID)
	return r, nil
}

func (n *notes) Connections(context.Context) ([]plugin.Connection, error) {
	return []plugin.Connection{{ID: "local", Status: plugin.StatusConnected, Description: "this process's memory"}}, nil
}

func (n *notes) Namespaces(context.Context, string) ([]string, error) { return nil, nil }

// newClock is the host's own MCP server, written with the go-sdk: one tool that tells
// the time.
func newClock() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "clock", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "now", Description: "The host's current time (RFC 3339)."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: time.Now().Format(time.RFC3339)}}}, nil, nil
		})
	return s
}
