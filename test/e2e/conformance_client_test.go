package e2e

// The MCP conformance suite's client scenarios (0.2.0-alpha.12, `conformance client`)
// judge mcpgw as the client of its upstreams: the suite starts a scenario server and runs
// confclient (./confclient) with its URL; confclient starts bin/mcpgw with that server as
// its one streamable HTTP upstream, connects to the gateway with the go-sdk client and
// makes the calls the scenario expects. Every non-auth scenario tagged 2025-11-25 or
// 2026-07-28 runs at each of those revisions it is tagged with (the gateway offers the
// upstream that revision), once with the upstream in its default mode (shared: one
// connection for every session) and once per_session; three run again with the driver's
// session on 2025-11-25, and those of 2026-07-28 again with the revision left to the
// gateway (clientRuns says which, clientRunGaps which do not run and why). Any check that
// fails or warns fails the test.

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
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// clientScenarios are the suite's non-auth client scenarios tagged 2025-11-25 or
// 2026-07-28, with those of their revisions (TestConformanceClientScenarioList holds the
// list against `conformance list`). sessionClient marks those whose server asks the
// client for input or reads headers the client may send itself: they run a second time
// with the driver's own session on 2025-11-25, so that the gateway, not a 2026-07-28
// client behind it, does that part (completing a multi round-trip with elicitation/create,
// relaying a session's elicitation, mirroring x-mcp-header arguments no client sent).
var clientScenarios = []struct {
	name          string
	versions      []string
	sessionClient bool
}{
	{"initialize", []string{"2025-11-25"}, false},
	{"tools_call", []string{"2025-11-25", "2026-07-28"}, false},
	{"elicitation-sep1034-client-defaults", []string{"2025-11-25"}, true},
	{"sse-retry", []string{"2025-11-25"}, false},
	{"request-metadata", []string{"2026-07-28"}, false},
	{"sep-2322-client-request-state", []string{"2026-07-28"}, true},
	{"http-standard-headers", []string{"2026-07-28"}, false},
	{"http-custom-headers", []string{"2026-07-28"}, true},
	{"http-invalid-tool-headers", []string{"2026-07-28"}, false},
	{"json-schema-ref-no-deref", []string{"2026-07-28"}, false},
	{"json-schema-2020-12-preservation", []string{"2025-11-25", "2026-07-28"}, false},
}

// clientModes are the upstream's instance modes each scenario runs in ("": the default,
// shared for HTTP).
var clientModes = []string{"", "per_session"}

// clientRunGaps are the runs (by clientRun.name) that do not run, and why.
var clientRunGaps = map[string]string{
	// The scenario server sends elicitation/create on its standalone GET stream, tied to
	// no request. On a connection every session shares, mcpgw relays a server request only
	// to the session it can tell for certain (docs/security.md), so it refuses this one
	// (internal/gateway/internal/dispatch/relay.go, serverRequest); per_session, the connection is the session's.
	"elicitation-sep1034-client-defaults/2025-11-25/shared":                   "a server request on the standalone stream has no session on a shared connection (docs/security.md)",
	"elicitation-sep1034-client-defaults/2025-11-25/shared/client-2025-11-25": "a server request on the standalone stream has no session on a shared connection (docs/security.md)",
	// A per_session connection is dialed at the session's first call, and opens its
	// standalone GET stream while that call is on the wire; the scenario server answers a
	// pending call on any GET that arrives, so the result may come on that stream before
	// the call's own stream ends, and then the retry the scenario measures never happens.
	"sse-retry/2025-11-25/per_session": "the scenario server answers the pending call on whichever GET stream comes first",
}

// clientRun is one run of a scenario: at revision version, with the upstream in mode
// ("": the default), offered that revision (or, negotiated, none: protocol_version
// unset, as most configs leave it), and the driver's session on revision client ("": its
// latest).
type clientRun struct {
	scenario, version, mode, client string
	negotiated                      bool
	// refuses: the scenario wants the client to refuse (an authorization that must not
	// go on), so the driver's exit with an error is the expected end.
	refuses bool
	// force runs a scenario the suite places on no spec's timeline (an extension).
	force bool
}

func (r clientRun) name() string {
	n := r.scenario + "/" + r.version + "/" + cmp.Or(r.mode, "shared")
	if r.negotiated {
		n += "/negotiated"
	}
	if r.client != "" {
		n += "/client-" + r.client
	}
	return n
}

