package arch

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// floors are the levels of docs/architecture.md's map, lowest first: a package imports
// only packages on lower floors, or packages of its own tree (gateway's own internal
// packages, registry's subpackages). The longest matching prefix names a package's floor;
// a package of the module that matches none is an error, so a new package takes its place
// on the map deliberately.
var floors = map[string]int{
	// Leaves: the wire scanners, the HTTP/1.1 client, TLS files, the state dir, the schema
	// bound, busy waiting, WSAPoll, the plugin gRPC code and the test peers import nothing of the module's but
	// each other.
	"internal/wire":        0,
	"internal/statedir":    0,
	"internal/tlsfiles":    0,
	"internal/peers":       0,
	"internal/sealbox":     0,
	"internal/schemabound": 0,
	"internal/busywait":    0,
	"internal/wsapoll":     0,
	"internal/pluginpb":    0,
	"internal/httpclient":  1,
	"internal/runnerlink":  1,
	"internal/oauth":       1,
	// The models: the config model and the plugin contract.
	"config": 1,
	"plugin": 1,
	// What the models are used by: upstream connections, plugin hosts and executables,
	// identity decisions, session records and the stdio bridge.
	"internal/upstream":   2,
	"internal/sqlplugin":  2,
	"internal/pluginproc": 2,
	"plugin/serve":        3,
	"plugin/plugintest":   2,
	"internal/auth":       2,
	"internal/store":      2,
	"internal/bridge":     2,
	// Servers, plugins, catalogues and views; the plugin kinds a program supplies.
	"internal/registry":            3,
	"internal/registry/pluginkind": 4,
	// The MCP server clients see, and its own internal packages.
	"internal/gateway": 5,
	// The embedding API over all of it, and what sits on top.
	"embedded":      6,
	"cmd":           7,
	"examples":      7,
	"test":          7,
	"internal/arch": 7,
}

// floorOf is the floor of a module-relative package path, and the prefix that placed it.
func floorOf(rel string) (int, string, bool) {
	best, floor := "", 0
	for prefix, f := range floors {
		if under(rel, prefix) && len(prefix) > len(best) {
			best, floor = prefix, f
		}
	}
	return floor, best, best != ""
}

// treeOf is the tree a package belongs to for the same-floor exception: its top-level
// directory, or internal/X for the module's shared leaves.
func treeOf(rel string) string {
	parts := strings.Split(rel, "/")
	if parts[0] == "internal" && len(parts) > 1 {
		return "internal/" + parts[1]
	}
	return parts[0]
}

// floorViolations applies the floors to the module's packages (their non-test imports).
func floorViolations(module string, pkgs []goPackage) []string {
	var out []string
	rel := func(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }
	for _, p := range pkgs {
		r := rel(p.ImportPath)
		if r == "" {
			continue // the root-package rule of archViolations reports it
		}
		pf, _, ok := floorOf(r)
		if !ok {
			out = append(out, fmt.Sprintf("%s has no floor: place it on the map (internal/arch/floors_test.go and docs/architecture.md)", p.ImportPath))
			continue
		}
		for _, imp := range p.Imports {
			if !under(imp, module) || imp == module {
				continue
			}
			ir := rel(imp)
			f, _, ok := floorOf(ir)
			if !ok || f < pf || treeOf(ir) == treeOf(r) {
				continue
			}
			out = append(out, fmt.Sprintf("%s (floor %d) imports %s (floor %d): imports run down the floors", r, pf, ir, f))
		}
	}
	return out
}

// public is the module's deliberate public surface: the embedding API, the plugin contract
// and what plugin authors use, the config model, and the small APIs the top-level packages
// offer each other. Everything else sits under an internal/ directory.
var public = map[string]string{
	"embedded":             "the embedding API",
	"embedded/pluginkinds": "the plugin kinds a host gives the embedding API, apart so that a host that does not ask for them links no database driver, go-plugin or gRPC",
	"plugin":               "the plugin contract",
	"plugin/serve":         "what a plugin executable's main calls",
	"plugin/plugintest":    "a fixture provider for plugin authors' tests",
	"config":               "the config model",
}

// publicViolations lists the importable packages (not commands, not tests, not under an
// internal/ directory) outside the public set.
func publicViolations(module string, pkgs []goPackage) []string {
	var out []string
	for _, p := range pkgs {
		r := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if r == "" || p.Name == "main" || under(r, "test") || strings.Contains("/"+r+"/", "/internal/") {
			continue
		}
		if _, ok := public[r]; !ok {
			out = append(out, fmt.Sprintf("%s is public but not in the deliberate public set: move it under an internal/ directory, or add it to `public` with its reason", p.ImportPath))
		}
	}
	return out
}

func TestFloors(t *testing.T) {
	module, pkgs := listPackages(t)
	for _, v := range floorViolations(module, pkgs) {
		t.Error(v)
	}
}

func TestPublicSurface(t *testing.T) {
	module, pkgs := listPackages(t)
	for _, v := range publicViolations(module, pkgs) {
		t.Error(v)
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")] = true
	}
	var gone []string
	for r := range public {
		if !seen[r] {
			gone = append(gone, r)
		}
	}
	sort.Strings(gone)
	for _, r := range gone {
		t.Errorf("public set names %s, which is no package of the module: take it off", r)
	}
}

// TestFloorRulesCatchWrongArrows feeds the rules a module that breaks each of them.
func TestFloorRulesCatchWrongArrows(t *testing.T) {
	const m = "example.com/gw"
	bad := []goPackage{
		{ImportPath: m + "/config", Name: "config", Imports: []string{m + "/internal/upstream"}},
		{ImportPath: m + "/internal/auth", Name: "auth", Imports: []string{m + "/internal/registry", m + "/config"}},
		{ImportPath: m + "/internal/wire", Name: "wire", Imports: []string{m + "/internal/httpclient"}},
		{ImportPath: m + "/internal/registry", Name: "registry", Imports: []string{m + "/internal/registry/pluginkind"}},
		{ImportPath: m + "/newtop", Name: "newtop"},
		{ImportPath: m + "/internal/gateway/admin", Name: "admin"},
	}
	got := strings.Join(append(floorViolations(m, bad), publicViolations(m, bad)...), "\n")
	for _, want := range []string{
		"config (floor 1) imports internal/upstream (floor 2)",
		"internal/auth (floor 2) imports internal/registry (floor 3)",
		"internal/wire (floor 0) imports internal/httpclient (floor 1)",
		m + "/newtop has no floor",
		m + "/newtop is public but not in the deliberate public set",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rules missed %q; reported:\n%s", want, got)
		}
	}
	if strings.Contains(got, "internal/registry (floor 3) imports internal/registry/pluginkind") {
		t.Errorf("an import inside one tree was refused:\n%s", got)
	}
	good := []goPackage{
		{ImportPath: m + "/internal/gateway", Name: "gateway", Imports: []string{m + "/internal/registry", m + "/internal/gateway/internal/admin", m + "/internal/auth"}},
		{ImportPath: m + "/internal/gateway/internal/admin", Name: "admin", Imports: []string{m + "/config", m + "/internal/gateway/internal/ui"}},
		{ImportPath: m + "/config", Name: "config", Imports: []string{m + "/internal/tlsfiles", m + "/internal/statedir"}},
		{ImportPath: m + "/cmd/mcpgw", Name: "main", Imports: []string{m + "/embedded", m + "/internal/registry/pluginkind"}},
	}
	if v := append(floorViolations(m, good), publicViolations(m, good)...); len(v) > 0 {
		t.Errorf("a good module was refused: %v", v)
	}
}
