package e2e

// Fair shares with the real daemon (docs/config.md, "Fair shares"): one agent cannot take
// every instance of a server, cannot hold sessions without bound (over streamable HTTP or
// the stateless front), and a session does not outlive its agent. The upstream is the npm
// server-everything over stdio, started per session through a shell that writes its pid
// (as in instances_test.go), so the test sees each instance start and end.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/mcpgw/mcpgw/internal/store"
)

// perSessionEverything is a per_session stdio server named ev whose instances append
// their pids to a file; it returns the config lines and the pid file, and kills what is
// left at cleanup.
func perSessionEverything(t *testing.T, extra string) (yaml, pidFile string) {
	t.Helper()
	script := serverEverythingScript(t)
	pidFile = filepath.Join(t.TempDir(), "pids")
	killPidsAtCleanup(t, func() []int { return pidsIn(t, pidFile) })
	return `
servers:
  ev:
    type: stdio
    command: sh
    args: ["-c", "echo $$ >> ` + pidFile + `; exec \"$0\" \"$1\"", "{{node}}", ` + yamlQuote(script) + `]
    mode: per_session
` + extra, pidFile
}

// echoAs calls ev__echo on a raw session and returns the result's text and isError.
func echoAs(t *testing.T, s *rawSession, msg string) (string, bool) {
	t.Helper()
	a := s.callTool(t, "ev__echo", map[string]any{"message": msg})
	if a.Status != http.StatusOK || a.Reply == nil || a.Reply.Error != nil {
		t.Fatalf("tools/call ev__echo as %s: %s", s.Header["X-Agent-ID"], a)
	}
	return toolResultText(a.Reply.Result)
}

// metricOf reads one series of the gateway's metrics (0 when absent).
func metricOf(t *testing.T, g *Gateway, name string, labels map[string]string) float64 {
	t.Helper()
	text, err := getMetrics(g)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := metricSum(text, name, labels)
	return v
}

// TestFairSharesGreedyAgent: with max_instances 4, an agent opening five sessions gets
// two instances (half, its default share) and then a refusal naming itself, the server
// and the key to raise; another agent's first call still runs; ending one of the greedy
// agent's sessions stops its instance and gives its place back.
func TestFairSharesGreedyAgent(t *testing.T) {
	needGatewayBin(t)
	servers, pidFile := perSessionEverything(t, "    max_instances: 4\n")
	g := startGatewayChecked(t, "log: {level: debug, format: text}\n"+servers)
	greedy := make([]*rawSession, 5)
	for i := range greedy {
		greedy[i] = openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "greedy"})
	}
	// The registry's catalogue probe started (and stopped) one instance before any session.
	probes := len(pidsIn(t, pidFile))
	for i, s := range greedy[:2] {
		if text, isErr := echoAs(t, s, "mine "+strconv.Itoa(i)); isErr || !strings.Contains(text, "Echo: mine") {
			t.Fatalf("greedy session %d within its share: %q", i, text)
		}
	}
	first := pidsIn(t, pidFile)[probes] // greedy[0]'s instance
	for i, s := range greedy[2:] {
		text, isErr := echoAs(t, s, "more")
		if !isErr || !strings.Contains(text, `agent "greedy" holds 2 of server "ev"'s instances`) || !strings.Contains(text, "servers.ev.max_instances_per_agent = 2") {
			t.Fatalf("greedy session %d past its share: %q (isError %v); want the limit, the agent and the key named", i+2, text, isErr)
		}
	}
	modest := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "modest"})
	if text, isErr := echoAs(t, modest, "first"); isErr || !strings.Contains(text, "Echo: first") {
		t.Fatalf("another agent's first call while the greedy one holds its share: %q", text)
	}
	if n := len(pidsIn(t, pidFile)) - probes; n != 3 {
		t.Errorf("%d instances started for sessions, want 3 (greedy's 2, modest's 1)", n)
	}

	// The end of a session stops its instance and frees the agent's place.
	if a := rawRequest(t, http.MethodDelete, g.URL, greedy[0].headers(nil), ""); a.Status != http.StatusOK {
		t.Fatalf("DELETE session: %s", a)
	}
	if _, ok := waitFor(30*time.Second, func() (bool, string) { return !pidAlive(first), "" }); !ok {
		t.Fatalf("the ended session's instance %d still runs", first)
	}
	// The share is given back as the gateway sees the instance end, a moment after the
	// process is gone.
	if msg, ok := waitFor(10*time.Second, func() (bool, string) {
		text, isErr := echoAs(t, greedy[2], "now")
		return !isErr && strings.Contains(text, "Echo: now"), text
	}); !ok {
		t.Fatalf("after one of its sessions ended, the greedy agent is still refused: %q", msg)
	}
}

