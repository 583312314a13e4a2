package arch

import (
	"fmt"
	"strings"
	"testing"
)

// The registry's seams: package registry is the composition of its parts under
// internal/registry/internal (catalog, instances, plugins, integrity, upauth, toolsearch).
// A part never depends on the composition (no back pointer: what it needs is given to it),
// the catalogue is data that depends on no part that runs anything (instances, plugins),
// the plugin runner reaches the catalogue's data, not the registry's servers and
// instances, and the instances reach the catalogue's data and integrity's pins, not the
// plugins nor the upstream grants (their authorizers are given to them).
var registrySeams = []struct {
	pkg     string   // a part, relative to the module
	mayNot  []string // what it may not depend on (those packages and their sub-packages)
	because string
}{
	{"internal/registry/internal", []string{"internal/registry"}, "the registry's parts never depend on the registry that composes them: what a part needs is given to it"},
	{"internal/registry/internal/catalog", []string{"internal/registry/internal/plugins", "internal/registry/internal/instances", "internal/registry/internal/integrity", "internal/registry/internal/upauth"},
		"the catalogue is data and functions of data: it runs no plugin or upstream and keeps no pins or grants"},
	{"internal/registry/internal/plugins", []string{"internal/registry/internal/upauth", "internal/registry/internal/instances"},
		"the plugin runner reaches servers' catalogue data, not upstream grants nor the upstream instances"},
	{"internal/registry/internal/instances", []string{"internal/registry/internal/plugins", "internal/registry/internal/upauth"},
		"the upstream instances reach catalogue data and pins, not the plugins; their upstream grants are given to them (Host)"},
}

// registrySeamViolations lists the dependencies that cross a seam the wrong way.
func registrySeamViolations(module string, pkgs []goPackage) []string {
	var out []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, s := range registrySeams {
			if !under(rel, s.pkg) {
				continue
			}
			for _, d := range p.Deps {
				drel := strings.TrimPrefix(strings.TrimPrefix(d, module), "/")
				if !strings.HasPrefix(d, module+"/") {
					continue
				}
				for _, no := range s.mayNot {
					// A part may depend on its own kind (the parts under internal/ on each other).
					if under(drel, no) && !under(drel, s.pkg) {
						out = append(out, fmt.Sprintf("%s depends on %s: %s", rel, d, s.because))
					}
				}
			}
		}
	}
	return out
}

// TestRegistrySeams checks the registry's seams over the module's package graph.
func TestRegistrySeams(t *testing.T) {
	module, pkgs := listPackages(t)
	for _, part := range []string{"catalog", "instances", "plugins"} {
		seen := false
		for _, p := range pkgs {
			seen = seen || p.ImportPath == module+"/internal/registry/internal/"+part
		}
		if !seen {
			t.Fatalf("go list reports no internal/registry/internal/%s: the rule would hold vacuously", part)
		}
	}
	for _, v := range registrySeamViolations(module, pkgs) {
		t.Error(v)
	}
}

// TestRegistrySeamsCatchWrongArrows feeds the rule a graph whose parts reach back into the
// registry or across a seam, and one that keeps them, and shows it tells them apart.
func TestRegistrySeamsCatchWrongArrows(t *testing.T) {
	const m = "example.com/gw"
	reg, cat, plug, integ := m+"/internal/registry", m+"/internal/registry/internal/catalog", m+"/internal/registry/internal/plugins", m+"/internal/registry/internal/integrity"
	inst, upauth := m+"/internal/registry/internal/instances", m+"/internal/registry/internal/upauth"
	bad := []goPackage{
		{ImportPath: inst, Deps: []string{cat, integ, plug, upauth}},
		{ImportPath: plug + "/sub", Deps: []string{inst}},
		{ImportPath: cat + "/x", Deps: []string{inst}},
		{ImportPath: cat, Deps: []string{plug, m + "/plugin"}},
		{ImportPath: plug, Deps: []string{cat, reg}},
		{ImportPath: integ, Deps: []string{reg + "/pluginkind"}},
		{ImportPath: cat + "/sub", Deps: []string{integ}},
	}
	got := strings.Join(registrySeamViolations(m, bad), "\n")
	for _, want := range []string{
		"internal/registry/internal/catalog depends on " + plug + ": the catalogue is data",
		"internal/registry/internal/plugins depends on " + reg + ": the registry's parts never depend on the registry",
		"internal/registry/internal/integrity depends on " + reg + "/pluginkind: the registry's parts never depend on the registry",
		"internal/registry/internal/catalog/sub depends on " + integ + ": the catalogue is data",
		"internal/registry/internal/instances depends on " + plug + ": the upstream instances reach catalogue data and pins, not the plugins",
		"internal/registry/internal/instances depends on " + upauth + ": the upstream instances",
		"internal/registry/internal/plugins/sub depends on " + inst + ": the plugin runner reaches servers' catalogue data, not upstream grants nor the upstream instances",
		"internal/registry/internal/catalog/x depends on " + inst + ": the catalogue is data",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rule missed %q; reported:\n%s", want, got)
		}
	}
	good := []goPackage{
		{ImportPath: reg, Deps: []string{cat, plug, integ, inst, upauth}},
		{ImportPath: inst, Deps: []string{cat, integ, m + "/internal/registry/internal/toolsearch", m + "/internal/upstream", m + "/config"}},
		{ImportPath: plug, Deps: []string{cat, integ, m + "/plugin", m + "/config"}},
		{ImportPath: cat, Deps: []string{m + "/internal/registry/internal/toolsearch", m + "/internal/upstream", m + "/plugin"}},
		{ImportPath: reg + "/pluginkind", Deps: []string{reg, plug}},
	}
	if v := registrySeamViolations(m, good); len(v) > 0 {
		t.Errorf("a good graph was refused: %v", v)
	}
}
