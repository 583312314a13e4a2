package arch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// goPackage is the part of `go list -json` the architecture rules read.
type goPackage struct {
	ImportPath   string
	Name         string
	Dir          string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// listPackages runs `go list -deps -json ./...` at the module root (once per test
// binary) and returns the module's own packages.
func listPackages(t *testing.T) (module string, pkgs []goPackage) {
	t.Helper()
	listOnce.Do(func() { listed.module, listed.pkgs, listed.err = goList() })
	if listed.err != nil {
		if errors.Is(listed.err, exec.ErrNotFound) {
			peers.Missing(t, "the go command is not on PATH", "install Go (go.mod names the version)")
		}
		t.Fatal(listed.err)
	}
	return listed.module, listed.pkgs
}

var (
	listOnce sync.Once
	listed   struct {
		module string
		pkgs   []goPackage
		err    error
	}
)

func goList() (module string, pkgs []goPackage, err error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", nil, err
	}
	out, err := exec.Command(goBin, "list", "-m", "-json").Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -m: %w", err)
	}
	var mod struct{ Path, Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", nil, err
	}
	cmd := exec.Command(goBin, "list", "-e", "-deps", "-json", "./...")
	cmd.Dir = mod.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -deps -json ./...: %w\n%s", err, stderr.Bytes())
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return "", nil, err
		}
		if p.ImportPath == mod.Path || strings.HasPrefix(p.ImportPath, mod.Path+"/") {
			pkgs = append(pkgs, p)
		}
	}
	if len(pkgs) == 0 {
		return "", nil, errors.New("go list found none of the module's packages")
	}
	return mod.Path, pkgs, nil
}

// under reports whether import path p is the package top or one of its sub-packages.
func under(p, top string) bool { return p == top || strings.HasPrefix(p, top+"/") }

// TestImportGraph keeps the package picture of docs/architecture.md true: the module has
// three public doors (embedded, plugin, config) and everything else is internal; the
// gateway may import the registry, the store and auth, and those (and the bridge) never
// import the gateway; config is a model that imports no package that runs it (the upstream
// connections included); the bridge links neither the config loader nor the registry;
// statedir, tlsfiles, busywait, wsapoll and the HTTP/1.1 client httpclient have no module
// dependencies (httpclient on Windows: but wsapoll); the plugin contract depends on no other
// package of the module (but the leaves internal/schemabound and internal/busywait, and
// for plugin/serve the out-of-process wire, internal/pluginproc and internal/pluginpb);
// there is no util or common package; cmd sits only at the top and nobody imports it.
func TestImportGraph(t *testing.T) {
	module, pkgs := listPackages(t)
	for _, v := range archViolations(module, pkgs) {
		t.Error(v)
	}
	if t.Failed() {
		var names []string
		for _, p := range pkgs {
			names = append(names, strings.TrimPrefix(p.ImportPath, module+"/"))
		}
		t.Logf("module packages: %s", strings.Join(names, " "))
	}
}