// clientRuns are the runs of clientScenarios: each revision of a scenario in each mode,
// the sessionClient ones again with the driver on 2025-11-25, and those of 2026-07-28
// again (shared) with protocol_version unset.
func clientRuns() []clientRun {
	var runs []clientRun
	for _, sc := range clientScenarios {
		for _, version := range sc.versions {
			for _, mode := range clientModes {
				runs = append(runs, clientRun{scenario: sc.name, version: version, mode: mode})
				if sc.sessionClient {
					runs = append(runs, clientRun{scenario: sc.name, version: version, mode: mode, client: "2025-11-25"})
				}
			}
			if version == "2026-07-28" {
				runs = append(runs, clientRun{scenario: sc.name, version: version, negotiated: true})
			}
		}
	}
	return runs
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
	var lines scenarioLines
	t.Cleanup(func() { t.Logf("conformance client scenarios through mcpgw:\n  %s", lines.joined()) })
	for _, run := range clientRuns() {
		name := run.name()
		t.Run(name, func(t *testing.T) {
			if why, gap := clientRunGaps[name]; gap {
				lines.add(fmt.Sprintf("%-72s not run: %s", name, why))
				t.Skipf("not run: %s (clientRunGaps)", why)
			}
			t.Parallel()
			r := runClientScenario(t, script, driver, bin, run)
			lines.add(fmt.Sprintf("%-72s %2d/%-2d passed, %d failed, %d warnings", name, r.passed, r.passed+r.failed, r.failed, r.warnings))
		})
	}
}

// scenarioLines collects one summary line per scenario run. The runs are parallel
// subtests (each has its own suite process, driver, gateway and ports; go test's
// -parallel, GOMAXPROCS by default, bounds how many run at once), so lines are added
// under a lock and logged sorted, by the parent's cleanup, once every run has ended.
type scenarioLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *scenarioLines) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

func (l *scenarioLines) joined() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	sort.Strings(l.lines)
	return strings.Join(l.lines, "\n  ")
}

// TestConformanceClientRunGaps: every gap names a run that exists.
func TestConformanceClientRunGaps(t *testing.T) {
	names := map[string]bool{}
	for _, r := range clientRuns() {
		names[r.name()] = true
	}
	for name := range clientRunGaps {
		if !names[name] {
			t.Errorf("clientRunGaps names %q, which is no run", name)
		}
	}
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
	return buildE2ECommand(t, "confclient")
}

// buildE2ECommand builds the command in ./name (a main package of this directory) into a
// temp dir, bounded in time, and returns the binary's path.
func buildE2ECommand(t *testing.T, name string) string {
	t.Helper()
	goBin := peers.Command(t, "go")
	out := filepath.Join(t.TempDir(), name)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goBin, "build", "-o", out, "./"+name)
	build.Dir = e2eDir(t)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./%s: %v\n%s", name, err, b)
	}
	return out
}

// clientResult is one scenario run's checks.
type clientResult struct {
	passed, failed, warnings int
}

// runClientScenario runs `conformance client` for one scenario, and fails t on any failed
// or warning check, a driver that exits with an error (confclient checks what the calls
// answered), or no checks at all.
func runClientScenario(t *testing.T, script, driver, bin string, run clientRun) clientResult {
	t.Helper()
	work := t.TempDir() // confclient's config, state and mcpgw's log
	out := filepath.Join(t.TempDir(), "results")
	command := driver
	if run.mode != "" {
		command += " -mode " + run.mode
	}
	if run.client != "" {
		command += " -client-version " + run.client
	}
	if run.negotiated {
		command += " -negotiate"
	}
	env := []string{"MCPGW_BIN=" + bin, "MCPGW_CONFCLIENT_DIR=" + work}
	args := []string{script, "client", "--command", command, "--scenario", run.scenario, "--spec-version", run.version,
		"--timeout", fmt.Sprint(clientDriverTimeout.Milliseconds()), "-o", out}
	if run.force {
		args = append(args, "--force")
	}
	res := runTool(t, clientRunTimeout, env, node(t), args...)
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
	t.Logf("%s: %d/%d checks passed, %d warnings", run.name(), r.passed, r.passed+r.failed, r.warnings)
	if len(bad) > 0 {
		t.Errorf("%d checks failed or warned (results in %s):\n  %s", len(bad), out, strings.Join(bad, "\n  "))
	}
	if r.passed == 0 {
		t.Errorf("no check passed (%d checks)", len(checks))
	}
	if strings.Contains(output, "Client exited with code") && !run.refuses {
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
	// An auth/NAME scenario's results land one directory deeper (auth/NAME-TIMESTAMP).
	deeper, _ := filepath.Glob(filepath.Join(dir, "*", "*", "checks.json"))
	files = append(files, deeper...)
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
