//go:build unix

package gateway_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// callAs calls ev's test_simple_text tool as agent and returns the result's text, and
// whether it was an error.
func callAs(t *testing.T, g *gatewaytest.GW, sid, agent string, id int) (string, bool) {
	t.Helper()
	h := gatewaytest.SessionHeaders(sid, "2025-11-25")
	h["X-Agent-Id"] = agent
	r := g.Do(t, gatewaytest.Req{Body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ev__test_simple_text"}}`, id), Header: h})
	m := r.Message(t)
	if r.Status != http.StatusOK || m.Error != nil {
		t.Fatalf("tools/call as %s: HTTP %d %s", agent, r.Status, r.Body)
	}
	return string(m.Result), isErrorResult(m.Result)
}

// TestInstanceShareGreedyAgent: with max_instances 4, one agent opening five sessions
// gets half of the instances (its default share) and a clear refusal after, naming
// itself, the server and the key; another agent's first call still gets an instance;
// and a session the greedy agent ends gives its place back.
func TestInstanceShareGreedyAgent(t *testing.T) {
	yaml, dir := pidConfig(t, "    max_instances: 4\n")
	killAll(t, dir)
	g := gatewaytest.Start(t, yaml)
	var greedy []string
	for i := 0; i < 5; i++ {
		greedy = append(greedy, g.InitializeAs(t, "greedy"))
	}
	for i, sid := range greedy[:2] {
		if text, isErr := callAs(t, g, sid, "greedy", 1); isErr {
			t.Fatalf("greedy session %d within its share refused: %s", i, text)
		}
	}
	for i, sid := range greedy[2:] {
		text, isErr := callAs(t, g, sid, "greedy", 1)
		if !isErr || !strings.Contains(text, `agent \"greedy\" holds 2 of server \"ev\"'s instances`) || !strings.Contains(text, "servers.ev.max_instances_per_agent = 2") {
			t.Fatalf("greedy session %d past its share: %s; want a refusal naming the agent, the server and servers.ev.max_instances_per_agent", i+2, text)
		}
	}
	modest := g.InitializeAs(t, "modest")
	if text, isErr := callAs(t, g, modest, "modest", 1); isErr {
		t.Fatalf("another agent's first call refused while the greedy one holds its share: %s", text)
	}
	endSession(t, g, greedy[0], "greedy")
	if !gatewaytest.WaitFor(10*time.Second, func() bool {
		_, isErr := callAs(t, g, greedy[2], "greedy", 2)
		return !isErr
	}) {
		t.Fatal("the greedy agent's instance ended, yet its next session is still refused")
	}
}

// TestInstanceSharePoolWaits: a take from a warm pool at the agent's share waits for one
// of the agent's instances to end, up to the server's connect timeout, as a take at
// pool.max does; then it fails naming the share. Another agent takes from the pool.
func TestInstanceSharePoolWaits(t *testing.T) {
	yaml, dir := pidConfig(t, "    pool: {warm: 1, max: 2}\n    timeouts: {connect: 300ms}\n")
	killAll(t, dir)
	g := gatewaytest.Start(t, yaml)
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return poolStats(g, "ev").Ready == 1 }) {
		t.Fatalf("pool never ready: %+v", poolStats(g, "ev"))
	}
	a := g.InitializeAs(t, "greedy")
	if text, isErr := callAs(t, g, a, "greedy", 1); isErr {
		t.Fatalf("first take refused: %s", text)
	}
	b := g.InitializeAs(t, "greedy")
	start := time.Now()
	text, isErr := callAs(t, g, b, "greedy", 1)
	if !isErr || !strings.Contains(text, "servers.ev.max_instances_per_agent = 1") {
		t.Fatalf("second take of the greedy agent: %s; want its share (1 of pool.max 2) named", text)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("refused after %v, want after the 300ms connect timeout", took)
	}
	// The pool refills its warm instance after the greedy take; under load a start can
	// outlast the 300ms connect timeout, which is not what this test is about.
	if !gatewaytest.WaitFor(10*time.Second, func() bool { return poolStats(g, "ev").Ready == 1 }) {
		t.Fatalf("pool never refilled after the greedy take: %+v", poolStats(g, "ev"))
	}
	c := g.InitializeAs(t, "modest")
	if text, isErr := callAs(t, g, c, "modest", 1); isErr {
		t.Fatalf("another agent's take refused: %s", text)
	}
}