// archViolations applies the package rules to the module's packages.
func archViolations(module string, pkgs []goPackage) []string {
	var (
		out     []string
		gateway = module + "/internal/gateway"
		cmd     = module + "/cmd"
		// The top level of docs/architecture.md, plus the end-to-end tests.
		topLevel = map[string]bool{"cmd": true, "config": true, "plugin": true, "embedded": true, "examples": true,
			"test": true, "internal": true}
		// What the config model may not depend on: the packages that run it.
		configMayNot = []string{module + "/internal/registry", module + "/internal/auth", module + "/internal/store",
			module + "/internal/bridge", gateway, module + "/internal/upstream"}
		// Leaves: packages that depend on nothing of the module.
		leaves = []string{module + "/internal/statedir", module + "/internal/tlsfiles", module + "/internal/httpclient", module + "/internal/busywait", module + "/internal/wsapoll"}
		// What the small bridge binary may not link: the config loader, the registry (its wire
		// format excepted) and the YAML and JSON Schema libraries they bring.
		bridgeMayNot = []string{module + "/config", module + "/internal/registry", "go.yaml.in/yaml/v3", "github.com/google/jsonschema-go"}
		// What plugin/serve, the main of a plugin executable, may use besides the contract:
		// the out-of-process wire.
		serveMay = []string{module + "/internal/pluginproc", module + "/internal/pluginpb"}
		banned   = map[string]bool{"util": true, "utils": true, "common": true, "helpers": true, "misc": true}
	)
	// lower: every package below the gateway (config and the module's internal packages
	// but the gateway itself and the tests' tools).
	lower := func(p string) bool {
		return under(p, module+"/config") || (under(p, module+"/internal") && !under(p, gateway) && !under(p, module+"/internal/arch"))
	}
	for _, p := range pkgs {
		if lower(p.ImportPath) {
			for _, d := range append(append([]string{}, p.Imports...), p.Deps...) {
				if under(d, gateway) {
					out = append(out, fmt.Sprintf("%s depends on %s: registry, store, auth and bridge must never import gateway", p.ImportPath, d))
					break
				}
			}
		}
		deps := append(append([]string{}, p.Imports...), p.Deps...)
		if under(p.ImportPath, module+"/config") {
			for _, d := range deps {
				for _, no := range configMayNot {
					if under(d, no) {
						out = append(out, fmt.Sprintf("%s depends on %s: the config model must not import what runs it", p.ImportPath, d))
					}
				}
			}
		}
		if under(p.ImportPath, module+"/internal/bridge") || under(p.ImportPath, cmd+"/mcpgw-bridge") {
			for _, d := range deps {
				for _, no := range bridgeMayNot {
					if under(d, no) {
						out = append(out, fmt.Sprintf("%s depends on %s: the bridge binary stays small", p.ImportPath, d))
					}
				}
			}
		}
		// The plugin contract is imported by the gateway, by hosts embedding it and by plugin
		// executables: it depends on no other package of the module, so any of them (the
		// registry included) may import it without a cycle or a heavy binary. The exceptions
		// are two leaves of the standard library only: internal/schemabound, which bounds the
		// validation of plugin tool schemas as it does of upstream ones, and
		// internal/busywait, the busy waiting of plugin calls as of upstream ones.
		if under(p.ImportPath, module+"/plugin") {
			for _, d := range deps {
				if under(d, module) && !under(d, module+"/plugin") && d != module+"/internal/schemabound" && d != module+"/internal/busywait" &&
					!(under(p.ImportPath, module+"/plugin/serve") && slices.ContainsFunc(serveMay, func(m string) bool { return under(d, m) })) {
					out = append(out, fmt.Sprintf("%s depends on %s: the plugin contract depends on no other package of the module", p.ImportPath, d))
				}
			}
		}
		// embedded is the public API over the whole gateway: only commands and examples
		// sit above it, so no package of the gateway may import it.
		if !under(p.ImportPath, module+"/embedded") && !under(p.ImportPath, cmd) && !under(p.ImportPath, module+"/examples") {
			for _, imp := range p.Imports {
				if under(imp, module+"/embedded") {
					out = append(out, fmt.Sprintf("%s imports %s: only commands and examples sit above the embedding API", p.ImportPath, imp))
				}
			}
		}
		for _, leaf := range leaves {
			if !under(p.ImportPath, leaf) {
				continue
			}
			for _, d := range deps {
				if under(d, module) && d != p.ImportPath && d != module+"/internal/wsapoll" {
					out = append(out, fmt.Sprintf("%s depends on %s: %s has no module dependencies", p.ImportPath, d, path.Base(leaf)))
				}
			}
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if rel == "" {
			out = append(out, fmt.Sprintf("the module root %s is a Go package; code belongs in the packages of docs/architecture.md", module))
			continue
		}
		if top, _, _ := strings.Cut(rel, "/"); !topLevel[top] {
			out = append(out, fmt.Sprintf("%s: top-level package %q is not in docs/architecture.md (cmd, config, plugin, embedded, examples, internal, test)", p.ImportPath, top))
		}
		for i, part := range strings.Split(rel, "/") {
			if part == "cmd" && i != 0 {
				out = append(out, fmt.Sprintf("%s: cmd/ belongs only at the top of the module", p.ImportPath))
			}
		}
		if banned[path.Base(p.ImportPath)] || banned[p.Name] {
			out = append(out, fmt.Sprintf("%s: a package named %q is a sign the seam is wrong", p.ImportPath, path.Base(p.ImportPath)))
		}
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range imps {
				if under(imp, module) && banned[path.Base(imp)] {
					out = append(out, fmt.Sprintf("%s imports %s", p.ImportPath, imp))
				}
				if under(imp, cmd) {
					out = append(out, fmt.Sprintf("%s imports %s: commands are leaves", p.ImportPath, imp))
				}
			}
		}
	}
	return out
}

