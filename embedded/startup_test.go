package embedded_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/embedded"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// slowFixture is the plugintest fixture whose catalogue cannot be read until release is
// closed: a plugin still starting.
type slowFixture struct {
	*plugintest.Fixture
	release chan struct{}
}

func (f *slowFixture) ResourceTypes(ctx context.Context) ([]plugin.ResourceType, error) {
	select {
	case <-f.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return f.Fixture.ResourceTypes(ctx)
}

// TestEmbedServesWhilePluginStarts: with the default start_wait the gateway serves at
// once. While a plugin is still starting, initialize and tools/list are answered (without
// its tools) and /readyz says starting; when it comes up, the session's stream gets
// tools/list_changed, its tools are listed, and /readyz is ready.
func TestEmbedServesWhilePluginStarts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := embedded.NewYAML(testConfig(t, ln.Addr().String(), ""), embedded.Options{})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	f := &slowFixture{Fixture: plugintest.New(), release: make(chan struct{})}
	released := false
	defer func() {
		if !released {
			close(f.release)
		}
	}()
	if err := g.RegisterPlugin("kube", f); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Start took %s with a plugin still starting; want it to return at once", d)
	}
	srv := &http.Server{Handler: g.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	base := "http://" + ln.Addr().String()

	post := func(sid, body string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Agent-ID", "writer")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, b
	}
	ready := func() (int, bool, string) {
		t.Helper()
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r struct {
			Starting bool `json:"starting"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("/readyz: %v %s", err, b)
		}
		return resp.StatusCode, r.Starting, string(b)
	}
	tools := func(sid string) []string {
		t.Helper()
		resp, b := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			// An event stream answer: the event that carries the result (a priming event
			// with empty data may come first).
			for _, line := range strings.Split(string(b), "\n") {
				if d, ok := strings.CutPrefix(line, "data:"); ok && strings.Contains(d, `"result"`) {
					b = []byte(strings.TrimSpace(d))
				}
			}
		}
		var m struct {
			Result struct {
				Tools []struct{ Name string } `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("tools/list: %v: HTTP %d %s %q", err, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		var names []string
		for _, tl := range m.Result.Tools {
			names = append(names, tl.Name)
		}
		return names
	}

	resp, b := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize while the plugin starts: HTTP %d %s", resp.StatusCode, b)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if names := tools(sid); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "kube_") }) {
		t.Fatalf("tools/list lists the starting plugin's tools: %v", names)
	}
	if code, starting, body := ready(); code != http.StatusServiceUnavailable || !starting {
		t.Errorf("/readyz while the plugin starts: %d %s, want 503 saying starting", code, body)
	}

	// The session's stream, where list_changed arrives.
	sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer scancel()
	greq, _ := http.NewRequestWithContext(sctx, http.MethodGet, base+"/mcp", nil)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("X-Agent-ID", "writer")
	greq.Header.Set("Mcp-Session-Id", sid)
	greq.Header.Set("MCP-Protocol-Version", "2025-11-25")
	gresp, err := http.DefaultClient.Do(greq)
	if err != nil || gresp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, gresp)
	}
	defer gresp.Body.Close()
	changed := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(gresp.Body)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "notifications/tools/list_changed") {
				changed <- true
				return
			}
		}
		changed <- false
	}()

	close(f.release)
	released = true
	select {
	case ok := <-changed:
		if !ok {
			t.Fatal("the stream ended without tools/list_changed")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no tools/list_changed within 15s of the plugin coming up")
	}
	if names := tools(sid); !slices.Contains(names, "kube_core_v1_Pod_get") {
		t.Errorf("tools/list after the plugin came up lacks its tools: %v", names)
	}
	if code, starting, body := ready(); code != http.StatusOK || starting {
		t.Errorf("/readyz once the plugin is up: %d %s, want 200", code, body)
	}
}
