package config

import (
	"strings"
	"testing"
	"time"
)

func TestInstancePoliciesAndPools(t *testing.T) {
	cases := []struct {
		name, servers, agents string
		want                  string // a problem's text, "" for a valid config
	}{
		{name: "per_agent stdio", servers: "    type: stdio\n    command: x\n    mode: per_agent\n"},
		{name: "per_call stdio", servers: "    type: stdio\n    command: x\n    mode: per_call\n"},
		{name: "per_call http", servers: "    type: http\n    url: http://127.0.0.1:9/mcp\n    mode: per_call\n"},
		{name: "unknown mode", servers: "    type: stdio\n    command: x\n    mode: per_task\n", want: `unknown mode "per_task" (one of auto, shared, per_session, per_agent, per_call)`},
		{name: "shared stdio still refused", servers: "    type: stdio\n    command: x\n    mode: shared\n", want: "shared mode requires HTTP/SSE/streamable HTTP transport"},
		{name: "pool on auto stdio", servers: "    type: stdio\n    command: x\n    pool: {warm: 2, max: 10}\n"},
		{name: "pool on per_agent", servers: "    type: stdio\n    command: x\n    mode: per_agent\n    pool: {warm: 1}\n"},
		{name: "pool on shared http", servers: "    type: http\n    url: http://127.0.0.1:9/mcp\n    pool: {warm: 2}\n", want: "a pool needs per_session or per_agent instances; this server runs shared"},
		{name: "pool on per_call", servers: "    type: stdio\n    command: x\n    mode: per_call\n    pool: {warm: 2}\n", want: "this server runs per_call"},
		{name: "warm over max", servers: "    type: stdio\n    command: x\n    pool: {warm: 5, max: 2}\n", want: "warm (5) is more than max (2)"},
		{name: "negative warm", servers: "    type: stdio\n    command: x\n    pool: {warm: -1}\n", want: "must not be negative"},
		{name: "negative grace", servers: "    type: stdio\n    command: x\n    agent_grace: -1s\n", want: "must not be negative"},
		{name: "agent per_call", servers: "    type: stdio\n    command: x\n", agents: "agents:\n  a:\n    servers: [{name: s, mode: per_call}]\n"},
		{name: "agent bad mode", servers: "    type: stdio\n    command: x\n", agents: "agents:\n  a:\n    servers: [{name: s, mode: pooled}]\n", want: `server "s": unknown mode "pooled"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ps, err := Parse([]byte("servers:\n  s:\n" + c.servers + c.agents))
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", ps)
				}
				return
			}
			if err == nil || !strings.Contains(ps.Error()+problemsText(ps), c.want) {
				t.Fatalf("problems %v, want one saying %q", ps, c.want)
			}
		})
	}
}

func problemsText(ps Problems) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Where + ": " + p.Text + "\n")
	}
	return b.String()
}

func TestPoolDefaults(t *testing.T) {
	cfg, ps, err := Parse([]byte("upstream: {idle_timeout: 10m, max_instances: 40}\nservers:\n  s:\n    type: stdio\n    command: x\n    pool: {warm: 3}\n"))
	if err != nil {
		t.Fatal(ps)
	}
	d := cfg.Servers["s"]
	if !d.Pooled() || d.Pool.Max != 40 || d.Pool.IdleTimeout != 10*time.Minute || d.AgentGrace != DefaultAgentGrace {
		t.Errorf("pool %+v grace %v: want max from max_instances (40), idle from upstream.idle_timeout (10m), grace %v", d.Pool, d.AgentGrace, DefaultAgentGrace)
	}
	if d.ResolvedMode() != ModePerSession {
		t.Errorf("mode %s", d.ResolvedMode())
	}
}
