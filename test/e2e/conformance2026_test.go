package e2e

// The MCP conformance suite 0.2.0-alpha.12 (npm alias conformance-next, beside 0.1.16)
// with --requirements 2026-07-28: the stateless revision's scenarios, run directly against
// the go-sdk everything-server (which serves 2026-07-28 itself) and through mcpgw with the
// same server as a stdio upstream, driven once on 2025-11-25 (mixed eras: the gateway owns
// the upstream session) and once on 2026-07-28. mcpgw must pass, per scenario and check
// id, at least as many checks as pass directly, except the gaps listed in knownGaps2026
// (docs/protocol.md says why each one remains).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// knownGaps2026 are checks that pass directly and not through mcpgw yet, per upstream
// revision: scenario/check id → how many passes mcpgw may lack, and why.
var knownGaps2026 = map[string]map[string]struct {
	n   int
	why string
}{
	"2025-11-25": {
		// The upstream names its input request "user_name"; on a 2025-11-25 session it
		// comes as an elicitation/create request whose key is lost, so mcpgw names it, and
		// the scenario's retry answers a key mcpgw never asked.
		"input-required-result-basic-elicitation/sep-2322-elicitation-incomplete": {1, "input request keys of a session-era upstream"},
		"input-required-result-basic-elicitation/sep-2322-elicitation-complete":   {1, "input request keys of a session-era upstream"},
	},
}

// conformanceNext runs `conformance server --requirements 2026-07-28` of the 0.2.0 alpha
// against url and returns the SUCCESS count per scenario/check id, with the report.
func conformanceNext(t *testing.T, url string) (map[string]int, *ConformanceReport) {
	t.Helper()
	return conformanceRequirements(t, url, "2026-07-28")
}

// conformanceRequirements is conformanceNext for any revision's requirements.
func conformanceRequirements(t *testing.T, url, revision string) (map[string]int, *ConformanceReport) {
	t.Helper()
	return conformanceNextRun(t, url, "--requirements", revision)
}

// conformanceNextRun runs `conformance server` of the 0.2.0 alpha against url with the
// scenario selection in args (e.g. "--requirements", "2026-07-28" or "--suite", "all")
// and returns the SUCCESS count per scenario/check id, with the report.
func conformanceNextRun(t *testing.T, url string, args ...string) (map[string]int, *ConformanceReport) {
	t.Helper()
	script := filepath.Join(e2eDir(t), "node_modules", "conformance-next", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("conformance 0.2.0-alpha.12 missing (run scripts/peers.sh): %v", err)
	}
	dir := filepath.Join(t.TempDir(), "conformance-2026")
	argv := append(append([]string{script, "server", "--url", url}, args...), "-o", dir)
	res := runTool(t, conformanceTimeout, nil, node(t), argv...)
	out := res.Stdout + "\n" + res.Stderr
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "output.txt"), []byte(out), 0o644)
	r := &ConformanceReport{Output: out, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Dir: dir}
	if err := r.parse(); err != nil {
		t.Fatalf("conformance: %v\noutput:\n%s", err, out)
	}
	if res.TimedOut {
		t.Fatalf("conformance timed out after %s", conformanceTimeout)
	}
	passed := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		if m := resultDirRe.FindStringSubmatch(name); m != nil {
			name = m[1]
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed[name+"/"+c.ID]++
			case "FAILURE", "WARNING":
				if r.Failing == nil {
					r.Failing = map[string]int{}
				}
				r.Failing[name+"/"+c.ID]++
			}
		}
	}
	return passed, r
}

func TestConformance2026ThroughGateway(t *testing.T) {
	needGatewayBin(t)
	bin := everythingServer(t)
	// Direct: the fixture's HTTP mode is stateless by default, which serves 2026-07-28.
	var direct map[string]int
	var dr *ConformanceReport
	for attempt := 1; attempt <= startAttempts; attempt++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		p := startProcess(t, "everything-server-2026", bin, []string{"-http", addr}, nil)
		if err := waitPort(p, addr, readyTimeout); err != nil {
			if addrInUse(p) {
				continue
			}
			t.Fatalf("everything-server: %v", err)
		}
		direct, dr = conformanceNext(t, "http://"+addr+"/mcp")
		break
	}
	if dr == nil {
		t.Fatal("everything-server did not start")
	}
	for _, upstreamVersion := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("upstream "+upstreamVersion, func(t *testing.T) {
			g := startGatewayChecked(t, `
naming: {prefix: never}
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
    max_concurrency: 0
    protocol_version: "`+upstreamVersion+`"
`)
			through, gr := conformanceNext(t, g.URL)
			t.Logf("conformance 2026-07-28 direct: %d passed, %d failed; through mcpgw (upstream on %s): %d passed, %d failed",
				dr.Passed, dr.Failed, upstreamVersion, gr.Passed, gr.Failed)
			gaps := knownGaps2026[upstreamVersion]
			var lost, gapsClosed []string
			keys := make([]string, 0, len(direct))
			for k := range direct {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				missing := direct[k] - through[k]
				gap := gaps[k]
				if missing > gap.n {
					lost = append(lost, fmt.Sprintf("%s: %d pass directly, %d through mcpgw", k, direct[k], through[k]))
				} else if missing < gap.n {
					gapsClosed = append(gapsClosed, k)
				}
			}
			if len(lost) > 0 {
				t.Errorf("checks that pass directly but not through mcpgw (results in %s):\n  %s", gr.Dir, strings.Join(lost, "\n  "))
			}
			if len(gapsClosed) > 0 {
				t.Logf("known gaps that now pass (update knownGaps2026 and docs/protocol.md): %v", gapsClosed)
			}
		})
	}
}

// sessionToolsOnStateless are the 0.1.16 scenarios whose everything-server tools ask for
// sampling or elicitation with a server-to-client request: on a 2026-07-28 session the
// server itself refuses to send one ("return an InputRequests map instead"), so these
// fail against that server on the stateless revision whoever the client is.
var sessionToolsOnStateless = map[string]bool{
	"tools-call-sampling": true, "tools-call-elicitation": true,
	"elicitation-sep1034-defaults": true, "elicitation-sep1330-enums": true,
}

// TestConformanceSessionClientStatelessUpstream: the session-era suite (0.1.16, active)
// through mcpgw in front of the everything-server driven on 2026-07-28 (discovery, _meta
// per request, listen for list changes and resource subscriptions, the session's log level
// per request): everything passes but the scenarios of tools written for session requests.
func TestConformanceSessionClientStatelessUpstream(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	g := startGatewayChecked(t, `
naming: {prefix: never}
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
    max_concurrency: 0
    protocol_version: "2026-07-28"
`)
	r := conformance(t, g.URL)
	t.Logf("conformance 0.1.16 through mcpgw, upstream on 2026-07-28: %d/%d checks passed in %d scenarios", r.Passed, r.Total(), len(r.Scenarios))
	for _, sc := range r.Scenarios {
		if sc.Failed > 0 && !sessionToolsOnStateless[sc.Name] {
			t.Errorf("scenario %s failed: %v (results in %s)", sc.Name, sc.FailedChecks, r.Dir)
		}
	}
	passing := 0
	for _, sc := range r.Scenarios {
		if sc.Failed == 0 && sc.Passed > 0 {
			passing++
		}
	}
	if want := activeScenarios - len(sessionToolsOnStateless); passing < want || len(r.Scenarios) != activeScenarios {
		t.Errorf("%d of %d scenarios passed, want %d of %d", passing, len(r.Scenarios), want, activeScenarios)
	}
}
