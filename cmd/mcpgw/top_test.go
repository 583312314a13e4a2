package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/store"
)

// topUpstream is a streamable HTTP MCP server with one tool, "ping", answering JSON.
func topUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"up","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"ping","description":"answers pong","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":"pong"}]}`
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestTop: `mcpgw top` reads a running gateway's /api/usage with the admin key and prints
// the agent's calls and list tokens and the tool's calls and latency; without the key it
// fails saying how to get one; bad flags are refused by name.
func TestTop(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	cfg, _, err := config.Parse([]byte(`listen: ` + addr + `
state_dir: ` + t.TempDir() + `
auth: {admin_token: s3cret, audit: {path: "off"}}
servers:
  up: {type: streamable_http, url: ` + topUpstream(t) + `}
agents:
  bot: {servers: [up], handshake: full}
`))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := registry.New(cfg, log)
	gw, err := gateway.New(cfg, reg, store.NewMemory(), log)
	if err != nil {
		t.Fatal(err)
	}
	reg.Start(10 * time.Second)
	gw.Start()
	srv.Config.Handler = gw.Handler()
	srv.Start()
	t.Cleanup(func() { srv.Close(); gw.Close(); reg.Close() })

	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-Agent-ID", "bot")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	sid := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	for i := range 2 {
		if r := post(sid, `{"jsonrpc":"2.0","id":`+string(rune('2'+i))+`,"method":"tools/call","params":{"name":"up__ping","arguments":{}}}`); r.StatusCode != http.StatusOK {
			t.Fatalf("call: HTTP %d", r.StatusCode)
		}
	}

	var out bytes.Buffer
	if err := top(context.Background(), []string{"--url", srv.URL, "--key", "s3cret", "--minutes", "5"}, &out); err != nil {
		t.Fatalf("top: %v", err)
	}
	got := out.String()
	t.Logf("mcpgw top:\n%s", got)
	lines := strings.Split(got, "\n")
	if !strings.HasPrefix(lines[0], "mcpgw usage, last 5 min") || !strings.HasPrefix(lines[1], "calls 2  errors 0  list tokens: full ") {
		t.Errorf("header:\n%s", got)
	}
	var agentRow, toolRow []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 7 && f[0] == "bot" {
			agentRow = f
		}
		if len(f) == 6 && f[0] == "up" && f[1] == "ping" {
			toolRow = f
		}
	}
	// bot: 2 calls, 0 errors, some full-list tokens, no thin or search ones.
	if agentRow == nil || agentRow[1] != "2" || agentRow[2] != "0" || agentRow[3] == "0" || agentRow[4] != "0" || agentRow[5] != "0" {
		t.Errorf("agent row %v in:\n%s", agentRow, got)
	}
	// up/ping: 2 calls, 0 errors, a p50 and a p99 (durations, not "-").
	if toolRow == nil || toolRow[2] != "2" || toolRow[4] == "-" || toolRow[5] == "-" {
		t.Errorf("tool row %v in:\n%s", toolRow, got)
	} else if _, err := time.ParseDuration(toolRow[5]); err != nil {
		t.Errorf("p99 %q is not a duration", toolRow[5])
	}

	t.Setenv("MCPGW_ADMIN_TOKEN", "")
	err = top(context.Background(), []string{"--url", srv.URL}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "--key") {
		t.Errorf("without a key: %v, want HTTP 401 and a hint to pass --key", err)
	}
	t.Setenv("MCPGW_ADMIN_TOKEN", "s3cret")
	if err := top(context.Background(), []string{"--url", srv.URL, "--minutes", "1"}, io.Discard); err != nil {
		t.Errorf("with the key from $MCPGW_ADMIN_TOKEN: %v", err)
	}
	for _, bad := range [][]string{{"--minutes", "0"}, {"--minutes", "61"}, {"--every", "10ms"}, {"--url", "ftp://x"}} {
		err := top(context.Background(), append([]string{"--url", srv.URL}, bad...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(bad[0], "--")) {
			t.Errorf("top %v: %v, want an error naming %s", bad, err, bad[0])
		}
	}
}
