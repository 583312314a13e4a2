package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// inprocSDKServer is a go-sdk server with a tool that answers, one that reports progress
// before answering, and one that fails.
func inprocSDKServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "inproc-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo:" + in.Text}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3}); err != nil {
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "broken"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("it broke")
	})
	return s
}

func dialInProc(t *testing.T, h http.Handler, handler Handler) *Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := NewDialer().Dial(ctx, Options{Name: "own", Transport: "inprocess", InProcess: &InProcess{Handler: h},
		Handler: handler, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return c
}

func TestInProcessToolsAndProgress(t *testing.T) {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return inprocSDKServer() }, nil)
	var mu sync.Mutex
	var progress []string
	related := 0
	c := dialInProc(t, sdk, func(_ *Conn, m *wire.Msg, raw []byte, rel *Call) {
		if m.Method == "notifications/progress" {
			mu.Lock()
			progress = append(progress, string(raw))
			if rel != nil {
				related++
			}
			mu.Unlock()
		}
	})
	defer c.Close()
	if c.ProtocolVersion == "" || !strings.Contains(string(c.InitResult), "inproc-test") {
		t.Fatalf("initialize result %s (version %q)", c.InitResult, c.ProtocolVersion)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tools, err := c.ListAll(ctx, "tools/list", "tools")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, raw := range tools {
		var tl struct{ Name string }
		_ = json.Unmarshal(raw, &tl)
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "broken,echo,slow" {
		t.Fatalf("tools %v", names)
	}
	res, err := c.Request(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`))
	if err != nil || !strings.Contains(string(res), "echo:hi") {
		t.Fatalf("echo: %s, %v", res, err)
	}
	res, err = c.Request(ctx, "tools/call", json.RawMessage(`{"name":"broken","arguments":{}}`))
	if err != nil || !strings.Contains(string(res), `"isError":true`) || !strings.Contains(string(res), "it broke") {
		t.Fatalf("broken: %s, %v", res, err)
	}
	_, err = c.Request(ctx, "tools/call", json.RawMessage(`{"name":"nope","arguments":{}}`))
	var rpc *RPCError
	if !errors.As(err, &rpc) {
		t.Fatalf("unknown tool: %v, want a JSON-RPC error", err)
	}
	res, err = c.Request(ctx, "tools/call", json.RawMessage(`{"name":"slow","arguments":{},"_meta":{"progressToken":"p1"}}`))
	if err != nil || !strings.Contains(string(res), "done") {
		t.Fatalf("slow: %s, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The progress came on the call's own event stream, so with the call: as for an HTTP
	// upstream.
	if len(progress) != 3 || related != 3 || !strings.Contains(progress[2], `"progress":3`) {
		t.Fatalf("progress %v (%d related), want 3 on the call", progress, related)
	}
}

// TestInProcessPlainHandler: any handler that speaks streamable HTTP will do, here one
// that answers JSON and keeps a session id; Close ends the session with DELETE.
func TestInProcessPlainHandler(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	h := plainHandler(func(line string) {
		mu.Lock()
		seen = append(seen, line)
		mu.Unlock()
	})
	c := dialInProc(t, h, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tools, err := c.ListAll(ctx, "tools/list", "tools")
	if err != nil || len(tools) != 1 {
		t.Fatalf("tools %s, %v", tools, err)
	}
	if _, err := c.Request(ctx, "prompts/list", nil); err == nil || !strings.Contains(err.Error(), "no such method") {
		t.Fatalf("prompts/list: %v, want the handler's error", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(seen, "\n")
	for _, want := range []string{"POST localhost/mcp \n", "POST localhost/mcp s-1", "DELETE localhost/mcp s-1"} {
		if !strings.Contains(got+"\n", want) {
			t.Fatalf("requests:\n%s\nwant %q among them", got, want)
		}
	}
}

// A transport closed before it started (Dial's error path) stops its server.
func TestInProcessCloseBeforeStart(t *testing.T) {
	tr, err := newInProcess(Options{Name: "own", InProcess: &InProcess{Handler: plainHandler(nil)}},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.(*inprocTransport).ln.dial(context.Background()); err == nil {
		t.Error("the in-memory listener still accepts after close")
	}
}

func TestInProcessWithoutHandler(t *testing.T) {
	_, err := NewDialer().Dial(context.Background(), Options{Name: "own", Transport: "inprocess", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil || !strings.Contains(err.Error(), "no in-process server was given") {
		t.Fatalf("err %v", err)
	}
}

// TestInProcessCloseLeavesNothing: after Close, the instance's server, its GET stream and
// its connections are gone, and so are their goroutines.
func TestInProcessCloseLeavesNothing(t *testing.T) {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return inprocSDKServer() }, nil)
	warm := dialInProc(t, sdk, nil) // the first use starts go-sdk's and net/http's own lazies
	warm.Close()
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		c := dialInProc(t, sdk, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, err := c.Request(ctx, "tools/call", json.RawMessage(`{"name":"echo","arguments":{"text":"x"}}`)); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("not done after Close")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after 5 closed instances, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// BenchmarkInProcessCall: one tools/call to a go-sdk server, through the in-memory
// listener and over loopback TCP to the same handler.
func BenchmarkInProcessCall(b *testing.B) {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return inprocSDKServer() }, nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	run := func(b *testing.B, o Options) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := NewDialer().Dial(ctx, o)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		params := json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.Request(ctx, "tools/call", params); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("inprocess", func(b *testing.B) {
		run(b, Options{Name: "own", Transport: "inprocess", InProcess: &InProcess{Handler: sdk}, Log: log})
	})
	b.Run("plain/inprocess", func(b *testing.B) {
		run(b, Options{Name: "own", Transport: "inprocess", InProcess: &InProcess{Handler: plainHandler(nil)}, Log: log})
	})
	b.Run("plain/loopback", func(b *testing.B) {
		srv := httptest.NewServer(plainHandler(nil))
		defer srv.Close()
		run(b, Options{Name: "own", Transport: "streamable_http", URL: srv.URL + "/mcp", Log: log})
	})
	b.Run("loopback", func(b *testing.B) {
		srv := httptest.NewServer(sdk)
		defer srv.Close()
		run(b, Options{Name: "own", Transport: "streamable_http", URL: srv.URL + "/mcp", Log: log})
	})
}

// plainHandler is a small streamable HTTP server written by hand: JSON answers, a
// session id, no GET stream, DELETE accepted. saw (if set) is told each request.
func plainHandler(saw func(string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if saw != nil {
			saw(r.Method + " " + r.Host + r.URL.Path + " " + r.Header.Get("Mcp-Session-Id"))
		}
		switch r.Method {
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
			return
		}
		body, _ := io.ReadAll(r.Body)
		m, err := wire.Parse(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if !m.IsRequest() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result string
		switch m.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s-1")
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"plain","version":"1"}}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"one"}]}`
		case "tools/list":
			result = `{"tools":[{"name":"one","inputSchema":{"type":"object"}}]}`
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(wire.RawError(m.ID, json.RawMessage(`{"code":-32601,"message":"no such method"}`)))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(wire.Result(m.ID, json.RawMessage(result)))
	})
}