// TestFairSharesSessionFlood: 3,000 initializes from one agent (8 at a time, bounded in
// time) leave it at most its http.max_sessions_per_agent, each past it counted as an
// eviction; a session of another agent opened before the flood still answers; and the
// store (bbolt) holds no more than http.max_sessions once the gateway is gone.
func TestFairSharesSessionFlood(t *testing.T) {
	needGatewayBin(t)
	servers, _ := perSessionEverything(t, "")
	g := startGatewayChecked(t, "log: {level: warn, format: text}\nhttp: {max_sessions: 200, max_sessions_per_agent: 50}\n"+servers)
	modest := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "modest"})

	const total, workers = 3000, 8
	var next, opened, failed atomic.Int64
	var firstErr atomic.Value
	deadline := time.Now().Add(90 * time.Second)
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= total && time.Now().Before(deadline) {
				a, err := tryRawRequest(http.MethodPost, g.URL, map[string]string{"X-Agent-ID": "flood"}, initializeBody(1))
				if err != nil || a.Status != http.StatusOK || a.Header.Get("Mcp-Session-Id") == "" {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%v %s", err, a))
					continue
				}
				opened.Add(1)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("%d initializes in %v (%d failed)", opened.Load(), took.Round(time.Millisecond), failed.Load())
	if failed.Load() > 0 {
		t.Fatalf("%d initializes failed; first: %v", failed.Load(), firstErr.Load())
	}
	if opened.Load() != total {
		t.Fatalf("only %d of %d initializes within 90 s", opened.Load(), total)
	}
	if n := metricOf(t, g, "mcpgw_sessions_active", map[string]string{"agent": "flood"}); n != 50 {
		t.Errorf("the flooding agent holds %v live sessions, want its cap of 50", n)
	}
	if v := metricOf(t, g, "mcpgw_sessions_evicted_total", map[string]string{"reason": "agent_limit"}); v != total-50 {
		t.Errorf("agent_limit evictions %v, want %d", v, total-50)
	}
	if a := modest.request(t, nil, "ping", map[string]any{}); a.Status != http.StatusOK {
		t.Errorf("another agent's session after the flood: %s", a)
	}

	g.Stop()
	store, err := store.OpenBolt(filepath.Join(g.StateDir, "mcpgw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	recs, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) > 200 {
		t.Errorf("the store holds %d sessions after the flood, want at most http.max_sessions (200)", len(recs))
	}
	t.Logf("stored sessions after the flood: %d", len(recs))
}

// TestFairSharesStatelessConversations: a stateless (2026-07-28) caller that sends each
// request with another X-Conversation-ID does not get a gateway-side session per request:
// its conversations are variants of one caller, at most 8.
func TestFairSharesStatelessConversations(t *testing.T) {
	needGatewayBin(t)
	servers, _ := perSessionEverything(t, "")
	g := startGatewayChecked(t, "log: {level: warn, format: text}\n"+servers)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + rawMeta + `}}`
	for i := range 50 {
		a := rawRequest(t, http.MethodPost, g.URL, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list",
			"X-Agent-ID": "varying", "X-Conversation-ID": "conv-" + strconv.Itoa(i)}, body)
		if a.Status != http.StatusOK || a.Reply == nil || a.Reply.Error != nil {
			t.Fatalf("stateless tools/list %d: %s", i, a)
		}
	}
	if n := metricOf(t, g, "mcpgw_sessions_active", map[string]string{"agent": "varying", "transport": "stateless"}); n < 1 || n > 8 {
		t.Errorf("50 conversations of one stateless caller hold %v gateway-side sessions, want 1 to 8", n)
	}
	if v := metricOf(t, g, "mcpgw_sessions_evicted_total", map[string]string{"reason": "stateless_variants"}); v < 42 {
		t.Errorf("stateless_variants evictions %v, want at least 42", v)
	}
}

