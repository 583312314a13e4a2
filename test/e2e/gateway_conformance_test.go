package e2e

// The MCP conformance suite's active server scenarios, run through mcpgw with the go-sdk
// conformance everything-server behind it (prefix never, so the suite's fixed names
// resolve), once per upstream transport. Direct, the fixture passes 40/40
// (TestHarnessConformanceDirect), and so must the gateway. The scenario
// server-sse-multiple-streams checks that quick answers come as working event streams: its
// client names text/event-stream first in Accept, and mcpgw answers a client that prefers
// an event stream with one even when the answer is ready at once (docs/protocol.md).

import (
	"strings"
	"testing"
)

func assertFullConformance(t *testing.T, label string, r *ConformanceReport) {
	t.Helper()
	t.Logf("conformance %s: %d/%d checks passed in %d scenarios (exit %d)", label, r.Passed, r.Total(), len(r.Scenarios), r.ExitCode)
	if r.Passed != activeChecks || r.Failed != 0 || len(r.Scenarios) != activeScenarios {
		t.Errorf("%s: want %d passed, 0 failed in %d scenarios; got %d passed, %d failed, %d scenarios; failing:\n  %s\n(results in %s)",
			label, activeChecks, activeScenarios, r.Passed, r.Failed, len(r.Scenarios),
			strings.Join(r.FailedScenarios(), "\n  "), r.Dir)
	}
	if r.ExitCode != 0 {
		t.Errorf("%s: conformance exited %d", label, r.ExitCode)
	}
}

// TestConformanceThroughGatewayStdio: everything-server as a stdio upstream (mode auto,
// so one instance per gateway session: every scenario gets its own).
func TestConformanceThroughGatewayStdio(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	g := startGatewayChecked(t, `
naming: {prefix: never}
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
`)
	if u, err := upstreamState(g, "everything"); err != nil || u.State != "up" || u.Tools == 0 {
		t.Fatalf("upstream not up before the suite: %+v %v", u, err)
	}
	assertFullConformance(t, "stdio upstream", conformance(t, g.URL))
}

// TestConformanceThroughGatewayHTTP: everything-server as a shared streamable HTTP
// upstream, started by the test on a loopback port.
func TestConformanceThroughGatewayHTTP(t *testing.T) {
	needGatewayBin(t)
	up := startEverythingHTTP(t)
	g := startGatewayChecked(t, `
naming: {prefix: never}
log: {level: debug, format: text}
servers:
  everything:
    type: streamable_http
    url: `+up+`
`)
	if u, err := upstreamState(g, "everything"); err != nil || u.State != "up" || u.Tools == 0 {
		t.Fatalf("upstream not up before the suite: %+v %v", u, err)
	}
	assertFullConformance(t, "streamable HTTP upstream", conformance(t, g.URL))
}
