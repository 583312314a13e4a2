package e2e

// The MCP conformance suite's client scenarios (0.2.0-alpha.12, `conformance client`)
// judge mcpgw as the client of its upstreams: the suite starts a scenario server and runs
// confclient (./confclient) with its URL; confclient starts bin/mcpgw with that server as
// its one streamable HTTP upstream, connects to the gateway with the go-sdk client and
// makes the calls the scenario expects. Every non-auth scenario tagged 2025-11-25 or
// 2026-07-28 runs at each of those revisions it is tagged with (the gateway offers the
// upstream that revision), once with the upstream in its default mode (shared: one
// connection for every session) and once per_session, but for the two pairs
// clientScenarioModeGaps names. Any check that fails or warns fails the test.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// clientScenarios are the suite's non-auth client scenarios tagged 2025-11-25 or
// 2026-07-28, with those of their revisions (TestConformanceClientScenarioList holds the
// list against `conformance list`).
var clientScenarios = []struct {
	name     string
	versions []string
}{
	{"initialize", []string{"2025-11-25"}},
	{"tools_call", []string{"2025-11-25", "2026-07-28"}},
	{"elicitation-sep1034-client-defaults", []string{"2025-11-25"}},
	{"sse-retry", []string{"2025-11-25"}},
	{"request-metadata", []string{"2026-07-28"}},
	{"sep-2322-client-request-state", []string{"2026-07-28"}},
	{"http-standard-headers", []string{"2026-07-28"}},
	{"http-custom-headers", []string{"2026-07-28"}},
	{"http-invalid-tool-headers", []string{"2026-07-28"}},
	{"json-schema-ref-no-deref", []string{"2026-07-28"}},
	{"json-schema-2020-12-preservation", []string{"2025-11-25", "2026-07-28"}},
}

// clientModes are the upstream's instance modes each scenario runs in ("": the default,
// shared for HTTP).
var clientModes = []string{"", "per_session"}

// clientScenarioModeGaps are the scenario/mode pairs that do not run, and why: what they
// would judge is the scenario server's choice, not the gateway's.
var clientScenarioModeGaps = map[string]string{
	// The scenario server sends elicitation/create on its standalone GET stream, tied to
	// no request. On a connection every session shares, mcpgw relays a server request only
	// to the session it can tell for certain (docs/security.md), so it refuses this one
	// (gateway/relay.go, serverRequest); per_session, the connection is the session's.
	"elicitation-sep1034-client-defaults/": "a server request on the standalone stream has no session on a shared connection (docs/security.md)",
	// A per_session connection is dialed at the session's first call, and opens its
	// standalone GET stream while that call is on the wire; the scenario server answers a
	// pending call on any GET that arrives, so the result comes on that stream before the
	// call's own stream ends, and the retry the scenario measures never happens.
	"sse-retry/per_session": "the scenario server answers the pending call on the per-session connection's first GET stream",
}

// clientRunTimeout bounds one scenario: the suite's --timeout for the driver is
// clientDriverTimeout, and the driver bounds itself below that (confclient runLimit).
const (
	clientRunTimeout    = 90 * time.Second
	clientDriverTimeout = 60 * time.Second
)

func TestConformanceClient(t *testing.T) {
	bin := needGatewayBin(t)
	script := conformanceNextScript(t)
	driver := buildConfClient(t)
	type outcome struct {
		name                      string
		passed, total, warn, fail int
	}
	var outcomes []outcome
	for _, sc := range clientScenarios {
		for _, version := range sc.versions {
			for _, mode := range clientModes {
				if why, gap := clientScenarioModeGaps[sc.name+"/"+mode]; gap {
					t.Logf("%s %s mode %q: not run: %s", sc.name, version, mode, why)
					continue
				}
				name := sc.name + "/" + version + "/" + cmp.Or(mode, "default")
				t.Run(name, func(t *testing.T) {
					r := runClientScenario(t, script, driver, bin, sc.name, version, mode)
					outcomes = append(outcomes, outcome{name, r.passed, r.passed + r.failed, r.warnings, r.failed})
				})
			}
		}
	}
	var lines []string
	for _, o := range outcomes {
		lines = append(lines, fmt.Sprintf("%-62s %2d/%-2d passed, %d failed, %d warnings", o.name, o.passed, o.total, o.fail, o.warn))
	}
	t.Logf("conformance client scenarios through mcpgw:\n  %s", strings.Join(lines, "\n  "))
}

// conformanceNextScript is the 0.2.0-alpha.12 suite's entry point.
func conformanceNextScript(t *testing.T) string {
	t.Helper()
	node(t) // the suite needs Node 22
	script := filepath.Join(e2eDir(t), "node_modules", "conformance-next", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("conformance 0.2.0-alpha.12 missing (run scripts/peers.sh): %v", err)
	}
	return script
}

// buildConfClient builds ./confclient into a temp dir, bounded in time.
func buildConfClient(t *testing.T) string {
	t.Helper()
	goBin := peers.Command(t, "go")
	out := filepath.Join(t.TempDir(), "confclient")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", out, "./confclient")
	build.Dir = e2eDir(t)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./confclient: %v\n%s", err, b)
	}
	return out
}

