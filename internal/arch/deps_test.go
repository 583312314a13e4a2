package arch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Heavy dependencies stay where they are used. The sql plugin's database drivers and the
// out-of-process plugins' go-plugin and gRPC are linked by the programs that supply those
// plugin kinds (internal/registry/pluginkind), never by the packages every program of the module
// builds on; the plugin contract is mcpgw's own API, not a go-sdk one.

// heavyDeps are the libraries the core packages must not link.
var heavyDeps = []string{"github.com/jackc/pgx", "modernc.org/sqlite", "google.golang.org/grpc", "github.com/hashicorp/go-plugin"}

// depRule bans dependencies (import path prefixes) for one package of the module (the
// package itself, not its sub-packages). through lets a banned dependency in only when
// every way to it passes through one of the listed packages (prefixes), with the reason.
type depRule struct {
	pkg     string // relative to the module
	banned  []string
	through map[string][]string
	why     string
}

func depRules() []depRule {
	// The gateway's trace exporter (OTLP over HTTP) links gRPC for its configuration and
	// protobuf service types; that is OpenTelemetry's choice, and tracing is off unless
	// configured. Every other way to gRPC stays banned.
	otel := map[string][]string{"google.golang.org/grpc": {"go.opentelemetry.io/"}}
	core := "the core packages link no database driver, go-plugin or gRPC: plugin kinds that need them are supplied by the program (internal/registry/pluginkind)"
	return []depRule{
		{pkg: "internal/auth", banned: heavyDeps, why: core},
		{pkg: "internal/registry", banned: heavyDeps, why: core},
		{pkg: "internal/gateway", banned: heavyDeps, through: otel, why: core},
		{pkg: "internal/store", banned: heavyDeps, why: core},
		{pkg: "config", banned: heavyDeps, why: core},
		{pkg: "embedded", banned: heavyDeps, through: otel,
			why: "a host links the sql plugin's drivers and the out-of-process plugins' go-plugin and gRPC only when it asks for their kinds (package embedded/pluginkinds)"},
		{pkg: "plugin", banned: []string{"github.com/modelcontextprotocol/go-sdk"},
			why: "the plugin contract uses mcpgw's own types (ToolDef, Result), so its API does not move with go-sdk's"},
	}
}

// depViolations applies rules to the module's packages (their transitive Deps, as go list
// reports them). graph (import path → its imports, every package) is read only to follow
// the ways to a dependency a rule lets in through some packages.
func depViolations(module string, pkgs []goPackage, graph map[string][]string, rules []depRule) []string {
	var out []string
	for _, rule := range rules {
		path := module + "/" + rule.pkg
		i := slices.IndexFunc(pkgs, func(p goPackage) bool { return p.ImportPath == path })
		if i < 0 {
			out = append(out, fmt.Sprintf("%s: not found; the dependency rules judge a package that is gone", path))
			continue
		}
		for _, b := range rule.banned {
			hit := slices.IndexFunc(pkgs[i].Deps, func(d string) bool { return d == b || strings.HasPrefix(d, b+"/") })
			if hit < 0 {
				continue
			}
			via, ok := rule.through[b]
			if !ok {
				out = append(out, fmt.Sprintf("%s depends on %s: %s", path, pkgs[i].Deps[hit], rule.why))
				continue
			}
			if chain := pathAvoiding(graph, path, b, via); chain != nil {
				out = append(out, fmt.Sprintf("%s depends on %s (%s), not only through %s: %s", path, chain[len(chain)-1],
					strings.Join(chain, " -> "), strings.Join(via, ", "), rule.why))
			}
		}
	}
	return out
}

// pathAvoiding is a chain of imports from "from" to a package under target that passes
// through none of the packages under the prefixes in avoid, or nil when there is none.
func pathAvoiding(graph map[string][]string, from, target string, avoid []string) []string {
	skip := func(p string) bool {
		return slices.ContainsFunc(avoid, func(a string) bool { return strings.HasPrefix(p, a) })
	}
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == target || strings.HasPrefix(p, target+"/") {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append([]string{p}, chain...)
			}
			return chain
		}
		for _, imp := range graph[p] {
			if _, seen := prev[imp]; !seen && !skip(imp) {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return nil
}

// importGraph is every package the judged packages reach, with its imports (go list, once
// per test binary).
func importGraph(t *testing.T, module string, rules []depRule) map[string][]string {
	t.Helper()
	graphOnce.Do(func() {
		args := []string{"list", "-e", "-deps", "-json=ImportPath,Imports"}
		for _, r := range rules {
			args = append(args, module+"/"+r.pkg)
		}
		cmd := exec.Command("go", args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			graphErr = fmt.Errorf("go list: %w\n%s", err, stderr.Bytes())
			return
		}
		graph = map[string][]string{}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p goPackage
			if err := dec.Decode(&p); err == io.EOF {
				break
			} else if err != nil {
				graphErr = err
				return
			}
			graph[p.ImportPath] = p.Imports
		}
	})
	if graphErr != nil {
		t.Fatal(graphErr)
	}
	return graph
}

