package e2e

// The Tasks extension (io.modelcontextprotocol/tasks) judged by the conformance suite
// 0.2.0-alpha.12 (`server --suite all`, its tasks-* scenarios): directly against
// ./taskpeer, the peer that implements the extension with the scenarios' fixtures, and
// through mcpgw with that peer as its streamable HTTP upstream. Every tasks-* check must
// pass directly, and every check that passes directly must pass through mcpgw.

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// tasksScenarioPrefix names the suite's Tasks extension scenarios.
const tasksScenarioPrefix = "tasks-"

// taskPeerTools is how many tools taskpeer lists (the fixtures the scenarios name).
const taskPeerTools = 7

// startTaskPeer builds and starts ./taskpeer on a loopback port and returns its URL.
func startTaskPeer(t *testing.T) string {
	t.Helper()
	bin := buildE2ECommand(t, "taskpeer")
	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
		p := startProcess(t, "taskpeer", bin, []string{"-http", addr}, nil)
		if lastErr = waitPort(p, addr, readyTimeout); lastErr == nil {
			return "http://" + addr + "/mcp"
		}
		if !addrInUse(p) {
			break
		}
	}
	t.Fatalf("taskpeer: %v", lastErr)
	return ""
}

// tasksOnly keeps the tasks-* scenarios' entries of a scenario/check id map.
func tasksOnly(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range m {
		if strings.HasPrefix(k, tasksScenarioPrefix) {
			out[k] = n
		}
	}
	return out
}

// total is the sum of a count map.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// checkCell is one run's word on a check: how many times it passed and failed.
func checkCell(passed, failed int) string {
	switch {
	case passed > 0 && failed == 0:
		return "pass"
	case passed == 0 && failed > 0:
		return "FAIL"
	case passed > 0:
		return fmt.Sprintf("%d pass, %d FAIL", passed, failed)
	}
	return "-"
}

// tasksTable is the per-check table of the tasks-* scenarios: direct against through.
func tasksTable(direct, directFailing, through, throughFailing map[string]int) string {
	keys := map[string]bool{}
	for _, m := range []map[string]int{direct, directFailing, through, throughFailing} {
		for k := range tasksOnly(m) {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var b strings.Builder
	fmt.Fprintf(&b, "%-90s %-8s %s\n", "scenario/check", "direct", "through mcpgw")
	for _, k := range sorted {
		fmt.Fprintf(&b, "%-90s %-8s %s\n", k, checkCell(direct[k], directFailing[k]), checkCell(through[k], throughFailing[k]))
	}
	return b.String()
}

// failureOf is what the report says of the failed check "scenario/id" ("" when it has no
// word on it, e.g. a check the run never reached).
func failureOf(r *ConformanceReport, key string) string {
	scenario, id, _ := strings.Cut(key, "/")
	for _, s := range r.Scenarios {
		if s.Name != scenario {
			continue
		}
		for _, f := range s.FailedChecks {
			if strings.HasPrefix(f, id+" [") {
				return " (" + f + ")"
			}
		}
	}
	return ""
}

// scenariosWithoutScore are the tasks-* scenarios that ran and scored no check (only
// SKIPPED or INFO), with the suite's word on why.
func scenariosWithoutScore(r *ConformanceReport) []string {
	var out []string
	for _, s := range r.Scenarios {
		if strings.HasPrefix(s.Name, tasksScenarioPrefix) && s.AllInfoOrSkipped {
			out = append(out, s.Name)
		}
	}
	return out
}

// TestConformanceTasksThroughGateway: the suite's tasks-* checks against taskpeer, then
// through mcpgw in front of it, compared check by check (docs/testing.md, "The Tasks
// extension").
func TestConformanceTasksThroughGateway(t *testing.T) {
	needGatewayBin(t)
	url := startTaskPeer(t)
	direct, dr := conformanceNextRun(t, url, "--suite", "all")
	direct, directFailing := tasksOnly(direct), tasksOnly(dr.Failing)
	scenarios := map[string]bool{}
	for k := range direct {
		scenarios[strings.SplitN(k, "/", 2)[0]] = true
	}
	t.Logf("conformance --suite all, tasks-* directly against taskpeer: %d checks passed in %d scenarios, %d failed; no scored check in %v",
		total(direct), len(scenarios), total(directFailing), scenariosWithoutScore(dr))
	// The peer is the yardstick: it must pass every tasks-* check the suite scores, in
	// every scenario that scores one (tasks-status-notifications is all SKIPPED in this
	// version of the suite).
	if len(directFailing) > 0 || len(scenarios) < 9 {
		t.Errorf("taskpeer fails tasks-* checks directly, or too few scenarios passed (%d, want 9; results in %s):\n%s",
			len(scenarios), dr.Dir, tasksTable(direct, directFailing, nil, nil))
	}

	g := startGatewayChecked(t, `
naming: {prefix: never}
log: {level: debug, format: text}
servers:
  tasks:
    type: streamable_http
    url: `+url+`
    max_concurrency: 0
`)
	// The suite's first scenario must meet the peer's tools, not an upstream still starting.
	if desc, ok := waitFor(readyTimeout, func() (bool, string) {
		u, err := upstreamState(g, "tasks")
		return err == nil && u.State == "up" && u.Tools == taskPeerTools, fmt.Sprintf("%+v %v", u, err)
	}); !ok {
		t.Fatalf("the taskpeer upstream is not up with its %d tools: %s", taskPeerTools, desc)
	}
	through, gr := conformanceNextRun(t, g.URL, "--suite", "all")
	through, throughFailing := tasksOnly(through), tasksOnly(gr.Failing)
	t.Logf("tasks-* checks, direct against taskpeer and through mcpgw (results in %s and %s):\n%s",
		dr.Dir, gr.Dir, tasksTable(direct, directFailing, through, throughFailing))
	var lost []string
	for k, n := range direct {
		if through[k] < n {
			lost = append(lost, fmt.Sprintf("%s: %d pass directly, %d through mcpgw%s", k, n, through[k], failureOf(gr, k)))
		}
	}
	sort.Strings(lost)
	t.Logf("tasks-* checks: %d pass directly, %d through mcpgw; %d of those passing directly lose through mcpgw",
		total(direct), total(through), len(lost))
	if len(lost) == 0 {
		return
	}
	t.Errorf("tasks-* checks that pass directly but not through mcpgw:\n  %s", strings.Join(lost, "\n  "))
}
