package registry

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/config"
)

// sdkServer is a go-sdk streamable HTTP server with one tool of the given name.
func sdkServer(t *testing.T, tool string) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "apply-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: tool, Description: tool}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tool}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func applyConfig(servers map[string]string) *config.Config {
	cfg := &config.Config{Naming: testNaming, Servers: map[string]*config.ServerDef{}}
	cfg.Upstream.MaxMessageBytes = 1 << 20
	for name, url := range servers {
		cfg.Servers[name] = &config.ServerDef{Type: config.TransportHTTP, URL: url, Timeouts: config.Timeouts{Connect: 5 * time.Second, Call: 5 * time.Second}}
	}
	return cfg
}

// waitUp waits (bounded) until the named server is up with a catalogue holding tool.
func waitUp(t *testing.T, r *Registry, name, tool string) *Server {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s := r.Server(name); s != nil {
			if cat := s.Catalog(); cat != nil && slices.ContainsFunc(cat.Tools, func(x *Tool) bool { return x.Name == tool }) {
				return s
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	st, _ := r.Server(name).State()
	t.Fatalf("server %s never came up with tool %s (state %s)", name, tool, st)
	return nil
}

func kinds(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Server+":"+c.Kind)
	}
	slices.Sort(out)
	return out
}

// Apply adds, replaces, retires and restores servers while the registry runs, leaving
// unchanged servers untouched, and tells the gateway about each change.
func TestApplyWhileRunning(t *testing.T) {
	urlA, urlB, urlB2 := sdkServer(t, "alpha"), sdkServer(t, "beta"), sdkServer(t, "gamma")
	r := NewWithOptions(applyConfig(map[string]string{"a": urlA}), Options{Log: slog.New(slog.DiscardHandler), Timing: Timing{DrainFor: 50 * time.Millisecond}})
	var mu sync.Mutex
	var notified []string
	r.OnChange = func(s string) { mu.Lock(); notified = append(notified, s); mu.Unlock() }
	r.Start(10 * time.Second)
	t.Cleanup(r.Close)
	a := waitUp(t, r, "a", "alpha")

	// Added: b starts in the background; a is the same server as before.
	if got := kinds(r.Apply(applyConfig(map[string]string{"a": urlA, "b": urlB}))); !slices.Equal(got, []string{"b:added"}) {
		t.Fatalf("changes %v, want [b:added]", got)
	}
	waitUp(t, r, "b", "beta")
	if r.Server("a") != a {
		t.Error("an unchanged server was replaced")
	}
	if !slices.Equal(r.Names(), []string{"a", "b"}) {
		t.Errorf("names %v", r.Names())
	}

	// Changed: b points elsewhere, a new instance lists the other upstream's tools.
	oldB := r.Server("b")
	if got := kinds(r.Apply(applyConfig(map[string]string{"a": urlA, "b": urlB2}))); !slices.Equal(got, []string{"b:changed"}) {
		t.Fatalf("changes %v, want [b:changed]", got)
	}
	waitUp(t, r, "b", "gamma")
	if r.Server("b") == oldB {
		t.Error("a changed server kept its old instance")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !oldB.Stopped() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !oldB.Stopped() {
		t.Error("the replaced instance was never stopped")
	}

	// Meta only: nothing restarts.
	cfg := applyConfig(map[string]string{"a": urlA, "b": urlB2})
	cfg.Servers["a"].Meta.Title = "Alpha"
	if got := r.Apply(cfg); len(got) != 0 {
		t.Errorf("a meta change restarted %v", kinds(got))
	}

	// Retired: a leaves the config but stays reachable for the sessions that have it.
	if got := kinds(r.Apply(applyConfig(map[string]string{"b": urlB2}))); !slices.Equal(got, []string{"a:retired"}) {
		t.Fatalf("changes %v, want [a:retired]", got)
	}
	if !slices.Equal(r.Names(), []string{"b"}) || r.Server("a") != a {
		t.Fatalf("after retiring a: names %v, server a %p (want %p)", r.Names(), r.Server("a"), a)
	}
	if st := r.Statuses(); len(st) != 2 || st[1].Name != "a" || !st[1].Retired {
		t.Errorf("statuses %+v: want b, then a retired", st)
	}
	if gone := r.Release(func(string) bool { return true }); gone != nil {
		t.Errorf("released %v while in use", gone)
	}

	// Restored with the same definition: the very same server comes back.
	if got := kinds(r.Apply(applyConfig(map[string]string{"a": urlA, "b": urlB2}))); !slices.Equal(got, []string{"a:restored"}) {
		t.Fatalf("changes %v, want [a:restored]", got)
	}
	if r.Server("a") != a || a.Retired() {
		t.Error("restoring a did not bring back the running server")
	}

	// Retired and released: stopped and gone.
	r.Apply(applyConfig(map[string]string{"b": urlB2}))
	if gone := r.Release(func(string) bool { return false }); !slices.Equal(gone, []string{"a"}) {
		t.Fatalf("released %v, want [a]", gone)
	}
	if r.Server("a") != nil || !a.Stopped() {
		t.Error("a released server is still reachable or running")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"a", "b"} {
		if !slices.Contains(notified, want) {
			t.Errorf("OnChange never told about %s (got %v)", want, notified)
		}
	}
}
