package e2e

// Replicas on one Redis store (docs/sessions.md): any replica serves any session's requests
// for shared upstreams, a replica that dies leaves its sessions to the others, a config
// change reaches the GET streams of every replica, and a store that goes away answers
// 503 until it is back.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const replicaConfig = `listen: ${E2E_LISTEN}
state_dir: ${E2E_STATE}
store: redis://127.0.0.1:%d/0
log: {level: debug, format: text}
servers:
  evh: {type: streamable_http, url: %s}
agents:
  a1:
    servers: [evh]
%s`

func TestReplicasOnRedis(t *testing.T) {
	needGatewayBin(t)
	sessNeedRedis(t)
	redis := sessStartRedis(t, "redis", 0, "")
	evURL := startEverythingHTTP(t)
	cfgBody := func(extra string) []byte {
		return []byte(fmt.Sprintf(replicaConfig, redis.Port, yamlQuote(evURL), extra))
	}
	cfg := sessWriteConfig(t, "mcpgw.yaml", string(cfgBody("")))
	ga := sessStartReplica(t, "mcpgw-A", cfg)
	gb := sessStartReplica(t, "mcpgw-B", cfg)
	hdr := map[string]string{"X-Agent-ID": "a1"}
	const tool = "evh__test_simple_text"
	hidden := []string{"evh__test_image_content", "evh__test_audio_content"}

	// --- A session opened on A is served by B.
	s1 := sessOpen(t, ga.URL, hdr)
	listA, l1 := s1.list(t)
	if text, isErr, _ := s1.toolCall(t, tool, map[string]any{}); isErr || !strings.Contains(text, sessSimpleText) {
		t.Fatalf("%s on A: isError=%v %q", tool, isErr, text)
	}
	s1.URL = gb.URL
	listB, _ := s1.list(t)
	if string(listA) != string(listB) {
		t.Errorf("the same session lists different bytes on A (%d) and B (%d)", len(listA), len(listB))
	}
	if text, isErr, _ := s1.toolCall(t, tool, map[string]any{}); isErr || !strings.Contains(text, sessSimpleText) {
		t.Fatalf("%s on B for A's session: isError=%v %q", tool, isErr, text)
	}
	for _, h := range hidden {
		if !slices.ContainsFunc(l1.Tools, func(d json.RawMessage) bool { return sessToolName(d) == h }) {
			t.Fatalf("the fixture has no tool %s: the deny glob below would test nothing", h)
		}
	}
	if !strings.Contains(gb.Log(), "session resumed from store") {
		t.Errorf("B's log does not say it took A's session from the store")
	}

	// --- One config file for both; a deny glob added to it reaches both replicas'
	// streams: a go-sdk client on each, and a raw GET stream on B for A's session s1.
	clientOn := func(g *Gateway) *goClient {
		c := connectGoClient(t, &mcp.StreamableClientTransport{Endpoint: g.URL, HTTPClient: &http.Client{Transport: sessHeaderRT(hdr)}})
		if names := c.toolNames(t); !slices.Contains(names, hidden[0]) {
			t.Fatalf("client on %s: no %s before the change: %v", g.Name, hidden[0], names)
		}
		return c
	}
	ca, cb := clientOn(ga), clientOn(gb)
	st := sessOpenStream(t, gb.URL, s1.headers())
	if st.Status != http.StatusOK {
		t.Fatalf("GET stream on B for A's session: HTTP %d", st.Status)
	}
	changedAt := time.Now()
	sessReplaceFile(t, cfg, cfgBody(`    tools: {deny: ["evh__test_*_content"]}
