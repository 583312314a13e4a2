package telemetry_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/telemetry"
)

// TestMetricsDocMatchesRegistry: docs/metrics.md names exactly the mcpgw_ series the
// gateway registers, each with exactly its labels, so the two cannot drift apart again.
func TestMetricsDocMatchesRegistry(t *testing.T) {
	b, err := os.ReadFile("../../../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	tick := regexp.MustCompile("`([a-z_:]+)`")
	documented := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `mcpgw_") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			t.Fatalf("malformed row: %s", line)
		}
		var labels []string
		for _, m := range tick.FindAllStringSubmatch(cells[2], -1) {
			labels = append(labels, m[1])
		}
		slices.Sort(labels)
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			documented[m[1]] = labels
		}
	}

	descRE := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}`)
	registered := map[string][]string{}
	ch := make(chan *prometheus.Desc, 64)
	for _, c := range telemetry.NewMetrics("all").Collectors() {
		go func() { c.Describe(ch); ch <- nil }()
		for d := <-ch; d != nil; d = <-ch {
			m := descRE.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("cannot read descriptor %s", d)
			}
			var labels []string
			if m[2] != "" {
				labels = strings.Split(m[2], ",")
			}
			slices.Sort(labels)
			registered[m[1]] = labels
		}
	}
	if len(registered) == 0 {
		t.Fatal("no mcpgw_ series registered")
	}
	for name, labels := range registered {
		doc, ok := documented[name]
		switch {
		case !ok:
			t.Errorf("%s is served on /metrics but not in docs/metrics.md", name)
		case !slices.Equal(doc, labels):
			t.Errorf("%s: docs/metrics.md lists labels %v, /metrics has %v", name, doc, labels)
		}
	}
	for name := range documented {
		if _, ok := registered[name]; !ok {
			t.Errorf("docs/metrics.md lists %s, which the gateway does not register", name)
		}
	}
}
