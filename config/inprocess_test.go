package config

import (
	"strings"
	"testing"
)

func TestInProcessServerValidation(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		errs       []string // substrings, one error each
		warns      []string // substrings, one warning each
	}{
		{
			name:  "plain",
			yaml:  "servers:\n  own: {type: inprocess}\n",
			warns: []string{"servers.own: type inprocess is served by a Go program that embeds mcpgw"},
		},
		{
			name:  "alias, ignored keys",
			yaml:  "servers:\n  own: {type: in-process, url: 'http://x/mcp', command: x}\n",
			warns: []string{InProcessNote, "servers.own.command: is ignored for type inprocess", "servers.own.url: is ignored for type inprocess"},
		},
		{
			name: "per-session modes",
			yaml: "servers:\n  own: {type: inprocess, mode: per_session}\n  two: {type: inprocess, mode: per_call}\n" +
				"  three: {type: inprocess}\nagents:\n  a: {servers: [{name: three, mode: per_agent}]}\n",
			errs: []string{"servers.own: mode per_session: an inprocess server", "servers.two: mode per_call",
				`agents.a: server "three": mode per_agent: an inprocess server runs shared`},
		},
		{
			name: "a pool",
			yaml: "servers:\n  own: {type: inprocess, pool: {warm: 1}}\n",
			errs: []string{"servers.own.pool: a pool needs per_session or per_agent instances; this server runs shared"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := Parse([]byte(tc.yaml))
			if err != nil && len(tc.errs) == 0 {
				t.Fatal(err)
			}
			if cfg == nil {
				t.Fatalf("no config: %v", err)
			}
			var errs, warns []string
			for _, p := range cfg.Validate() {
				if p.Warning {
					warns = append(warns, p.String())
				} else {
					errs = append(errs, p.String())
				}
			}
			if len(errs) != len(tc.errs) {
				t.Fatalf("errors %q, want %d: %q", errs, len(tc.errs), tc.errs)
			}
			for _, want := range tc.errs {
				if !containsOne(errs, want) {
					t.Errorf("errors %q, want one with %q", errs, want)
				}
			}
			for _, want := range tc.warns {
				if !containsOne(warns, want) {
					t.Errorf("warnings %q, want one with %q", warns, want)
				}
			}
			if cfg.Servers["own"] != nil && cfg.Servers["own"].Transport() != TransportInProcess {
				t.Errorf("transport %q", cfg.Servers["own"].Transport())
			}
		})
	}
}

func containsOne(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// An executor's transport switches do not govern an inprocess server (no executor reaches
// it; the gateway does); its lists still name it.
func TestInProcessUnderExecutorPolicy(t *testing.T) {
	off := false
	p := ExecutorPolicy{AllowStdio: &off, AllowHTTP: &off, AllowSSE: &off, AllowStreamableHTTP: &off}
	if !p.AllowsTransport(TransportInProcess) {
		t.Error("an inprocess server is refused by transport switches that do not name it")
	}
	if p.AllowsTransport(TransportHTTP) || p.AllowsTransport("carrier-pigeon") {
		t.Error("the switches stopped applying to other transports")
	}
}
