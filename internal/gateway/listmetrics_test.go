package gateway_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/registry"
)

// scrape reads the gateway's /metrics into name{labels} → value.
func scrape(t *testing.T, g *testGW) map[string]float64 {
	t.Helper()
	r, err := client.Get(g.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad metrics line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// TestListTokensAndSessionsByAgent: list bytes and tokens are counted by agent and form, a
// thin list counts the tokens it saved against the full form of the same page for its
// agent, and live sessions are gauged by agent and transport (and drop when they end).
func TestListTokensAndSessionsByAgent(t *testing.T) {
	g := wordyAgents(t)
	open := func(agent string) (string, resp) { return openAs(t, g, agent) }
	fsid, full := open("af")
	_, thin := open("at")
	fullBytes, thinBytes := len(full.message(t).Result), len(thin.message(t).Result)
	// Tokens are the o200k_base count of the page the session received, not bytes/4.
	fullTokens, thinTokens := registry.CountTokens(full.message(t).Result), registry.CountTokens(thin.message(t).Result)
	if fullTokens == fullBytes/4 {
		t.Errorf("full list: %d tokens, exactly bytes/4: still the estimate?", fullTokens)
	}
	if thinBytes >= fullBytes {
		t.Fatalf("thin list %d bytes, full %d: the upstream's tools carry too little to thin", thinBytes, fullBytes)
	}
	m := scrape(t, g)
	for _, c := range []struct {
		series string
		want   float64
	}{
		{`mcpgw_tools_list_bytes_total{agent="af",form="full"}`, float64(fullBytes)},
		{`mcpgw_tools_list_bytes_total{agent="at",form="thin"}`, float64(thinBytes)},
		{`mcpgw_tools_list_estimated_tokens_total{agent="af",form="full"}`, float64(fullTokens)},
		{`mcpgw_tools_list_estimated_tokens_total{agent="at",form="thin"}`, float64(thinTokens)},
		// The thin page saved what the full form of the same page would have cost more.
		{`mcpgw_tools_list_tokens_saved_total{agent="at"}`, float64(fullTokens - thinTokens)},
		{`mcpgw_sessions_active{agent="af",transport="streamable"}`, 1},
		{`mcpgw_sessions_active{agent="at",transport="streamable"}`, 1},
	} {
		if got, ok := m[c.series]; !ok || got != c.want {
			t.Errorf("%s = %v (present %v), want %v", c.series, got, ok, c.want)
		}
	}
	if v, ok := m[`mcpgw_tools_list_tokens_saved_total{agent="af"}`]; ok {
		t.Errorf("a full list counted %v saved tokens", v)
	}
	// Ending af's session takes it off its agent's gauge only.
	if r := g.do(t, req{method: http.MethodDelete, header: sessionHeaders(fsid, "2025-11-25")}); r.status/100 != 2 {
		t.Fatalf("DELETE session: HTTP %d %s", r.status, r.body)
	}
	m = scrape(t, g)
	if got := m[`mcpgw_sessions_active{agent="af",transport="streamable"}`]; got != 0 {
		t.Errorf("af's sessions after DELETE = %v, want 0", got)
	}
	if got := m[`mcpgw_sessions_active{agent="at",transport="streamable"}`]; got != 1 {
		t.Errorf("at's sessions after af's DELETE = %v, want 1", got)
	}
}

// startWordyUpstream serves 20 tools with long descriptions and schemas, so that their
// thin form is much smaller than the full one; it answers JSON bodies. Calls of tool1 fail
// with a JSON-RPC error; every other tool answers "done".
func startWordyUpstream(t *testing.T) string {
	t.Helper()
	var tools []string
	for i := range 20 {
		tools = append(tools, fmt.Sprintf(`{"name":"tool%d","description":%q,"inputSchema":{"type":"object","properties":{"path":{"type":"string","description":%q}}}}`,
			i, strings.Repeat("Does a careful thing with many words. ", 20), strings.Repeat("The path to read. ", 10)))
	}
	list := `{"tools":[` + strings.Join(tools, ",") + `]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"wordy","version":"1"}}`
		case "tools/list":
			result = list
		case "tools/call":
			result = `{"content":[{"type":"text","text":"done"}]}`
			if m.Params.Name == "tool1" { // fails, for error counts
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32000,"message":"tool1 fails"}}`))
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL + "/mcp"
}

// wordyAgents is a gateway config on the wordy upstream (server j) with agent af, whose
// sessions get full lists, and at, whose sessions get thin ones.
func wordyAgents(t *testing.T) *testGW {
	t.Helper()
	return startGateway(t, strings.Replace(jsonUpstreamConfig, "URL", startWordyUpstream(t), 1)+`
agents:
  af: {servers: [j], handshake: full}
  at: {servers: [j], handshake: thin}
`)
}

// openAs opens a session as agent (X-Agent-ID) and lists its tools once; it returns the
// session id and the list's answer.
func openAs(t *testing.T, g *testGW, agent string) (string, resp) {
	t.Helper()
	h := map[string]string{"X-Agent-ID": agent}
	r := g.do(t, req{body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, header: h})
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize as %s: HTTP %d %s", agent, r.status, r.body)
	}
	h["Mcp-Session-Id"], h["MCP-Protocol-Version"] = sid, "2025-11-25"
	g.do(t, req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, header: h})
	l := g.do(t, req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, header: h})
	if l.status != http.StatusOK || l.message(t).Error != nil {
		t.Fatalf("tools/list as %s: HTTP %d %s", agent, l.status, l.body)
	}
	return sid, l
}

// TestUpstreamStartTime: a gateway serves the start time of a server that came up (the
// transitions are TestUpstreamStateStartTime's).
func TestUpstreamStartTime(t *testing.T) {
	g := wordyAgents(t)
	m := scrape(t, g)
	first, ok := m[`mcpgw_upstream_start_time_seconds{server="j"}`]
	now := float64(time.Now().Unix())
	if !ok || first < now-60 || first > now+1 {
		t.Fatalf("start time of j = %v (present %v), want about now (%v)", first, ok, now)
	}
	if m[`mcpgw_upstream_up{server="j"}`] != 1 {
		t.Fatalf("j is not up: %v", m[`mcpgw_upstream_up{server="j"}`])
	}
}