// TestFairSharesSessionFollowsAgent: a session ends with its agent, and its instance with
// it: deleted or disabled through the admin API, or removed from the config file (a
// reload). Its next request gets 404, also without the X-Agent-ID header (mode none
// would otherwise continue as the session's agent).
func TestFairSharesSessionFollowsAgent(t *testing.T) {
	needGatewayBin(t)
	servers, pidFile := perSessionEverything(t, "")
	const filedLine = "  filed: {servers: [ev]}\n"
	g := startGatewayChecked(t, "log: {level: debug, format: text}\n"+servers+"agents:\n  keeper: {servers: [ev]}\n"+filedLine)
	keeper := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "keeper"})
	if text, isErr := echoAs(t, keeper, "keep"); isErr {
		t.Fatalf("keeper's call: %q", text)
	}

	// ends opens a session of agent, makes its instance run, does what ends it, and
	// checks the session answers 404 and its instance stops.
	ends := func(agent, how string, end func()) {
		t.Helper()
		s := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": agent})
		if text, isErr := echoAs(t, s, "before"); isErr {
			t.Fatalf("%s's call: %q", agent, text)
		}
		all := pidsIn(t, pidFile)
		inst := all[len(all)-1]
		end()
		if msg, ok := waitFor(20*time.Second, func() (bool, string) {
			a := s.request(t, map[string]string{"X-Agent-ID": ""}, "ping", map[string]any{})
			return a.Status == http.StatusNotFound, a.String()
		}); !ok {
			t.Errorf("the session of an agent %s still answers: %s", how, msg)
		}
		if _, ok := waitFor(30*time.Second, func() (bool, string) { return !pidAlive(inst), "" }); !ok {
			t.Errorf("the instance %d of an agent %s still runs", inst, how)
		}
	}
	api := func(method, path, body string) {
		t.Helper()
		if a := rawRequest(t, method, g.Base+path, nil, body); a.Status/100 != 2 {
			t.Fatalf("%s %s: %s", method, path, a)
		}
	}

	api(http.MethodPut, "/api/agents/temp", `{"servers": ["ev"]}`)
	ends("temp", "deleted through the admin API", func() { api(http.MethodDelete, "/api/agents/temp", "") })
	api(http.MethodPut, "/api/agents/temp", `{"servers": ["ev"]}`)
	ends("temp", "disabled through the admin API", func() { api(http.MethodPatch, "/api/agents/temp", `{"enabled": false}`) })
	ends("filed", "removed from the config file", func() {
		cfg, err := os.ReadFile(g.Config)
		if err != nil || !strings.Contains(string(cfg), filedLine) {
			t.Fatalf("config: %v\n%s", err, cfg)
		}
		writeFileAtomic(t, g.Config, []byte(strings.Replace(string(cfg), filedLine, "", 1)))
	})

	if text, isErr := echoAs(t, keeper, "still"); isErr || !strings.Contains(text, "Echo: still") {
		t.Errorf("another agent's session after the others ended: %q", text)
	}
	if v := metricOf(t, g, "mcpgw_sessions_evicted_total", map[string]string{"reason": "identity"}); v != 3 {
		t.Errorf("identity evictions %v, want 3", v)
	}
}

// TestFairSharesConversationRecords: every new X-Conversation-ID whose session lists its
// tools writes a conversation record (the full/thin handshake's memory); the gateway's
// sweep keeps at most http.max_sessions of them, so a caller varying the header cannot
// grow the bbolt file for ever.
func TestFairSharesConversationRecords(t *testing.T) {
	needGatewayBin(t)
	servers, _ := perSessionEverything(t, "")
	// A 2 s idle timeout makes the sweep run every 5 s (ten reaps of a quarter of it).
	g := startGatewayChecked(t, "log: {level: info, format: text}\nhttp: {max_sessions: 10, session_idle_timeout: 2s, auto: {full_max_tokens: 1000000, thin_max_tokens: 1000000}}\n"+servers)
	const conversations = 40
	for i := range conversations {
		s := openRawSession(t, g.URL, map[string]string{"X-Agent-ID": "chatty", "X-Conversation-ID": "conv-" + strconv.Itoa(i)})
		if len(s.tools(t)) == 0 {
			t.Fatalf("session %d lists no tools", i)
		}
	}
	// The sweep pruned while the 40 were written (each first list starts the session's
	// own instance, about half a second), and prunes what came after its last run at its
	// next: wait for a prune line after the 40 (a sweep runs every 5 s; one that finds
	// nothing over the bound logs nothing, and then the store check below decides).
	if !strings.Contains(g.Log(), "conversation records pruned") {
		if msg, ok := waitFor(20*time.Second, func() (bool, string) {
			return strings.Contains(g.Log(), "conversation records pruned"), "no \"conversation records pruned\" in the log"
		}); !ok {
			t.Fatal(msg)
		}
	}
	before := strings.Count(g.Log(), "conversation records pruned")
	waitFor(12*time.Second, func() (bool, string) {
		return strings.Count(g.Log(), "conversation records pruned") > before, ""
	})
	g.Stop()
	db, err := bolt.Open(filepath.Join(g.StateDir, "mcpgw.db"), 0o600, &bolt.Options{Timeout: 5 * time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := -1
	_ = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("conversations")); b != nil {
			n = b.Stats().KeyN
		}
		return nil
	})
	if n < 0 || n > 10 {
		t.Errorf("the store holds %d conversation records after %d conversations, want at most http.max_sessions (10)", n, conversations)
	}
	t.Logf("conversation records kept: %d of %d", n, conversations)
}
