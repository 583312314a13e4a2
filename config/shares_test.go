package config

import (
	"strings"
	"testing"
)

// TestFairShareDefaults: every limit shared by all agents has a per-agent share by
// default, a fraction of the total and at least 1, so that one agent cannot take it all.
func TestFairShareDefaults(t *testing.T) {
	cases := []struct {
		name, yaml             string
		instances, queue       int
		sessions, sessionShare int
	}{
		{name: "defaults", yaml: "servers:\n  s: {type: stdio, command: x}\n",
			instances: 128, queue: 32, sessions: DefaultMaxSessions, sessionShare: DefaultMaxSessions / 4},
		{name: "small totals keep a share of one", yaml: "http: {max_sessions: 2}\nupstream: {max_instances: 1}\nservers:\n  s: {type: stdio, command: x, queue: {max: 1}}\n",
			instances: 1, queue: 1, sessions: 2, sessionShare: 1},
		{name: "half of max_instances", yaml: "upstream: {max_instances: 4}\nservers:\n  s: {type: stdio, command: x}\n",
			instances: 2, queue: 32, sessions: DefaultMaxSessions, sessionShare: DefaultMaxSessions / 4},
		{name: "half of a smaller pool.max", yaml: "servers:\n  s: {type: stdio, command: x, pool: {warm: 1, max: 5}}\n",
			instances: 2, queue: 32, sessions: DefaultMaxSessions, sessionShare: DefaultMaxSessions / 4},
		{name: "upstream default", yaml: "upstream: {max_instances_per_agent: 7}\nservers:\n  s: {type: stdio, command: x}\n",
			instances: 7, queue: 32, sessions: DefaultMaxSessions, sessionShare: DefaultMaxSessions / 4},
		{name: "explicit", yaml: "http: {max_sessions: 100, max_sessions_per_agent: 10}\nupstream: {max_instances_per_agent: 7}\nservers:\n  s: {type: stdio, command: x, max_instances_per_agent: 3, queue: {max: 10, max_per_agent: 4}}\n",
			instances: 3, queue: 4, sessions: 100, sessionShare: 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, ps, err := Parse([]byte(c.yaml))
			if err != nil {
				t.Fatal(ps)
			}
			d := cfg.Servers["s"]
			if d.MaxInstancesPerAgent != c.instances || d.Queue.MaxPerAgent != c.queue {
				t.Errorf("max_instances_per_agent %d, queue.max_per_agent %d; want %d, %d", d.MaxInstancesPerAgent, d.Queue.MaxPerAgent, c.instances, c.queue)
			}
			if cfg.HTTP.MaxSessions != c.sessions || cfg.HTTP.MaxSessionsPerAgent != c.sessionShare {
				t.Errorf("max_sessions %d, max_sessions_per_agent %d; want %d, %d", cfg.HTTP.MaxSessions, cfg.HTTP.MaxSessionsPerAgent, c.sessions, c.sessionShare)
			}
		})
	}
}

func TestFairShareValidation(t *testing.T) {
	cases := []struct {
		name, yaml, want string
		warning          bool
	}{
		{name: "negative instance share", yaml: "servers:\n  s: {type: stdio, command: x, max_instances_per_agent: -1}\n", want: "servers.s.max_instances_per_agent: must not be negative"},
		{name: "negative upstream share", yaml: "upstream: {max_instances_per_agent: -2}\n", want: "upstream.max_instances_per_agent: must not be negative"},
		{name: "negative queue share", yaml: "servers:\n  s: {type: stdio, command: x, queue: {max_per_agent: -1}}\n", want: "servers.s.queue.max_per_agent: must not be negative"},
		{name: "negative sessions", yaml: "http: {max_sessions: -1}\n", want: "http.max_sessions: -1 must be positive"},
		{name: "negative session share", yaml: "http: {max_sessions_per_agent: -1}\n", want: "http.max_sessions_per_agent: -1 must be positive"},
		{name: "share over total", yaml: "upstream: {max_instances: 4}\nservers:\n  s: {type: stdio, command: x, max_instances_per_agent: 5}\n", want: "one agent may take every instance", warning: true},
		{name: "queue share over queue", yaml: "servers:\n  s: {type: stdio, command: x, queue: {max: 2, max_per_agent: 3}}\n", want: "one agent may fill the queue", warning: true},
		{name: "session share over total", yaml: "http: {max_sessions: 10, max_sessions_per_agent: 11}\n", want: "one agent may hold every session", warning: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ps, err := Parse([]byte(c.yaml))
			text := problemsText(ps)
			if !strings.Contains(text, c.want) {
				t.Fatalf("problems %q, want one saying %q", text, c.want)
			}
			if c.warning != (err == nil) {
				t.Errorf("warning %v, but Parse error %v", c.warning, err)
			}
		})
	}
}