`))
	const bound = 15 * time.Second
	if !ca.waitListChanged(1, bound) {
		t.Errorf("the client on A got no tools/list_changed within %s of the config change", bound)
	}
	if !cb.waitListChanged(1, bound) {
		t.Errorf("the client on B got no tools/list_changed within %s of the config change", bound)
	}
	if ok, seen := st.wait("notifications/tools/list_changed", bound); !ok {
		t.Errorf("A's session's GET stream on B got no tools/list_changed within %s; events: %q", bound, seen)
	}
	t.Logf("list_changed on both replicas %s after the config change", time.Since(changedAt).Round(time.Millisecond))
	for name, c := range map[string]*goClient{"A": ca, "B": cb} {
		names := c.toolNames(t)
		for _, h := range hidden {
			if slices.Contains(names, h) {
				t.Errorf("client on %s still lists %s after the deny glob", name, h)
			}
		}
		if !slices.Contains(names, tool) {
			t.Errorf("client on %s lost %s, which no glob denies", name, tool)
		}
	}
	if a := s1.call(t, "tools/call", map[string]any{"name": hidden[0], "arguments": map[string]any{}}); a.Error == nil || a.Error.Code != -32602 {
		t.Errorf("a denied tool on B after the change: %s (want JSON-RPC -32602)", a)
	}
	for _, g := range []*Gateway{ga, gb} {
		if !strings.Contains(g.Log(), "config reloaded") {
			t.Errorf("%s's log does not say it reloaded the config", g.Name)
		}
	}

	// --- A session ended on A (DELETE) is ended on B too. B may serve a stale copy for
	// at most the cache TTL (sessions.CacheTTL, 2 s); after that it must be gone.
	t.Run("DeleteOnAEndsOnB", func(t *testing.T) {
		// s5 is asked for on B within the cache TTL after the DELETE; s6 (the control)
		// is not. Past the TTL both must be gone on B.
		s5, s6 := sessOpen(t, ga.URL, hdr), sessOpen(t, ga.URL, hdr)
		redisAddr := fmt.Sprintf("127.0.0.1:%d", redis.Port)
		for _, s := range []*sessRaw{s5, s6} {
			s.URL = gb.URL
			s.list(t) // now live on B, and in B's cache
			if a := sessDelete(t, ga.URL, s.headers()); a.Status != http.StatusOK {
				t.Fatalf("DELETE on A: %s", a)
			}
			if r, err := sessRedisCmd(redisAddr, "EXISTS", "mcpgw:session:"+s.ID); err != nil || r != ":0" {
				t.Errorf("after DELETE on A, Redis EXISTS mcpgw:session:%s answers %q (%v), want :0", s.ID, r, err)
			}
		}
		time.Sleep(500 * time.Millisecond) // the "end" events cross Redis pub/sub
		if a, err := s5.try(gb.URL, "tools/list", map[string]any{}); err != nil || a.Status != http.StatusNotFound {
			t.Logf("a session deleted on A, 0.5 s later on B (within the cache TTL): %v HTTP %d", err, a.Status)
		}
		time.Sleep(2500 * time.Millisecond)
		for name, s := range map[string]*sessRaw{"asked for within the TTL": s5, "not asked for within the TTL": s6} {
			if a, err := s.try(gb.URL, "tools/list", map[string]any{}); err != nil || a.Status != http.StatusNotFound {
				r, _ := sessRedisCmd(redisAddr, "EXISTS", "mcpgw:session:"+s.ID)
				t.Errorf("a session deleted on A (%s), 3 s later, past the 2 s cache TTL, on B: %v HTTP %d (want 404); Redis EXISTS says %s",
					name, err, a.Status, r)
			}
		}
	})

	// --- Kill A: B goes on with A's sessions, also those it has never seen.
	s2 := sessOpen(t, ga.URL, hdr)
	s3 := sessOpen(t, ga.URL, hdr) // left untouched on B until Redis is down
	ga.Kill9()
	if !ga.Exited() {
		t.Fatalf("A (pid %d) survived kill -9", ga.Pid)
	}
	for name, s := range map[string]*sessRaw{"s1": s1, "s2 (never seen by B)": s2} {
		s.URL = gb.URL
		_, l := s.list(t)
		if slices.ContainsFunc(l.Tools, func(d json.RawMessage) bool { return sessToolName(d) == hidden[0] }) {
			t.Errorf("%s on B after A died lists the denied %s", name, hidden[0])
		}
		if text, isErr, _ := s.toolCall(t, tool, map[string]any{}); isErr || !strings.Contains(text, sessSimpleText) {
			t.Errorf("%s on B after A died: isError=%v %q", name, isErr, text)
		}
	}

	// --- Redis goes away: what B must read from the store answers 503.
	redis.Kill9()
	redis.Stop()
	if sessRedisPing(fmt.Sprintf("127.0.0.1:%d", redis.Port)) == nil {
		t.Fatal("redis still answers after kill -9")
	}
	start := time.Now()
	if a, err := s3.try(gb.URL, "tools/list", map[string]any{}); err != nil || a.Status != http.StatusServiceUnavailable {
		t.Errorf("a stored session B has not cached, Redis down: %v %s (want 503)", err, a)
	}
	t.Logf("503 for an uncached session after %s", time.Since(start).Round(time.Millisecond))
	ghost := &sessRaw{URL: gb.URL, Header: hdr, ID: "E2E-NO-SUCH-SESSION-" + fmt.Sprint(time.Now().UnixNano())}
	if a, err := ghost.try(gb.URL, "tools/list", map[string]any{}); err != nil || a.Status != http.StatusServiceUnavailable {
		t.Errorf("an unknown session id, Redis down: %v %s (want 503: the store cannot say it does not exist)", err, a)
	}
	if a, err := sessInit(gb.URL, hdr); err != nil || a.Status != http.StatusServiceUnavailable {
		t.Errorf("initialize, Redis down: %v %s (want 503)", err, a)
	}
	// The store alert's series (deploy/prometheus/mcpgw-rules.yml) says what /readyz says.
	if m, err := getMetrics(gb); err != nil {
		t.Errorf("metrics, Redis down: %v", err)
	} else if v, ok := metricValue(m, "mcpgw_store_up", nil); !ok || v != 0 {
		t.Errorf("mcpgw_store_up = %v (found %v) with Redis down, want 0", v, ok)
	}
	if a, err := s1.try(gb.URL, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}); err == nil && a.ok() {
		t.Logf("a session live on B still works while Redis is down")
	} else {
		t.Logf("a session live on B while Redis is down: %v %s", err, a)
	}

	// --- Redis back on the same port (empty: it keeps nothing on disk): B recovers.
	redis2 := sessStartRedis(t, "redis-again", redis.Port, redis.Dir)
	var s4 *sessRaw
	desc, ok := waitFor(20*time.Second, func() (bool, string) {
		a, err := sessInit(gb.URL, hdr)
		if err != nil {
			return false, err.Error()
		}
		if a.ok() && a.Header.Get("Mcp-Session-Id") != "" {
			s4 = &sessRaw{URL: gb.URL, Header: hdr, ID: a.Header.Get("Mcp-Session-Id"), next: 1}
			return true, ""
		}
		return false, a.String()
	})
	if !ok {
		t.Fatalf("initialize on B after Redis came back on port %d: %s", redis2.Port, desc)
	}
	t.Logf("B serves new sessions %s after Redis was killed", time.Since(start).Round(time.Millisecond))
	if m, err := getMetrics(gb); err != nil {
		t.Errorf("metrics, Redis back: %v", err)
	} else if v, ok := metricValue(m, "mcpgw_store_up", nil); !ok || v != 1 {
		t.Errorf("mcpgw_store_up = %v (found %v) with Redis back, want 1", v, ok)
	}
	if n, err := sessPost(gb.URL, s4.headers(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || n.Status != http.StatusAccepted {
		t.Errorf("notifications/initialized after Redis came back: %v %s", err, n)
	}
	_, l4 := s4.list(t)
	if len(l4.Tools) == 0 {
		t.Errorf("a new session after Redis came back lists no tools")
	}
	if text, isErr, _ := s4.toolCall(t, tool, map[string]any{}); isErr || !strings.Contains(text, sessSimpleText) {
		t.Errorf("a new session after Redis came back: isError=%v %q", isErr, text)
	}
	if text, isErr, _ := s1.toolCall(t, tool, map[string]any{}); isErr || !strings.Contains(text, sessSimpleText) {
		t.Errorf("s1 after Redis came back: isError=%v %q", isErr, text)
	}
	// s3 was only in the Redis that died without persistence: now simply unknown.
	if a, err := s3.try(gb.URL, "tools/list", map[string]any{}); err != nil || a.Status != http.StatusNotFound {
		t.Errorf("a session lost with Redis's data: %v %s (want 404 once the store answers again)", err, a)
	}
	// The new session is in the new Redis: a replica started now serves it.
	gc := sessStartReplica(t, "mcpgw-C", cfg)
	s4.URL = gc.URL
	if text, isErr, _ := s4.toolCall(t, tool, map[string]any{}); isErr || !strings.Contains(text, sessSimpleText) {
		t.Errorf("B's new session on a third replica: isError=%v %q", isErr, text)
	}
}
