package e2e

// The MCP conformance suite's authorization scenarios (auth/*, 0.2.0-alpha.12) judge mcpgw
// as the OAuth client of an upstream: confclient configures the scenario server as an
// OAuth upstream with one server-wide grant (servers.scenario.auth, per: server), opens
// the consent URL the gateway names as a person would (the scenario's authorization
// server approves without asking, and sends the browser to the gateway's callback), and
// makes the scenario's calls through the gateway. Every scenario runs at each revision of
// 2025-11-25 and 2026-07-28 it is tagged with (the 2025-03-26 back-compat ones at theirs,
// the extensions at 2025-11-25); authScenarioGaps says which do not run and why. The
// enterprise-managed authorization extension is per user instead: the driver calls with
// the scenario's ID token, which the gateway exchanges (grant token_exchange, id_jag).

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// authScenarios are the suite's auth/* client scenarios mcpgw runs, with the revisions
// they run at; refuses marks those where a correct client refuses to go on.
var authScenarios = []struct {
	name     string
	versions []string
	refuses  bool
}{
	{"auth/metadata-default", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/metadata-var1", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/metadata-var2", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/metadata-var3", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/basic-cimd", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/scope-from-www-authenticate", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/scope-from-scopes-supported", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/scope-omitted-when-undefined", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/scope-step-up", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/scope-retry-limit", []string{"2025-11-25", "2026-07-28"}, true},
	{"auth/token-endpoint-auth-basic", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/token-endpoint-auth-post", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/token-endpoint-auth-none", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/pre-registration", []string{"2025-11-25", "2026-07-28"}, false},
	{"auth/2025-03-26-oauth-metadata-backcompat", []string{"2025-03-26"}, false},
	{"auth/2025-03-26-oauth-endpoint-fallback", []string{"2025-03-26"}, false},
	{"auth/resource-mismatch", []string{"2026-07-28"}, true},
	{"auth/offline-access-scope", []string{"2026-07-28"}, false},
	{"auth/offline-access-not-supported", []string{"2026-07-28"}, false},
	{"auth/authorization-server-migration", []string{"2026-07-28"}, false},
	{"auth/iss-supported", []string{"2026-07-28"}, false},
	{"auth/iss-not-advertised", []string{"2026-07-28"}, false},
	{"auth/iss-supported-missing", []string{"2026-07-28"}, true},
	{"auth/iss-wrong-issuer", []string{"2026-07-28"}, true},
	{"auth/iss-unexpected", []string{"2026-07-28"}, true},
	{"auth/iss-normalized", []string{"2026-07-28"}, true},
	{"auth/metadata-issuer-mismatch", []string{"2026-07-28"}, true},
	{"auth/client-credentials-basic", []string{"2025-11-25"}, false},
	{"auth/client-credentials-jwt", []string{"2025-11-25"}, false},
	{"auth/enterprise-managed-authorization", []string{"2025-11-25"}, false},
}

// authExtensions are the extension scenarios among authScenarios.
var authExtensions = map[string]bool{"auth/client-credentials-basic": true, "auth/client-credentials-jwt": true,
	"auth/enterprise-managed-authorization": true}

// authScenarioGaps are the suite's auth/* scenarios that do not run, and why.
var authScenarioGaps = map[string]string{
	"auth/dpop":           "an extension (DPoP-bound tokens) mcpgw does not implement",
	"auth/dpop-nonce":     "an extension (DPoP-bound tokens) mcpgw does not implement",
	"auth/wif-jwt-bearer": "an extension (workload identity assertions) mcpgw does not implement",
}

func TestConformanceClientAuth(t *testing.T) {
	bin := needGatewayBin(t)
	script := conformanceNextScript(t)
	driver := buildConfClient(t)
	var lines scenarioLines
	t.Cleanup(func() { t.Logf("conformance authorization scenarios through mcpgw:\n  %s", lines.joined()) })
	for _, sc := range authScenarios {
		for _, version := range sc.versions {
			// The suite runs an extension only when forced: it is on no spec's timeline.
			run := clientRun{scenario: sc.name, version: version, refuses: sc.refuses, force: authExtensions[sc.name]}
			name := sc.name + "/" + version
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				r := runClientScenario(t, script, driver, bin, run)
				lines.add(fmt.Sprintf("%-56s %2d/%-2d passed, %d failed, %d warnings", name, r.passed, r.passed+r.failed, r.failed, r.warnings))
			})
		}
	}
}

// authBackcompatScenarios are the 2025-03-26 back-compat scenarios run again with suite
// 0.1.16, whose scenario server differs from 0.2.0's: in oauth-metadata-backcompat it
// publishes the authorization server metadata at the origin's root with an issuer that
// has a path (http://localhost:PORT/oauth), which that revision allows (internal/oauth/discovery.go,
// discoverLegacyServer).
var authBackcompatScenarios = []string{"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"}

func TestConformanceClientAuthBackcompat0116(t *testing.T) {
	bin := needGatewayBin(t)
	node(t) // the suite needs Node 22
	script := filepath.Join(e2eDir(t), "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("conformance 0.1.16 missing (run scripts/peers.sh): %v", err)
	}
	driver := buildConfClient(t)
	for _, name := range authBackcompatScenarios {
		t.Run(name, func(t *testing.T) {
			runClientScenario(t, script, driver, bin, clientRun{scenario: name, version: "2025-03-26"})
		})
	}
}

// TestConformanceClientAuthScenarioList: every auth/* scenario of the suite runs here or
// is a gap with a reason, at exactly the revisions of 2025-11-25 and 2026-07-28 it is
// tagged with, so that a suite that adds or retags one fails here until it runs.
func TestConformanceClientAuthScenarioList(t *testing.T) {
	needPeers(t)
	script := conformanceNextScript(t)
	res := runTool(t, time.Minute, nil, node(t), script, "list")
	if res.ExitCode != 0 {
		t.Fatalf("conformance list exited %d: %s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	tags := map[string]string{}
	for _, line := range strings.Split(res.Stdout, "\n") {
		if m := clientScenarioRe.FindStringSubmatch(line); m != nil && strings.HasPrefix(m[1], "auth/") {
			tags[m[1]] = m[2]
		}
	}
	if len(tags) == 0 {
		t.Fatalf("conformance list names no auth/* scenario:\n%s", res.Stdout)
	}
	ran := map[string]bool{}
	for _, sc := range authScenarios {
		ran[sc.name] = true
		tag, ok := tags[sc.name]
		if !ok {
			t.Errorf("%s runs here but the suite has no such scenario", sc.name)
			continue
		}
		var want []string
		for _, v := range strings.Split(tag, ",") {
			if v == "2025-11-25" || v == "2026-07-28" {
				want = append(want, v)
			}
		}
		switch {
		case len(want) == 0 && strings.Contains(tag, "2025-03-26"):
			want = []string{"2025-03-26"}
		case len(want) == 0 && tag == "extension":
			want = []string{"2025-11-25"}
		}
		if !slices.Equal(want, sc.versions) {
			t.Errorf("%s is tagged [%s]: runs at %v, want %v", sc.name, tag, sc.versions, want)
		}
	}
	for name := range tags {
		if _, gap := authScenarioGaps[name]; !ran[name] && !gap {
			t.Errorf("the suite's %s [%s] neither runs here nor is a gap", name, tags[name])
		}
		if _, gap := authScenarioGaps[name]; ran[name] && gap {
			t.Errorf("%s both runs and is a gap", name)
		}
	}
	for name := range authScenarioGaps {
		if _, ok := tags[name]; !ok {
			t.Errorf("gap %s names no scenario of the suite", name)
		}
	}
}