// TestArchRulesCatchWrongArrows feeds the rules a module that breaks each of them.
func TestArchRulesCatchWrongArrows(t *testing.T) {
	const m = "example.com/gw"
	bad := []goPackage{
		{ImportPath: m + "/internal/upstream", Imports: []string{m + "/internal/wire"}, Deps: []string{m + "/internal/gateway", "fmt"}},
		{ImportPath: m + "/internal/store", Imports: []string{m + "/internal/gateway/admin"}},
		{ImportPath: m + "/internal/gateway", Imports: []string{m + "/internal/registry", m + "/misc/util", m + "/cmd/mcpgw"}},
		{ImportPath: m + "/misc/util", Name: "util"},
		{ImportPath: m + "/internal/registry/cmd/tool", Name: "main"},
		{ImportPath: m + "/internal/auth", TestImports: []string{m + "/internal/auth/common"}},
		{ImportPath: m, Name: "gw"},
		{ImportPath: m + "/config", Imports: []string{m + "/internal/registry/upstream"}, Deps: []string{m + "/internal/registry", m + "/internal/wire"}},
		{ImportPath: m + "/cmd/mcpgw-bridge", Imports: []string{m + "/internal/bridge"}, Deps: []string{m + "/internal/wire", "go.yaml.in/yaml/v3"}},
		{ImportPath: m + "/internal/statedir", Deps: []string{m + "/internal/wire"}},
		{ImportPath: m + "/internal/tlsfiles", Imports: []string{m + "/internal/wire"}},
		{ImportPath: m + "/config/tls", Imports: []string{m + "/internal/upstream"}},
		{ImportPath: m + "/plugin/sqlplugin", Imports: []string{m + "/plugin"}, Deps: []string{m + "/config"}},
		{ImportPath: m + "/internal/gateway/admin", Imports: []string{m + "/embedded"}},
	}
	got := strings.Join(archViolations(m, bad), "\n")
	for _, want := range []string{
		"internal/upstream depends on " + m + "/internal/gateway",
		"internal/store depends on " + m + "/internal/gateway/admin",
		"gateway imports " + m + "/misc/util",
		"imports " + m + "/cmd/mcpgw: commands are leaves",
		`top-level package "misc"`,
		`a package named "util"`,
		"internal/registry/cmd/tool: cmd/ belongs only at the top",
		"auth imports " + m + "/internal/auth/common",
		"the module root " + m + " is a Go package",
		"config depends on " + m + "/internal/registry: the config model",
		"mcpgw-bridge depends on go.yaml.in/yaml/v3",
		"statedir depends on " + m + "/internal/wire",
		"tlsfiles depends on " + m + "/internal/wire: tlsfiles has no module dependencies",
		"config/tls depends on " + m + "/internal/upstream: the config model must not import what runs it",
		"plugin/sqlplugin depends on " + m + "/config: the plugin contract",
		"internal/gateway/admin imports " + m + "/embedded: only commands and examples",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rules missed %q; reported:\n%s", want, got)
		}
	}
	good := []goPackage{
		{ImportPath: m + "/internal/gateway", Imports: []string{m + "/internal/registry", m + "/internal/store", m + "/internal/auth"}},
		{ImportPath: m + "/internal/registry", Imports: []string{m + "/internal/wire", "github.com/prometheus/common/expfmt"}},
		{ImportPath: m + "/cmd/mcpgw", Imports: []string{m + "/internal/gateway"}},
		{ImportPath: m + "/config", Imports: []string{m + "/internal/tlsfiles", "go.yaml.in/yaml/v3"}, Deps: []string{m + "/internal/tlsfiles"}},
		{ImportPath: m + "/cmd/mcpgw-bridge", Imports: []string{m + "/internal/bridge", m + "/internal/statedir"}, Deps: []string{m + "/internal/wire"}},
		{ImportPath: m + "/plugin/sqlplugin", Imports: []string{m + "/plugin"}, Deps: []string{m + "/plugin"}},
		{ImportPath: m + "/internal/registry", Imports: []string{m + "/plugin"}},
		{ImportPath: m + "/embedded", Imports: []string{m + "/internal/gateway", m + "/internal/registry", m + "/plugin"}},
		{ImportPath: m + "/cmd/mcpgw", Imports: []string{m + "/embedded"}},
		{ImportPath: m + "/examples/embed", Name: "main", Imports: []string{m + "/embedded"}},
	}
	if v := archViolations(m, good); len(v) > 0 {
		t.Errorf("a good module was refused: %v", v)
	}
}

// TestImportGraphSeesGateway makes sure the rule above is not vacuous: the command does
// reach gateway and registry through the graph go list reports.
func TestImportGraphSeesGateway(t *testing.T) {
	module, pkgs := listPackages(t)
	for _, p := range pkgs {
		if p.ImportPath != module+"/cmd/mcpgw" {
			continue
		}
		var gw, reg bool
		for _, d := range p.Deps {
			gw = gw || d == module+"/internal/gateway"
			reg = reg || d == module+"/internal/registry"
		}
		if !gw || !reg {
			t.Fatalf("cmd/mcpgw deps lack gateway (%v) or registry (%v): the graph is not what go list should report", gw, reg)
		}
		if filepath.Base(p.Dir) != "mcpgw" {
			t.Errorf("cmd/mcpgw lives in %s", p.Dir)
		}
		return
	}
	t.Fatal("cmd/mcpgw not found")
}