var (
	graphOnce sync.Once
	graph     map[string][]string
	graphErr  error
)

// TestCoreLinksNoHeavyDeps keeps the database drivers, go-plugin and gRPC out of auth,
// registry, gateway, sessions and config, and go-sdk out of the plugin contract.
func TestCoreLinksNoHeavyDeps(t *testing.T) {
	module, pkgs := listPackages(t) // skips (or fails under make) without the go command
	rules := depRules()
	for _, v := range depViolations(module, pkgs, importGraph(t, module, rules), rules) {
		t.Error(v)
	}
}

// TestDepRulesCatchWrongDeps feeds the rules a module whose packages break them, and one
// that keeps them.
func TestDepRulesCatchWrongDeps(t *testing.T) {
	const m = "example.com/gw"
	pkgs := []goPackage{
		{ImportPath: m + "/internal/auth", Deps: []string{m + "/config", m + "/internal/registry", m + "/plugin/sqlplugin", "modernc.org/sqlite", "fmt"}},
		{ImportPath: m + "/internal/registry", Deps: []string{m + "/plugin", m + "/internal/pluginproc", "github.com/hashicorp/go-plugin", "google.golang.org/grpc/codes"}},
		{ImportPath: m + "/internal/gateway", Deps: []string{m + "/internal/registry", m + "/internal/pluginproc", "google.golang.org/grpc", "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"}},
		{ImportPath: m + "/internal/store", Deps: []string{"github.com/jackc/pgx/v5/stdlib"}},
		{ImportPath: m + "/config"},
		{ImportPath: m + "/plugin", Deps: []string{"github.com/google/jsonschema-go/jsonschema", "github.com/modelcontextprotocol/go-sdk/mcp"}},
		{ImportPath: m + "/embedded", Deps: []string{m + "/internal/registry/pluginkind", "modernc.org/sqlite"}},
	}
	graph := map[string][]string{
		m + "/internal/gateway":    {m + "/internal/registry", "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"},
		m + "/internal/registry":   {m + "/internal/pluginproc"},
		m + "/internal/pluginproc": {"google.golang.org/grpc"},
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp": {"google.golang.org/grpc"},
	}
	got := strings.Join(depViolations(m, pkgs, graph, depRules()), "\n")
	for _, want := range []string{
		m + "/internal/auth depends on modernc.org/sqlite",
		m + "/internal/registry depends on github.com/hashicorp/go-plugin",
		m + "/internal/registry depends on google.golang.org/grpc/codes",
		m + "/internal/gateway depends on google.golang.org/grpc (" + m + "/internal/gateway -> " + m + "/internal/registry -> " + m + "/internal/pluginproc -> google.golang.org/grpc), not only through go.opentelemetry.io/",
		m + "/internal/store depends on github.com/jackc/pgx/v5/stdlib",
		m + "/plugin depends on github.com/modelcontextprotocol/go-sdk/mcp",
		m + "/embedded depends on modernc.org/sqlite",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("rules missed %q; reported:\n%s", want, got)
		}
	}

	// The same module with the plugin kinds supplied from outside: gRPC reaches the
	// gateway through the trace exporter only, the contract imports jsonschema-go only.
	good := []goPackage{
		{ImportPath: m + "/internal/auth", Deps: []string{m + "/config"}},
		{ImportPath: m + "/internal/registry", Deps: []string{m + "/plugin", "github.com/google/jsonschema-go/jsonschema"}},
		{ImportPath: m + "/internal/gateway", Deps: []string{m + "/internal/registry", "google.golang.org/grpc", "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"}},
		{ImportPath: m + "/internal/store"},
		{ImportPath: m + "/config"},
		{ImportPath: m + "/plugin", Deps: []string{"github.com/google/jsonschema-go/jsonschema"}},
		{ImportPath: m + "/embedded", Deps: []string{m + "/internal/gateway"}},
		{ImportPath: m + "/embedded/pluginkinds", Deps: []string{m + "/embedded", m + "/internal/registry/pluginkind", "modernc.org/sqlite"}},
		{ImportPath: m + "/internal/registry/pluginkind", Deps: []string{m + "/internal/pluginproc", "google.golang.org/grpc", "modernc.org/sqlite"}},
	}
	goodGraph := map[string][]string{
		m + "/internal/gateway": {m + "/internal/registry", "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"},
		"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp": {"google.golang.org/grpc"},
	}
	if v := depViolations(m, good, goodGraph, depRules()); len(v) > 0 {
		t.Errorf("a good module was refused: %v", v)
	}
	if v := depViolations(m, good[1:], goodGraph, depRules()); len(v) != 1 || !strings.Contains(v[0], m+"/internal/auth: not found") {
		t.Errorf("a judged package that is gone: %v", v)
	}
}
