package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// conformanceTimeout bounds one run of the conformance suite (the active suite takes
// about 2 s against a healthy server; a hung scenario must not hang the test).
const conformanceTimeout = 3 * time.Minute

// ConformanceReport is one run of `conformance server`, counted from the checks.json
// files it writes with -o (one per scenario, an array of checks with a status).
type ConformanceReport struct {
	Passed    int // checks with status SUCCESS
	Failed    int // checks with status FAILURE or WARNING, plus 1 per scenario without results
	Warnings  int // of Failed, the WARNING checks (the suite's exit code counts them as failures)
	Scenarios []ConformanceScenario
	Output    string // stdout+stderr of the suite
	ExitCode  int
	TimedOut  bool
	Dir       string // the -o directory
	// Failing counts the FAILURE and WARNING checks per "scenario/check id" (filled by
	// conformanceRequirements).
	Failing map[string]int

	// SummaryPassed and SummaryFailed are the suite's own "Total:" line (-1 if absent),
	// kept to cross-check the checks.json count.
	SummaryPassed, SummaryFailed int
}

// ConformanceScenario is one scenario's checks.
type ConformanceScenario struct {
	Name             string
	Passed, Failed   int
	Warnings         int
	Missing          bool     // the suite announced the scenario but wrote no checks.json
	FailedChecks     []string // "id: message" of each FAILURE/WARNING check
	AllInfoOrSkipped bool     // checks.json had only INFO/SKIPPED statuses
}

type conformanceCheck struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// conformance runs the MCP conformance suite's active server scenarios as a client
// against url and reports how many checks passed and failed, per scenario, with the
// suite's output. extra arguments go to `conformance server` (e.g. "--scenario", "ping").
func conformance(t testing.TB, url string, extra ...string) *ConformanceReport {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "conformance")
	args := []string{"server", "--url", url}
	if !hasArg(extra, "--scenario") && !hasArg(extra, "--suite") {
		args = append(args, "--suite", "active")
	}
	args = append(args, "-o", dir)
	args = append(args, extra...)
	res := runTool(t, conformanceTimeout, nil, nodeBin(t, "conformance"), args...)
	out := res.Stdout
	if res.Stderr != "" {
		out += "\n" + res.Stderr
	}
	// Keep the full output as a file next to the results, for a human after a failure.
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "output.txt"), []byte(out), 0o644)
	r := &ConformanceReport{Output: out, ExitCode: res.ExitCode, TimedOut: res.TimedOut, Dir: dir}
	if err := r.parse(); err != nil {
		t.Fatalf("conformance: %v\noutput:\n%s", err, out)
	}
	if res.TimedOut {
		t.Errorf("conformance: timed out after %s", conformanceTimeout)
	}
	if r.SummaryPassed >= 0 && (r.SummaryPassed != r.Passed || r.SummaryFailed != r.Failed-r.Warnings-r.missing()) {
		t.Logf("conformance: its summary says %d/%d checks passed, checks.json files say %d/%d",
			r.SummaryPassed, r.SummaryPassed+r.SummaryFailed, r.Passed, r.Passed+r.Failed)
	}
	return r
}

func hasArg(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

var (
	// server-<scenario>-2026-11-22T10-21-00-888Z
	resultDirRe = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)
	announcedRe = regexp.MustCompile(`(?m)^=== Running scenario: (\S+) ===$`)
	totalRe     = regexp.MustCompile(`(?m)^Total: (\d+) passed, (\d+) failed`)
)

func (r *ConformanceReport) missing() int {
	n := 0
	for _, s := range r.Scenarios {
		if s.Missing {
			n++
		}
	}
	return n
}

func (r *ConformanceReport) parse() error {
	r.SummaryPassed, r.SummaryFailed = -1, -1
	if m := totalRe.FindStringSubmatch(r.Output); m != nil {
		r.SummaryPassed, _ = strconv.Atoi(m[1])
		r.SummaryFailed, _ = strconv.Atoi(m[2])
	}
	byName := map[string]*ConformanceScenario{}
	files, _ := filepath.Glob(filepath.Join(r.Dir, "*", "checks.json"))
	for _, f := range files {
		base := filepath.Base(filepath.Dir(f))
		name := base
		if m := resultDirRe.FindStringSubmatch(base); m != nil {
			name = m[1]
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			return fmt.Errorf("%s: %v", f, err)
		}
		s := &ConformanceScenario{Name: name, AllInfoOrSkipped: true}
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				s.Passed++
				s.AllInfoOrSkipped = false
			case "FAILURE", "WARNING":
				s.Failed++
				if c.Status == "WARNING" {
					s.Warnings++
				}
				s.AllInfoOrSkipped = false
				msg := c.ErrorMessage
				if msg == "" {
					msg = c.Description
				}
				s.FailedChecks = append(s.FailedChecks, fmt.Sprintf("%s [%s]: %s", c.ID, c.Status, msg))
			}
		}
		byName[name] = s
	}
	for _, m := range announcedRe.FindAllStringSubmatch(r.Output, -1) {
		if _, ok := byName[m[1]]; !ok {
			byName[m[1]] = &ConformanceScenario{Name: m[1], Missing: true, Failed: 1,
				FailedChecks: []string{"(no checks.json written)"}}
		}
	}
	if len(byName) == 0 {
		return fmt.Errorf("no scenario ran (exit %d, timed out %v)", r.ExitCode, r.TimedOut)
	}
	for _, s := range byName {
		r.Scenarios = append(r.Scenarios, *s)
		r.Passed += s.Passed
		r.Failed += s.Failed
		r.Warnings += s.Warnings
	}
	sort.Slice(r.Scenarios, func(i, j int) bool { return r.Scenarios[i].Name < r.Scenarios[j].Name })
	return nil
}

// FailedScenarios lists the scenarios with a failed check, with their failed checks.
func (r *ConformanceReport) FailedScenarios() []string {
	var out []string
	for _, s := range r.Scenarios {
		if s.Failed > 0 {
			out = append(out, s.Name+": "+strings.Join(s.FailedChecks, "; "))
		}
	}
	return out
}

// Total is the number of checks counted.
func (r *ConformanceReport) Total() int { return r.Passed + r.Failed }
