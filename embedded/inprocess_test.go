package embedded_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	cfgpkg "github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/embedded"
)

// ownServer is a host's own go-sdk server: a tool, a tool that reports progress, a tool
// that fails, a prompt and a resource.
func ownServer(who string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: who, Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "says hello"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Name string `json:"name"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: who + " greets " + in.Name}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "count"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: fmt.Sprint("step ", i)}); err != nil {
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "counted"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("the host's tool failed")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "your name?",
			RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(res.Action, " ", res.Content["name"])}}}, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "welcome"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: who + " welcomes you"}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "mem://" + who + "/note", Name: "note", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: who + "'s note"}}}, nil
	})
	return s
}

// listeningSockets returns the inodes of the TCP sockets this process listens on (Linux:
// its socket descriptors, matched with the LISTEN rows of /proc/self/net/tcp and tcp6).
func listeningSockets(t *testing.T) []string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if link, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(link, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && fields[3] == "0A" && mine[fields[9]] {
				out = append(out, fields[9])
			}
		}
		f.Close()
	}
	slices.Sort(out)
	return out
}

// TestEmbedInProcessServers: a host adds its own MCP server in both forms (a go-sdk
// server, and an http.Handler), and a real MCP client reaches them through the gateway's
// handler, as any upstream, with no socket opened for them.
func TestEmbedInProcessServers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts the process's listening sockets in /proc, which is Linux's")
	}
	none := listeningSockets(t)
	// The host's own server, for the client; its listener is the one socket.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	before := listeningSockets(t)
	if len(before) != len(none)+1 {
		ln.Close()
		t.Fatalf("listening sockets %v, then %v with a listener: the count does not see it", none, before)
	}
	g, err := embedded.NewYAML(fmt.Appendf(nil, `
listen: %s
state_dir: %s
store: memory
auth: {audit: {path: "off"}}
servers:
  viahandler: {type: inprocess, timeouts: {call: 10s}}
  limited_view: {type: inprocess}
  viasdk: {type: inprocess}
agents:
  writer: {}
  limited:
    servers: [viasdk]
    tools: {deny: ["viasdk__fail"]}
`, ln.Addr().String(), t.TempDir()), embedded.Options{ConnectWait: 10 * time.Second})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	sdk := ownServer("sdk")
	if err := g.AddMCPServer("viasdk", sdk); err != nil {
		t.Fatal(err)
	}
	if err := g.AddServer("viahandler", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ownServer("handler") }, nil)); err != nil {
		t.Fatal(err)
	}
	if err := g.AddServer("limited_view", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcp.NewServer(&mcp.Implementation{Name: "x"}, nil) }, nil)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if after := listeningSockets(t); !slices.Equal(after, before) {
		t.Fatalf("the gateway with in-process servers listens on sockets %v; before Start %v", after, before)
	}

	srv := httptest.NewUnstartedServer(g.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)

	var mu sync.Mutex
	var progress []string
	var listChanged int
	hc := &http.Client{Transport: headerTransport{http.DefaultTransport.(*http.Transport).Clone(), "writer"}}
	c := mcp.NewClient(&mcp.Implementation{Name: "embed-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ann"}}, nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			mu.Lock()
			listChanged++
			mu.Unlock()
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	names := toolNames(t, cs)
	for _, want := range []string{"viasdk__greet", "viasdk__count", "viasdk__fail", "viahandler__greet", "viahandler__count"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list %v, want %s", names, want)
		}
	}
	for server, who := range map[string]string{"viasdk": "sdk", "viahandler": "handler"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__greet", Arguments: map[string]any{"name": "ann"}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != who+" greets ann" {
			t.Fatalf("%s greet: %+v, %v", server, res, err)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "viasdk__fail", Arguments: map[string]any{}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "the host's tool failed") {
		t.Fatalf("fail: %+v, %v", res, err)
	}
	// Progress relays from both forms, on the call's own event stream.
	for _, server := range []string{"viahandler", "viasdk"} {
		mu.Lock()
		progress = nil
		mu.Unlock()
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__count", Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": "tok-" + server}})
		if err != nil || res.IsError {
			t.Fatalf("%s count: %+v, %v", server, res, err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			got := slices.Clone(progress)
			mu.Unlock()
			if slices.Equal(got, []string{"step 1", "step 2", "step 3"}) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s progress %q, want steps 1 to 3", server, got)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	// A request of the server's to the client (elicitation) reaches the client whose call
	// asked it, and its answer comes back.
	for _, server := range []string{"viahandler", "viasdk"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: server + "__ask", Arguments: map[string]any{}})
		if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "accept ann" {
			t.Errorf("%s ask: %+v, %v", server, res, err)
			if res != nil && len(res.Content) > 0 {
				t.Logf("%s", res.Content[0].(*mcp.TextContent).Text)
			}
		}
	}

	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "viasdk__welcome"})
	if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "sdk welcomes you" {
		t.Fatalf("prompt: %+v, %v", pr, err)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://handler/note"})
	if err != nil || rr.Contents[0].Text != "handler's note" {
		t.Fatalf("resource: %+v, %v", rr, err)
	}

	// The host's server changes its tools: the gateway hears list_changed on its GET
	// stream, lists again and tells the client.
	mcp.AddTool(sdk, &mcp.Tool{Name: "late"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
	})
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(toolNames(t, cs), "viasdk__late") {
		if time.Now().After(deadline) {
			t.Fatalf("viasdk__late never listed: %v", toolNames(t, cs))
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	changed := listChanged
	mu.Unlock()
	if changed == 0 {
		t.Error("no tools/list_changed reached the client")
	}

	// The agent's filter applies as to any server.
	limited := connect(t, srv.URL, "limited", nil)
	ln2 := toolNames(t, limited)
	if !slices.Contains(ln2, "viasdk__greet") || slices.Contains(ln2, "viasdk__fail") || slices.Contains(ln2, "viahandler__greet") {
		t.Fatalf("limited agent's tools %v", ln2)
	}
	if r, err := limited.CallTool(ctx, &mcp.CallToolParams{Name: "viasdk__fail", Arguments: map[string]any{}}); err == nil && !r.IsError {
		t.Fatalf("a denied tool was called: %+v", r)
	}

	// /readyz and /api/servers show them, up, as transport inprocess.
	for _, path := range []string{"/readyz", "/api/servers"} {
		body := get(t, hc, srv.URL+path)
		for _, name := range []string{"viasdk", "viahandler"} {
			if !strings.Contains(body, `"name":"`+name+`"`) && !strings.Contains(body, `"name": "`+name+`"`) {
				t.Errorf("%s does not show %s:\n%s", path, name, body)
			}
		}
		if !strings.Contains(body, "inprocess") {
			t.Errorf("%s does not say inprocess:\n%s", path, body)
		}
	}
	var ready struct {
		Upstreams []struct{ Name, Transport, State string }
	}
	if err := json.Unmarshal([]byte(get(t, hc, srv.URL+"/readyz")), &ready); err != nil {
		t.Fatal(err)
	}
	up := 0
	for _, u := range ready.Upstreams {
		if u.Transport == "inprocess" && u.State == "up" {
			up++
		}
	}
	if up != 3 {
		t.Errorf("readyz upstreams %+v, want 3 inprocess up", ready.Upstreams)
	}
	if after := listeningSockets(t); !slices.Equal(after, before) {
		t.Fatalf("listening sockets %v after the calls, %v before Start", after, before)
	}
}

func get(t *testing.T, hc *http.Client, url string) string {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

// TestEmbedInProcessRefusals: what a host gets wrong about in-process servers is said.
func TestEmbedInProcessRefusals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := embedded.NewYAML(testConfig(t, "127.0.0.1:1", "servers:\n  own: {type: inprocess}\n  web: {type: http, url: 'http://127.0.0.1:9/mcp'}\n"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.AddServer("web", http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), `must be type "inprocess"`) {
		t.Errorf("AddServer over an http server: %v", err)
	}
	if err := g.AddMCPServer("own", nil); err == nil {
		t.Error("AddMCPServer(nil) succeeded")
	}
	if err := g.Start(ctx); err == nil || !strings.Contains(err.Error(), "servers.own is type inprocess, but no server was added") {
		t.Errorf("Start without the server: %v", err)
	}
	if err := g.AddServer("late", http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), "before Start") {
		t.Errorf("AddServer after Start: %v", err)
	}

	g2, err := embedded.NewYAML(testConfig(t, "127.0.0.1:1", "servers:\n  own: {type: inprocess, mode: per_session}\n"), embedded.Options{})
	if err == nil {
		g2.Close()
		t.Fatal("a per_session inprocess server was accepted")
	}
	if !strings.Contains(err.Error(), "runs shared") {
		t.Errorf("per_session: %v", err)
	}
}

// TestEmbedInProcessReload: a reload keeps the servers added in code (adding their entry
// when the new config has none), and refuses one that names an inprocess server nobody
// added, or gives an added one another type.
func TestEmbedInProcessReload(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	base := "listen: 127.0.0.1:1\nstate_dir: " + dir + "\nstore: memory\nauth: {audit: {path: \"off\"}}\n"
	g, err := embedded.NewYAML([]byte(base), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.AddMCPServer("own", ownServer("own")); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	parse := func(extra string) *cfgpkg.Config {
		t.Helper()
		c, _, err := cfgpkg.Parse([]byte(base + extra))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := g.Reload(parse("")); err != nil {
		t.Fatalf("reload without the entry: %v", err)
	}
	if d := g.Config().Servers["own"]; d == nil || d.Transport() != cfgpkg.TransportInProcess {
		t.Fatalf("after reload, servers.own is %+v", d)
	}
	if err := g.Reload(parse("servers:\n  own: {type: http, url: 'http://127.0.0.1:9/mcp'}\n")); err == nil || !strings.Contains(err.Error(), `must be type "inprocess"`) {
		t.Errorf("reload giving own another type: %v", err)
	}
	if err := g.Reload(parse("servers:\n  other: {type: inprocess}\n")); err == nil || !strings.Contains(err.Error(), "servers.other is type inprocess, but no server was added") {
		t.Errorf("reload naming a server nobody added: %v", err)
	}
	if err := g.Reload(parse("servers:\n  own: {type: inprocess, meta: {title: Own}}\n")); err != nil {
		t.Fatalf("reload with the entry: %v", err)
	}
	if got := g.Config().Servers["own"].Meta.Title; got != "Own" {
		t.Errorf("title %q after reload", got)
	}
}
