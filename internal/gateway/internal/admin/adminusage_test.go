package admin_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// usageDoc is GET /api/usage's answer.
type usageDoc struct {
	Minutes int     `json:"minutes"`
	Calls   float64 `json:"calls"`
	Errors  float64 `json:"errors"`
	Tokens  struct {
		Full, Thin, Saved float64
	} `json:"tokens"`
	Agents []struct {
		Agent         string
		Calls, Errors float64
		Tokens        struct{ Full, Thin, Saved float64 }
	} `json:"agents"`
	Tools []struct {
		Server, Tool  string
		Calls, Errors float64
		P50           *float64 `json:"p50_seconds"`
		P99           *float64 `json:"p99_seconds"`
	} `json:"tools"`
	AgentTools []struct {
		Agent, Server, Tool string
		Calls, Errors       float64
	} `json:"agent_tools"`
}

// TestAPIUsage: /api/usage reports, over the window asked, the calls and errors per agent
// and per (agent, tool), p50 and p99 per tool, and each agent's list tokens by form and
// the tokens its thin lists saved, all from the gateway's own counters; a window outside
// 1-60 minutes is refused, naming the bounds.
func TestAPIUsage(t *testing.T) {
	g := gatewaytest.WordyAgents(t)
	fsid, full := gatewaytest.OpenAs(t, g, "af")
	_, thin := gatewaytest.OpenAs(t, g, "at")
	h := map[string]string{"X-Agent-ID": "af", "Mcp-Session-Id": fsid, "MCP-Protocol-Version": "2025-11-25"}
	for i, tool := range []string{"j__tool0", "j__tool0", "j__tool0", "j__tool1"} {
		r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":` + string(rune('2'+i)) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`, Header: h})
		if r.Status != http.StatusOK {
			t.Fatalf("call %s: HTTP %d %s", tool, r.Status, r.Body)
		}
	}

	a := g.API(t, "GET", "/api/usage?minutes=5", "", nil)
	var u usageDoc
	if a.Status != http.StatusOK || json.Unmarshal(a.Raw, &u) != nil {
		t.Fatalf("GET /api/usage: %s", a)
	}
	if u.Minutes != 5 || u.Calls != 4 || u.Errors != 1 {
		t.Errorf("window %d min, %v calls, %v errors; want 5, 4, 1: %s", u.Minutes, u.Calls, u.Errors, a.Raw)
	}
	// o200k_base counts of the pages the sessions received (bytes/4 before issue 26).
	fullTok, thinTok := float64(registry.CountTokens(full.Message(t).Result)), float64(registry.CountTokens(thin.Message(t).Result))
	agents := map[string]int{}
	for i, ag := range u.Agents {
		agents[ag.Agent] = i
	}
	if i, ok := agents["af"]; !ok || u.Agents[i].Calls != 4 || u.Agents[i].Errors != 1 || u.Agents[i].Tokens.Full != fullTok || u.Agents[i].Tokens.Thin != 0 {
		t.Errorf("agent af: %+v; want 4 calls, 1 error, %v full tokens", u.Agents, fullTok)
	}
	if i, ok := agents["at"]; !ok || u.Agents[i].Calls != 0 || u.Agents[i].Tokens.Thin != thinTok || u.Agents[i].Tokens.Saved != fullTok-thinTok {
		t.Errorf("agent at: %+v; want no calls, %v thin tokens, %v saved", u.Agents, thinTok, fullTok-thinTok)
	}
	if u.Tokens.Full != fullTok || u.Tokens.Thin != thinTok || u.Tokens.Saved != fullTok-thinTok {
		t.Errorf("token totals %+v, want full %v thin %v saved %v", u.Tokens, fullTok, thinTok, fullTok-thinTok)
	}
	var tool0 bool
	for _, tl := range u.Tools {
		if tl.Server == "j" && tl.Tool == "tool0" {
			tool0 = true
			if tl.Calls != 3 || tl.Errors != 0 || tl.P50 == nil || tl.P99 == nil || *tl.P50 <= 0 || *tl.P99 < *tl.P50 {
				t.Errorf("tool0: %+v, want 3 calls and 0 < p50 <= p99", tl)
			}
		}
	}
	if !tool0 {
		t.Errorf("no row for j/tool0: %s", a.Raw)
	}
	found := false
	for _, at := range u.AgentTools {
		if at.Agent == "af" && at.Server == "j" && at.Tool == "tool1" {
			found = at.Calls == 1 && at.Errors == 1
		}
	}
	if !found {
		t.Errorf("no (af, j, tool1) row with 1 call and 1 error: %+v", u.AgentTools)
	}

	for _, bad := range []string{"0", "61", "x", "-3"} {
		a := g.API(t, "GET", "/api/usage?minutes="+bad, "", nil)
		if a.Status != http.StatusBadRequest || !strings.Contains(string(a.Raw), "from 1 to 60") {
			t.Errorf("minutes=%s: %s, want 400 naming 1 to 60", bad, a)
		}
	}
	if a := g.API(t, "GET", "/api/usage", "", nil); a.Status != http.StatusOK || a.Obj["minutes"] != float64(60) {
		t.Errorf("GET /api/usage without minutes: %s, want the whole hour", a)
	}
}
