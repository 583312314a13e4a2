package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// gateway is the mcpgw process the driver started.
type gateway struct {
	cmd      *exec.Cmd
	done     chan struct{}
	base     string // http://127.0.0.1:PORT
	stateDir string
	logPath  string
	// http makes the driver's own requests to the gateway (health, readiness, raw
	// listing), each bounded.
	http *http.Client
	// bearer is presented on every request to the gateway ("": none).
	bearer string
	// consents counts the authorizations given (auth.go).
	consents int
}

func (g *gateway) pid() int { return g.cmd.Process.Pid }

// startGateway writes a config whose one upstream is serverURL (streamable HTTP, with
// up's settings) and starts bin with it on a free loopback port, retrying on another port
// when the one picked was taken meanwhile.
func startGateway(ctx context.Context, bin, dir, serverURL string, up upstreamSettings) (*gateway, error) {
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		stateDir := filepath.Join(dir, fmt.Sprintf("state-%d", attempt))
		cfg := fmt.Sprintf(`listen: 127.0.0.1:%d
state_dir: %s
naming: {prefix: never}
log: {level: debug, format: text}
servers:
  %s:
    type: streamable_http
    url: %q
`, port, stateDir, upstreamName, serverURL)
		if up.version != "" {
			cfg += fmt.Sprintf("    protocol_version: %q\n", up.version)
		}
		if up.mode != "" {
			cfg += fmt.Sprintf("    mode: %s\n", up.mode)
		}
		cfg += up.auth
		cfgPath := filepath.Join(dir, fmt.Sprintf("mcpgw-%d.yaml", attempt))
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			return nil, err
		}
		logPath := filepath.Join(dir, fmt.Sprintf("mcpgw-%d.log", attempt))
		logFile, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		// The gateway stays in the driver's process group: whoever runs the suite can end
		// the whole group even if the driver itself is killed.
		cmd := exec.Command(bin, "serve", "--config", cfgPath)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			logFile.Close()
			return nil, fmt.Errorf("start %s: %w", bin, err)
		}
		logFile.Close()
		g := &gateway{cmd: cmd, done: make(chan struct{}), base: fmt.Sprintf("http://127.0.0.1:%d", port),
			stateDir: stateDir, logPath: logPath, http: &http.Client{Timeout: 5 * time.Second}, bearer: up.bearer}
		if up.bearer != "" {
			g.http.Transport = bearerTransport{up.bearer}
		}
		go func() {
			_ = cmd.Wait()
			close(g.done)
		}()
		lastErr = g.waitHealthy(ctx)
		if lastErr == nil {
			return g, nil
		}
		g.stop()
		log, _ := os.ReadFile(logPath)
		if !strings.Contains(strings.ToLower(string(log)), "address already in use") {
			return nil, fmt.Errorf("%w; mcpgw log:\n%s", lastErr, log)
		}
	}
	return nil, lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// stop ends the gateway by its pid: SIGTERM, SIGKILL after stopGrace.
func (g *gateway) stop() {
	select {
	case <-g.done:
		return
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(stopGrace):
		_ = g.cmd.Process.Kill()
		select {
		case <-g.done:
		case <-time.After(stopGrace):
			logf("mcpgw pid %d did not exit after SIGKILL", g.pid())
		}
	}
}

// rawToolNames lists the gateway's tools with plain 2026-07-28 requests, as the gateway
// sends them, without a client library's filtering.
func (g *gateway) rawToolNames(ctx context.Context) ([]string, error) {
	var names []string
	cursor := ""
	for page := 0; page < 100; page++ {
		params := map[string]any{"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "mcpgw-confclient", "version": "1.0.0"},
		}}
		if cursor != "" {
			params["cursor"] = cursor
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": page + 1, "method": "tools/list", "params": params})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.base+"/mcp", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := g.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("raw tools/list: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("raw tools/list: %w", err)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			// The answer is the last data line of the stream (notifications come first).
			for _, line := range strings.Split(string(b), "\n") {
				if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
					b = []byte(d)
				}
			}
		}
		var r struct {
			Result *struct {
				Tools      []struct{ Name string } `json:"tools"`
				NextCursor string                  `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Result == nil {
			return nil, fmt.Errorf("raw tools/list: HTTP %d: %.500s", resp.StatusCode, b)
		}
		for _, t := range r.Result.Tools {
			names = append(names, t.Name)
		}
		if r.Result.NextCursor == "" {
			return names, nil
		}
		cursor = r.Result.NextCursor
	}
	return nil, errors.New("raw tools/list: more than 100 pages")
}

// bearerTransport presents the driver's token on its MCP requests to the gateway (not on
// /readyz and the other owner's pages, which a foreign bearer token would close).
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/mcp" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}
