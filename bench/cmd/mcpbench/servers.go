package main

// The processes a benchmark puts on the wire besides mcpgw itself: the echo upstream, the
// tuned httputil.ReverseProxy, and the plain go-sdk gateway. Each prints "READY <url>" on
// stdout once it serves.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/bench/echo"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serveUntilSignal serves h on a loopback listener, prints READY and the URL, and returns
// on SIGTERM or SIGINT.
func serveUntilSignal(addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("READY http://%s/mcp\n", ln.Addr())
	select {
	case <-ctx.Done():
	case err := <-errc:
		return err
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

func cmdEcho(args []string) error {
	fs := flag.NewFlagSet("echo", flag.ContinueOnError)
	addr := fs.String("http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:0)")
	stdio := fs.Bool("stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout")
	tools := fs.Int("tools", 1, "number of tools in tools/list (echo plus generated ones)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s := echo.New(*tools)
	switch {
	case *stdio:
		return s.ServeStdio(os.Stdin, os.Stdout)
	case *addr != "":
		return serveUntilSignal(*addr, s)
	}
	return errors.New("echo: give -http ADDR or -stdio")
}

func cmdReverseProxy(args []string) error {
	fs := flag.NewFlagSet("rproxy", flag.ContinueOnError)
	addr := fs.String("listen", "127.0.0.1:0", "listen address")
	target := fs.String("target", "", "upstream URL")
	idle := fs.Int("idle", 1024, "Transport.MaxIdleConnsPerHost (at least the client count)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("rproxy: bad -target %q", *target)
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        *idle * 2,
		MaxIdleConnsPerHost: *idle,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = u.Host
			// Buffer the (small) request body: streaming it while the response is already
			// being written makes Go's HTTP/1 server cut large responses short
			// (golang/go#40747: "use of closed network connection", client sees
			// unexpected EOF). Every MCP proxy reads the whole request anyway.
			if pr.In.Body != nil && pr.In.Body != http.NoBody {
				b, err := io.ReadAll(io.LimitReader(pr.In.Body, 64<<20))
				if err == nil {
					pr.Out.Body = io.NopCloser(bytes.NewReader(b))
					pr.Out.ContentLength = int64(len(b))
				}
			}
		},
		Transport: tr,
	}
	return serveUntilSignal(*addr, rp)
}

// cmdSDKGateway is what a user gets from go-sdk alone: an mcp.Server whose tools are the
// upstream's, each forwarding with mcp.ClientSession.CallTool over one shared upstream
// session. It also serves /metrics (Go runtime) and /readyz for the scenarios that read
// them.
func cmdSDKGateway(args []string) error {
	fs := flag.NewFlagSet("sdkgw", flag.ContinueOnError)
	addr := fs.String("listen", "127.0.0.1:0", "listen address")
	upstream := fs.String("upstream", "", "upstream streamable HTTP URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdkgw", Version: "1.0.0"}, nil)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 2048, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 90 * time.Second}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: *upstream, HTTPClient: hc, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return fmt.Errorf("sdkgw: connect upstream: %w", err)
	}
	defer cs.Close()
	server := mcp.NewServer(&mcp.Implementation{Name: "sdkgw", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	var ready atomic.Bool
	n := 0
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("sdkgw: list upstream tools: %w", err)
		}
		name := t.Name
		server.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments})
		})
		n++
	}
	ready.Store(true)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{JSONResponse: true}))
	mux.Handle("/metrics", promhttp.Handler())
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"ready":%v,"upstreams":[{"name":"echo","state":"up","tools":%d}]}`+"\n", ready.Load(), n)
	})
	return serveUntilSignal(*addr, mux)
}
