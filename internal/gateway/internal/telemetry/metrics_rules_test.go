package telemetry_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
)

// rulesFile is the shipped Prometheus rules (docs/metrics.md).
const rulesFile = "../../../../deploy/prometheus/mcpgw-rules.yml"

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record string `yaml:"record"`
			Alert  string `yaml:"alert"`
			Expr   string `yaml:"expr"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// seriesRE finds the gateway's series (mcpgw_…, process_…, go_…) in a PromQL expression;
// recordRE finds recording rules' names (mcpgw:…).
var (
	seriesRE = regexp.MustCompile(`\b(?:mcpgw|process|go)_[a-zA-Z0-9_]+`)
	recordRE = regexp.MustCompile(`\bmcpgw:[a-zA-Z0-9_:]+`)
)

// rulesSeries returns, per rule, the series and recording rules its expression names.
func rulesSeries(t *testing.T, b []byte) (uses map[string][]string, recorded map[string]bool) {
	t.Helper()
	var f ruleFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	uses, recorded = map[string][]string{}, map[string]bool{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			name := r.Record + r.Alert
			if strings.TrimSpace(r.Expr) == "" {
				t.Errorf("%s: rule %q has no expr", rulesFile, name)
			}
			if r.Record != "" {
				recorded[r.Record] = true
			}
			// Label values and strings may hold anything: only the names outside quotes count.
			expr := regexp.MustCompile(`"[^"]*"`).ReplaceAllString(r.Expr, `""`)
			uses[name] = append(seriesRE.FindAllString(expr, -1), recordRE.FindAllString(expr, -1)...)
		}
	}
	if len(uses) == 0 {
		t.Fatalf("%s has no rules", rulesFile)
	}
	return uses, recorded
}

// servedNames is every series name the gateway's registry serves: the mcpgw_ series from
// their descriptors (a vector with no children yet is not gathered), histograms with their
// _bucket, _sum and _count, and the Go and process collectors' series as gathered.
func servedNames(t *testing.T) map[string]bool {
	t.Helper()
	m := telemetry.NewMetrics("all")
	names := map[string]bool{}
	fqRE := regexp.MustCompile(`fqName: "([^"]+)"`)
	ch := make(chan *prometheus.Desc, 64)
	for _, c := range m.Collectors() {
		go func() { c.Describe(ch); ch <- nil }()
		for d := <-ch; d != nil; d = <-ch {
			n := fqRE.FindStringSubmatch(d.String())
			if n == nil {
				t.Fatalf("cannot read descriptor %s", d)
			}
			names[n[1]] = true
			if _, ok := c.(*prometheus.HistogramVec); ok {
				names[n[1]+"_bucket"], names[n[1]+"_sum"], names[n[1]+"_count"] = true, true, true
			}
		}
	}
	mfs, err := m.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	return names
}

// TestRulesNameRealSeries: every series the shipped rules use is one the gateway serves
// (and every mcpgw: recording rule an alert uses is defined), so a renamed metric cannot
// leave an alert that silently never fires.
func TestRulesNameRealSeries(t *testing.T) {
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	uses, recorded := rulesSeries(t, b)
	served := servedNames(t)
	if !served["process_resident_memory_bytes"] || !served["mcpgw_tool_call_duration_seconds_bucket"] {
		t.Fatalf("servedNames misses series it must know: %d names", len(served))
	}
	n := 0
	for rule, names := range uses {
		for _, name := range names {
			n++
			if strings.Contains(name, ":") {
				if !recorded[name] {
					t.Errorf("rule %s uses %s, which no recording rule in %s defines", rule, name, rulesFile)
				}
			} else if !served[name] {
				t.Errorf("rule %s uses %s, which the gateway does not serve on /metrics", rule, name)
			}
		}
	}
	if n == 0 {
		t.Fatalf("found no series names in %s", rulesFile)
	}
}

// TestRulesCheckCatchesUnknownSeries: the check above fails on a rule naming a series the
// gateway does not serve (a renamed metric), and on an undefined recording rule.
func TestRulesCheckCatchesUnknownSeries(t *testing.T) {
	uses, recorded := rulesSeries(t, []byte(`
groups:
  - name: g
    rules:
      - alert: Renamed
        expr: rate(mcpgw_tool_calls_count{outcome="mcpgw_not_a_series"}[5m]) > mcpgw:undefined
`))
	served := servedNames(t)
	got := uses["Renamed"]
	if len(got) != 2 || got[0] != "mcpgw_tool_calls_count" || got[1] != "mcpgw:undefined" {
		t.Fatalf("names found: %v, want [mcpgw_tool_calls_count mcpgw:undefined] (quoted label values ignored)", got)
	}
	if served[got[0]] || recorded[got[1]] {
		t.Fatalf("%s served %v, %s recorded %v: both should be unknown", got[0], served[got[0]], got[1], recorded[got[1]])
	}
}
