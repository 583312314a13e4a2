package telemetry_test

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/registry"
)

// scrape reads the gateway's /metrics into name{labels} → value.
func scrape(t *testing.T, g *gatewaytest.GW) map[string]float64 {
	t.Helper()
	r, err := gatewaytest.Client().Get(g.Base + "/metrics")
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
	g := gatewaytest.WordyAgents(t)
	open := func(agent string) (string, gatewaytest.Resp) { return gatewaytest.OpenAs(t, g, agent) }
	fsid, full := open("af")
	_, thin := open("at")
	fullBytes, thinBytes := len(full.Message(t).Result), len(thin.Message(t).Result)
	// Tokens are the o200k_base count of the page the session received, not bytes/4.
	fullTokens, thinTokens := registry.CountTokens(full.Message(t).Result), registry.CountTokens(thin.Message(t).Result)
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
	if r := g.Do(t, gatewaytest.Req{Method: http.MethodDelete, Header: gatewaytest.SessionHeaders(fsid, "2025-11-25")}); r.Status/100 != 2 {
		t.Fatalf("DELETE session: HTTP %d %s", r.Status, r.Body)
	}
	m = scrape(t, g)
	if got := m[`mcpgw_sessions_active{agent="af",transport="streamable"}`]; got != 0 {
		t.Errorf("af's sessions after DELETE = %v, want 0", got)
	}
	if got := m[`mcpgw_sessions_active{agent="at",transport="streamable"}`]; got != 1 {
		t.Errorf("at's sessions after af's DELETE = %v, want 1", got)
	}
}

// TestUpstreamStartTime: a gateway serves the start time of a server that came up (the
// transitions are TestUpstreamStateStartTime's).
func TestUpstreamStartTime(t *testing.T) {
	g := gatewaytest.WordyAgents(t)
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