// clientResult is one scenario run's checks.
type clientResult struct {
	passed, failed, warnings int
}

// runClientScenario runs `conformance client` for one scenario at one revision with the
// upstream in mode, and fails t on any failed or warning check, a driver that exits with
// an error (confclient checks what the calls answered), or no checks at all.
func runClientScenario(t *testing.T, script, driver, bin, scenario, version, mode string) clientResult {
	t.Helper()
	work := t.TempDir() // confclient's config, state and mcpgw's log
	out := filepath.Join(t.TempDir(), "results")
	command := driver
	if mode != "" {
		command += " -mode " + mode
	}
	env := []string{"MCPGW_BIN=" + bin, "MCPGW_CONFCLIENT_DIR=" + work}
	res := runTool(t, clientRunTimeout, env, node(t), script, "client",
		"--command", command, "--scenario", scenario, "--spec-version", version,
		"--timeout", fmt.Sprint(clientDriverTimeout.Milliseconds()), "-o", out)
	output := res.Stdout + "\n" + res.Stderr
	defer func() {
		if t.Failed() {
			t.Logf("--- conformance client output ---\n%s", output)
			logs, _ := filepath.Glob(filepath.Join(work, "mcpgw-*.log"))
			for _, l := range logs {
				t.Logf("--- tail of %s ---\n%s", l, tailFile(l, logTailBytes))
			}
		}
	}()
	if res.TimedOut {
		t.Fatalf("conformance client timed out after %s", clientRunTimeout)
	}
	checks := readClientChecks(t, out)
	var r clientResult
	var bad []string
	for _, c := range checks {
		switch c.Status {
		case "SUCCESS":
			r.passed++
		case "FAILURE":
			r.failed++
			bad = append(bad, fmt.Sprintf("%s %s (%s): %s", c.Status, c.ID, c.Name, c.ErrorMessage))
		case "WARNING":
			r.warnings++
			bad = append(bad, fmt.Sprintf("%s %s (%s): %s", c.Status, c.ID, c.Name, c.ErrorMessage))
		}
	}
	t.Logf("%s at %s, upstream mode %q: %d/%d checks passed, %d warnings", scenario, version, cmp.Or(mode, "default"),
		r.passed, r.passed+r.failed, r.warnings)
	if len(bad) > 0 {
		t.Errorf("%d checks failed or warned (results in %s):\n  %s", len(bad), out, strings.Join(bad, "\n  "))
	}
	if r.passed == 0 {
		t.Errorf("no check passed (%d checks)", len(checks))
	}
	if strings.Contains(output, "Client exited with code") {
		t.Errorf("confclient exited with an error: a call through mcpgw failed or answered something else (output below)")
	}
	if res.ExitCode != 0 {
		t.Errorf("conformance client exited %d", res.ExitCode)
	}
	return r
}

// readClientChecks reads the one checks.json a `conformance client` run wrote under dir.
func readClientChecks(t *testing.T, dir string) []conformanceCheck {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if len(files) != 1 {
		t.Fatalf("want one checks.json under %s, found %d", dir, len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []conformanceCheck
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	return checks
}

// clientScenarioRe is a client scenario line of `conformance list`: "  - NAME [TAGS]".
var clientScenarioRe = regexp.MustCompile(`^\s+- (\S+) \[([^\]]*)\]$`)

// TestConformanceClientScenarioList: clientScenarios is exactly the suite's non-auth
// client scenarios tagged 2025-11-25 or 2026-07-28, with those tags, so that a suite that
// adds one (or retags one) fails here until TestConformanceClient runs it.
func TestConformanceClientScenarioList(t *testing.T) {
	needPeers(t)
	script := conformanceNextScript(t)
	res := runTool(t, time.Minute, nil, node(t), script, "list")
	if res.ExitCode != 0 {
		t.Fatalf("conformance list exited %d: %s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	section := ""
	var got []string
	for _, line := range strings.Split(res.Stdout, "\n") {
		if !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":") {
			section = line
			continue
		}
		m := clientScenarioRe.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(section, "Client scenarios") || strings.HasPrefix(m[1], "auth/") {
			continue
		}
		var versions []string
		for _, v := range strings.Split(m[2], ",") {
			if v == "2025-11-25" || v == "2026-07-28" {
				versions = append(versions, v)
			}
		}
		if len(versions) > 0 {
			got = append(got, m[1]+" "+strings.Join(versions, ","))
		}
	}
	var want []string
	for _, sc := range clientScenarios {
		want = append(want, sc.name+" "+strings.Join(sc.versions, ","))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the suite's non-auth client scenarios of 2025-11-25 and 2026-07-28:\n  %s\nclientScenarios:\n  %s\n(conformance list:\n%s)",
			strings.Join(got, "\n  "), strings.Join(want, "\n  "), res.Stdout)
	}
}
