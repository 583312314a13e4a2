package gateway_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/peers"
	"github.com/mcpgw/mcpgw/internal/store"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Capped clients (docs/performance.md, "Capped clients"): a client whose cap is below its
// view gets the agent's most used tools listed, within its cap, beside search_tools; two
// replicas on one Redis list the same bytes; a session keeps its list however usage
// changes after it started, also revived on the other replica.

// cappedConfig caps clients named capper* at 4 tools (3 and search_tools).
const cappedConfig = `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
http: {page_size: 500}
clients:
  capper: {match: ["capper*"], max_tools: 4}
servers:
  e1: {type: streamable_http, url: "{{everything}}"}
`

// startTestRedis runs redis-server on a free loopback port, stopped by its pid when the
// test ends, and opens a store on it for each of n replicas.
func startTestRedis(t *testing.T, n int) []store.Store {
	t.Helper()
	bin := peers.Command(t, "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--daemonize", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	url := "redis://127.0.0.1:" + strconv.Itoa(port) + "/0"
	var out []store.Store
	deadline := time.Now().Add(5 * time.Second)
	for len(out) < n {
		s, err := store.OpenRedis(url)
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("redis-server at %s: %v", url, err)
			}
			select {
			case <-done:
				t.Fatal("redis-server exited at start")
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	return out
}

// capSess is a capper client's session: its id and agent.
type capSess struct{ sid, agent string }

// openCapped opens a session of agent as a capper client.
func openCapped(t *testing.T, g *gatewaytest.GW, agent string) capSess {
	t.Helper()
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"capper-test","version":"1"}}}`,
		Header: map[string]string{"X-Agent-ID": agent}})
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
	}
	return capSess{sid, agent}
}

// cappedList is a session's tools/list result bytes and names.
func cappedList(t *testing.T, g *gatewaytest.GW, sid capSess) (string, []string) {
	t.Helper()
	m := agentCall(t, g, sid, 50, "tools/list", `{}`)
	if m.Error != nil {
		t.Fatalf("tools/list: %s", m.Error)
	}
	var res struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return string(m.Result), names
}

// agentCall sends a request on session sid (the sid's agent id comes with it: the session
// belongs to its agent's principal).
func agentCall(t *testing.T, g *gatewaytest.GW, s capSess, id int, method, params string) *wire.Msg {
	t.Helper()
	hdr := gatewaytest.SessionHeaders(s.sid, "2025-11-25")
	hdr["X-Agent-ID"] = s.agent
	return g.Do(t, gatewaytest.Req{Body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), Header: hdr}).Message(t)
}

func callCapped(t *testing.T, g *gatewaytest.GW, sid capSess, tool, args string, times int) {
	t.Helper()
	for i := range times {
		m := agentCall(t, g, sid, 100+i, "tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
		if m.Error != nil {
			t.Fatalf("tools/call %s: %s", tool, m.Error)
		}
	}
}

func TestCappedMostUsedReplicas(t *testing.T) {
	stores := startTestRedis(t, 2)
	g1 := gatewaytest.StartOn(t, cappedConfig, stores[0])
	g2 := gatewaytest.StartOn(t, cappedConfig, stores[1])

	// Cold start: no usage yet, the view's first three tools and search_tools.
	cold := openCapped(t, g1, "ag")
	coldBody, coldNames := cappedList(t, g1, cold)
	if len(coldNames) != 4 || coldNames[3] != "mcpgw__search_tools" {
		t.Fatalf("cold capped list = %v, want 3 tools and mcpgw__search_tools", coldNames)
	}
	all := g1.ToolNames(t, g1.Initialize(t, "2025-11-25", ""))
	if !slices.Equal(coldNames[:3], all[:3]) {
		t.Errorf("cold capped list %v, want the view's first three %v", coldNames[:3], all[:3])
	}
	// The agent uses two tools its cold list did not show (callable by their real names).
	sum, echo := "e1__test_simple_text", "e1__test_image_content"
	for _, n := range []string{sum, echo} {
		if slices.Contains(coldNames, n) || !slices.Contains(all, n) {
			t.Fatalf("%s must be in the view (%v) and not in the cold list %v", n, all, coldNames)
		}
	}
	callCapped(t, g1, cold, sum, `{}`, 3)
	callCapped(t, g1, cold, echo, `{}`, 2)
	if again, _ := cappedList(t, g1, cold); again != coldBody {
		t.Errorf("the session's list changed with its own calls:\n%s\n%s", coldBody, again)
	}

	// A new session on this replica (its start flushes the counts) and one on the other
	// replica list the same bytes, the two used tools among them.
	s1 := openCapped(t, g1, "ag")
	body1, names1 := cappedList(t, g1, s1)
	s2 := openCapped(t, g2, "ag")
	body2, _ := cappedList(t, g2, s2)
	if !slices.Contains(names1, sum) || !slices.Contains(names1, echo) || len(names1) != 4 {
		t.Errorf("after use, the capped list = %v, want %s and %s within 4", names1, sum, echo)
	}
	if body1 != body2 {
		t.Errorf("two replicas list differently:\n%s\n%s", body1, body2)
	}
	// Another agent's usage is its own.
	if _, n := cappedList(t, g2, openCapped(t, g2, "fresh")); !slices.Equal(n, coldNames) {
		t.Errorf("another agent's capped list = %v, want the cold one %v", n, coldNames)
	}

	// Heavy use of a third tool on the second replica changes the ranking for sessions that
	// start later, but not s1's list, here revived on the second replica.
	tiny := "e1__test_multiple_content_types"
	if !slices.Contains(all, tiny) || slices.Contains(names1, tiny) {
		t.Fatalf("%s must be in the view and not yet listed (%v)", tiny, names1)
	}
	callCapped(t, g2, s2, tiny, `{}`, 20)
	if _, later := cappedList(t, g2, openCapped(t, g2, "ag")); !slices.Contains(later, tiny) {
		t.Errorf("after 20 calls of %s, a new session lists %v", tiny, later)
	}
	if revived, _ := cappedList(t, g2, s1); revived != body1 {
		t.Errorf("session revived on the other replica lists differently:\n%s\n%s", body1, revived)
	}
}

// openAs opens a session of a client named client, with extra headers.
func openAs(t *testing.T, g *gatewaytest.GW, client string, hdr map[string]string) capSess {
	t.Helper()
	h := map[string]string{"X-Agent-ID": "ag"}
	for k, v := range hdr {
		h[k] = v
	}
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + client + `","version":"1"}}}`,
		Header: h})
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
	}
	return capSess{sid, "ag"}
}

// A client that defers tools itself (Claude Code, Codex, Qwen Code, VS Code) is served
// the full form, which its own search indexes best, though the gateway's setting asks for
// search; a session's own header still wins, and a client with no such profile gets the
// gateway's setting.
func TestDeferringClientGetsFullForm(t *testing.T) {
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
http: {page_size: 500, handshake: search}
servers:
  e1: {type: streamable_http, url: "{{everything}}"}
`)
	for _, c := range []struct {
		client, header string
		search         bool
	}{
		{"claude-code", "", false},
		{"codex-mcp-client", "", false},
		{"qwen-code-mcp-client", "", false},
		{"Visual Studio Code", "", false},
		{"claude-code", "search", true},
		{"some-client", "", true},
	} {
		hdr := map[string]string{}
		if c.header != "" {
			hdr["X-MCP-Handshake"] = c.header
		}
		_, names := cappedList(t, g, openAs(t, g, c.client, hdr))
		if got := slices.Contains(names, "mcpgw__search_tools"); got != c.search || (!c.search && len(names) < 20) {
			t.Errorf("%s (header %q): %d tools, search form %v, want search form %v", c.client, c.header, len(names), got, c.search)
		}
	}
}
