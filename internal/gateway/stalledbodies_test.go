package gateway_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// stalledBody sends a request to g that declares a body of length bytes and sends its
// first byte only, and reads the answer within wait (on the raw connection: a client
// library would not read before it had sent the body). It returns the status and how
// long the answer took.
func stalledBody(t *testing.T, g *gatewaytest.GW, path string, hdr map[string]string, length int, wait time.Duration) (int, time.Duration) {
	t.Helper()
	c, err := net.DialTimeout("tcp", g.Addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", path, g.Addr, length)
	for k, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n{")
	start := time.Now()
	if _, err := c.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(start.Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("POST %s with a stalled body: no answer within %s (%v)", path, wait, err)
	}
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

var mcpJSON = map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

func withHeaders(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// TestRefusalDoesNotWaitForTheBody: a request refused on its headers (no credential, a
// wrong one) is answered at once though its declared body never comes. net/http reads
// what is left of a body under 256 KiB before it sends an answer the handler wrote
// without reading it, without a deadline: the 401 was decided, audited, and never sent,
// and the connection was held for as long as the client liked.
func TestRefusalDoesNotWaitForTheBody(t *testing.T) {
	const key = "mcpgw_agent_key_stalled_0123456789"
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.BaseConfig, "http: {max_body_bytes: 65536, page_size: 7}",
		"http: {max_body_bytes: 4194304, page_size: 7, body_timeout: 60s}\nauth:\n  mode: api_key\n  api_keys:\n    - {agent: dev, sha256: "+auth.HashAPIKey(key)+"}", 1))
	stateless := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	for _, tc := range []struct {
		name, path string
		hdr        map[string]string
	}{
		{"no credential", "/mcp", mcpJSON},
		{"a wrong key", "/mcp", withHeaders(mcpJSON, map[string]string{"Authorization": "Bearer mcpgw_wrong"})},
		{"stateless, no credential", "/mcp", withHeaders(mcpJSON, stateless)},
		{"admin API, no credential", "/api/servers", map[string]string{"Content-Type": "application/json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, took := stalledBody(t, g, tc.path, tc.hdr, 100000, 10*time.Second)
			if status != http.StatusUnauthorized {
				t.Errorf("HTTP %d, want 401", status)
			}
			if took > 3*time.Second {
				t.Errorf("the 401 took %s: it waited for the body", took)
			}
		})
	}
}

// TestStalledBodyIs408OnEveryRoute: http.body_timeout bounds the body on every route, not
// only /mcp's: the admin API and the UI's sign-in read theirs without a deadline.
func TestStalledBodyIs408OnEveryRoute(t *testing.T) {
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.BaseConfig, "http: {max_body_bytes: 65536, page_size: 7}",
		"http: {max_body_bytes: 4194304, page_size: 7, body_timeout: 1s}", 1))
	stateless := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	for _, tc := range []struct {
		name, path string
		hdr        map[string]string
	}{
		{"/mcp", "/mcp", mcpJSON},
		{"/mcp stateless", "/mcp", withHeaders(mcpJSON, stateless)},
		{"/api/servers", "/api/servers", withHeaders(map[string]string{"Content-Type": "application/json"}, g.LocalAuth(t))},
		{"/ui/login", "/ui/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://" + g.Addr}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, took := stalledBody(t, g, tc.path, tc.hdr, 100000, 15*time.Second)
			if status != http.StatusRequestTimeout {
				t.Errorf("HTTP %d after %s, want 408", status, took)
			}
			if took > 6*time.Second {
				t.Errorf("the 408 took %s, body_timeout is 1s", took)
			}
		})
	}
}
