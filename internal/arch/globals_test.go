package arch

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Rule: no process-global mutable state. Two gateways in one process (package embedded)
// must not share a setting, a counter or a pool through a package variable, so every
// package-level var of the module's non-test, non-generated code is either gone (a const,
// a field of the value that owns it) or listed in allowedGlobals with the reason it may
// stay: never written after initialization (sentinel errors, compiled regexps, lookup
// tables, embedded files, pools of scratch buffers), a link-time constant, or something the
// process really has once. Keys are "pkgpath.Name" with pkgpath relative to the module
// root (cmd/mcpgw.version, internal/registry/wire.ErrNotObject).
var allowedGlobals = map[string]string{
	// Sentinel errors: made once, compared with errors.Is, never assigned.
	"internal/auth.ErrNoAgent":                             "sentinel error",
	"internal/auth.ErrKeysUnavailable":                     "sentinel error",
	"internal/auth.ErrInvalidToken":                        "sentinel error",
	"internal/bridge.errPeerClosed":                        "sentinel error",
	"internal/bridge.errNoAnswer":                          "sentinel error",
	"embedded.ErrClosed":                                   "sentinel error",
	"internal/gateway/internal/admin.allowOrder":           "lookup table of HTTP methods, never written",
	"config.separatorRE":                                   "compiled regexp, never written",
	"internal/gateway/internal/reqparams.ErrNotObject":     "sentinel error",
	"internal/gateway/internal/intake.ErrBodyTimeout":      "sentinel error",
	"internal/gateway/internal/clientstream.ErrNoStream":   "sentinel error",
	"internal/gateway/internal/clientstream.ErrSlow":       "sentinel error",
	"internal/gateway/internal/clientstream.errFull":       "sentinel error",
	"internal/gateway/internal/stateless.errCapsNotObject": "sentinel error",
	"internal/gateway/internal/stateless.errBadLogLevel":   "sentinel error",
	"plugin.ErrUnknownTool":                                "sentinel error",
	"plugin.ErrTooLarge":                                   "sentinel error",
	"plugin.ErrNotFound":                                   "sentinel error",
	"plugin.ErrUnsupported":                                "sentinel error",
	"internal/registry.ErrNoWatch":                         "sentinel error",
	"internal/registry/internal/plugins.ErrNoWatch":        "sentinel error",
	"internal/registry/internal/plugins.ErrTimeout":        "sentinel error",
	"internal/registry/internal/plugins.ErrStopped":        "sentinel error",
	"internal/registry.ErrPluginTimeout":                   "sentinel error",
	"internal/registry.ErrPluginStopped":                   "sentinel error",
	"internal/registry.ErrPoolStopped":                     "sentinel error",
	"internal/registry/internal/instances.ErrPoolStopped":  "sentinel error",
	"internal/registry.ErrUnavailable":                     "sentinel error",
	"internal/registry.ErrNoServer":                        "sentinel error",
	"internal/registry.ErrRetired":                         "sentinel error",
	"internal/registry/internal/catalog.errBadCursor":      "sentinel error",
	"internal/registry/internal/catalog.o200k":             "the tokenizer (an embedded vocabulary), built once on first use and never written after (sync.OnceValue)",
	"internal/upstream.ErrClosed":                          "sentinel error",
	"internal/upstream.ErrStreamEnded":                     "sentinel error",
	"internal/upstream.errNoInProcess":                     "sentinel error",
	"internal/wire.ErrLineTooLarge":                        "sentinel error",
	"internal/runnerlink.ErrFrameTooLarge":                 "sentinel error",
	"internal/runnerlink.ErrLinkClosed":                    "sentinel error",
	"internal/runnerlink.ErrRefused":                       "sentinel error",
	"internal/wire.ErrEventTooLarge":                       "sentinel error",
	"internal/wire.ErrLineTooLong":                         "sentinel error",
	"internal/wire.ErrDuplicateMember":                     "sentinel error",
	"internal/wire.ErrInvalidUTF8":                         "sentinel error",
	"internal/wire.ErrNotString":                           "sentinel error",
	"internal/wire.ErrNotObject":                           "sentinel error",
	"internal/store.ErrNotFound":                           "sentinel error",
	"internal/store.ErrUnavailable":                        "sentinel error",
	"internal/store.errBadConfigKey":                       "sentinel error",
	"internal/store.errBadPinKey":                          "sentinel error",
	"internal/registry.ErrNotHeld":                         "sentinel error",
	"internal/registry/internal/integrity.ErrNotHeld":      "sentinel error",
	"config.connectionIDRE":                                "compiled regexp, never reassigned",
	"config.serverNameRE":                                  "compiled regexp, never reassigned",
	"config.envRef":                                        "compiled regexp, never reassigned",
	"internal/upstream.secretFlag":                         "compiled regexp of the redaction in starterr.go, never reassigned",
	"internal/upstream.shortSecretFlag":                    "compiled regexp of the redaction in starterr.go, never reassigned",
	"internal/upstream.attachedPassword":                   "compiled regexp of the redaction in starterr.go, never reassigned",
	"internal/upstream.secretAssign":                       "compiled regexp of the redaction in starterr.go, never reassigned",
	"internal/upstream.bearer":                             "compiled regexp of the redaction in starterr.go, never reassigned",
	"internal/upstream.urlRE":                              "compiled regexp of the redaction in starterr.go, never reassigned",
	"internal/upstream.longToken":                          "compiled regexp of the redaction in starterr.go, never reassigned",
	"internal/upstream.secretParam":                        "compiled regexp of the redaction in starterr.go, never reassigned",
	"internal/store.keyEscaper":                            "strings.Replacer, immutable after construction",
	"internal/auth.rsaAlgs":                                "lookup table, never written",
	"internal/auth.narrowKeys":                             "lookup table, never written",
	"internal/auth.supportedAlgs":                          "lookup table, never written",
	"config.migrations":                                    "the config migration steps: a constant list, never written",
	"internal/gateway/internal/admin.taskAliases":          "lookup table, never written",
	"internal/gateway.streamableVersions":                  "protocol versions served: a constant list, never written",
	"internal/gateway.legacyVersions":                      "protocol versions served: a constant list, never written",
	"internal/gateway.latestVersion":                       "protocol version constant kept beside its lists, never written",
	"internal/gateway.statelessVersions":                   "protocol versions served: a constant list, never written",
	"internal/gateway/internal/reqparams.levelRank":        "lookup table, never written",
	"internal/gateway.gatewayCaps":                         "the gateway's capabilities as constant JSON, never written",
	"internal/gateway/internal/dispatch.isErrorKey":        "constant bytes the scanner compares with, never written",
	"internal/gateway/internal/dispatch.inputRequired":     "constant bytes the scanner compares with, never written",
	"internal/gateway/internal/reply.ctJSON":               "constant header value slice, never written",
	"internal/gateway/internal/reply.ctSSE":                "constant header value slice, never written",
	"internal/gateway/internal/reply.hdrNoCache":           "constant header value slice, never written",
	"internal/gateway/internal/reply.ErrAnswered":          "sentinel error",
	"internal/gateway/internal/stateless.ctSSE":            "constant header value slice, never written",
	"internal/gateway/internal/stateless.hdrNoCache":       "constant header value slice, never written",
	"internal/gateway/internal/dispatch.confirmSchema":     "a constant JSON schema, never written",
	"internal/gateway/internal/ui.uiFuncs":                 "template functions, never written",
	"internal/gateway/internal/ui.uiFiles":                 "embed.FS of the web UI",
	"internal/gateway/internal/reply.primeTimers":          "sync.Pool of stopped timers: scratch objects, no state between uses",
	"plugin.Operators":                                     "the filter operators in schema order: a constant list, never written",
	"plugin/plugintest.str":                                "fixture schema, never written",
	"plugin/plugintest.intg":                               "fixture schema, never written",
	"plugin/plugintest.types":                              "fixture resource types, never written",
	"internal/gateway/internal/selfplugin.types":           "the mcpgw plugin's resource types, never written",
	"internal/sqlplugin.notifySQL":                         "embedded notify.sql, never written",
	"internal/sqlplugin.comparisons":                       "lookup table of SQL operators, never written",
	"internal/sqlplugin.operators":                         "lookup table of operators by column type, never written",
	"internal/sqlplugin.listenBackoffMin":                  "LISTEN reconnection timing, never written (could be const)",
	"internal/sqlplugin.listenBackoffMax":                  "LISTEN reconnection timing, never written (could be const)",
	"internal/sqlplugin.listenPing":                        "LISTEN keep-alive interval, never written (could be const)",
	"internal/registry/internal/catalog.catalogSeq":        "a sequence that only makes catalogue ids unique (view cache keys); its values carry no setting, and sharing it between gateways changes nothing they do",
	"internal/wire.ssePool":                                "sync.Pool of SSE scratch buffers, no state between uses",
	"internal/store.bucketSessions":                        "bbolt bucket name, constant bytes",
	"internal/store.bucketTasks":                           "bbolt bucket name, constant bytes",
	"internal/store.bucketConvs":                           "bbolt bucket name, constant bytes",
	"internal/store.bucketConfig":                          "bbolt bucket name, constant bytes",
	"internal/store.bucketPins":                            "bbolt bucket name, constant bytes",
	"internal/store.bucketMeta":                            "bbolt bucket name, constant bytes",
	"internal/store.keySchemaVersion":                      "bbolt key, constant bytes",
	"internal/store.boltMigrations":                        "the bbolt schema migrations: a constant list, never written",
	"internal/store.subPingEvery":                          "Redis subscription timing, never written (could be const)",
	"internal/store.subBackoffMin":                         "Redis subscription timing, never written (could be const)",
	"internal/store.subBackoffMax":                         "Redis subscription timing, never written (could be const)",
	"internal/store.panickedPaths":                         "bbolt files whose open panicked in this process: bbolt's mmap of them is the process's, whichever gateway opened them",
	"internal/store.quietRedisLog":                         "go-redis has one logger per process (redis.SetLogger); this sets it once",
	"internal/upstream.keptJobs":                           "Windows job objects the process joined: the process's own, held open until it exits",
	"internal/upstream.containOnce":                        "the process joins its kill-on-close job object once (Windows): a property of the process, not of a gateway",
	"cmd/mcpgw.version":                                    "link-time constant (-ldflags -X main.version)",
	"cmd/mcpgw-bridge.version":                             "link-time constant (-ldflags -X main.version)",
	"cmd/mcpgw-plugin-sql.version":                         "link-time constant (-ldflags -X main.version)",
	"cmd/mcpgw.logLevel":                                   "the daemon's logger level: a main package, one per process, handed to its one gateway",
	"cmd/mcpgw.notes":                                      "where the CLI writes notes (stderr): a main package, one per process",
	"cmd/mcpgw.bridgeCommand":                              "how the CLI finds mcpgw-bridge: a main package, one per process",
	"cmd/mcpgw.clientTransports":                           "lookup table of the CLI, never written",
	"examples/embed.noteSchema":                            "the example plugin's constant schema, never written",
	"internal/httpclient.ErrUntracked":                     "sentinel error",
	"internal/httpclient.headerChars":                      "byte class table, computed once, never written",
	"internal/httpclient.bufPool":                          "sync.Pool of request buffers: scratch memory, no state between uses",
	"internal/wsapoll.proc":                                "lazy DLL procedure of the OS (Windows), resolved once",

	"internal/gateway/internal/telemetry.traceparentKey": "constant bytes the scanner compares with, never written",

	"internal/gateway/gatewaytest.everything":    "test harness: the everything-server of one test binary, set by Main before any test runs and only read after",
	"internal/gateway/gatewaytest.consentCodeRE": "compiled regexp, never written",
	"internal/gateway/gatewaytest.CSRFMeta":      "compiled regexp, never written",

	"internal/registry/internal/integrity.instructionPhrases": "compiled regexps of the instruction rule, built once on first use and never written after (sync.OnceValue)",
}

// TestNoMutableGlobals: every package-level var of the module is allowed, with a reason,
// and every allowed one still exists (a stale entry would let a new global of that name
// in unnoticed).
func TestNoMutableGlobals(t *testing.T) {
	root := moduleRoot(t)
	found, err := moduleGlobals(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 20 {
		t.Fatalf("found %d package-level vars under %s: the walk is not reading the module", len(found), root)
	}
	for _, v := range checkGlobals(found, allowedGlobals) {
		t.Error(v)
	}
	seen := map[string]bool{}
	for _, g := range found {
		seen[g.key] = true
	}
	for key := range allowedGlobals {
		if !seen[key] {
			t.Errorf("allowedGlobals lists %s, which no longer exists: remove it", key)
		}
	}
}

// TestGlobalsCheckerCatchesMutableGlobal: a snippet with a mutable global, next to what
// may stay (a const, a blank interface check, a function's local var), is reported for
// the global alone, with its file and line; allowed, it passes.
func TestGlobalsCheckerCatchesMutableGlobal(t *testing.T) {
	src := `package pool

import "time"

const Timeout = time.Second

var _ interface{ Close() error } = (*conn)(nil)

// BusyPoll is written by whoever configures the process: shared by every gateway.
var BusyPoll = 200 * time.Microsecond

var (
	hits, misses int
)

type conn struct{}

func (*conn) Close() error { var local int; _ = local; return nil }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "internal/registry/pool/pool.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	found := fileGlobals(fset, f, "internal/registry/pool")
	got := checkGlobals(found, map[string]string{"internal/registry/pool.misses": "a test says so"})
	want := []string{
		"internal/registry/pool/pool.go:10: package-level var internal/registry/pool.BusyPoll: process-global state (make it a const, a field of the value that owns it, or allow it in allowedGlobals with a reason)",
		"internal/registry/pool/pool.go:13: package-level var internal/registry/pool.hits: process-global state (make it a const, a field of the value that owns it, or allow it in allowedGlobals with a reason)",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := checkGlobals(found, map[string]string{"internal/registry/pool.BusyPoll": "r", "internal/registry/pool.hits": "r", "internal/registry/pool.misses": "r"}); len(got) != 0 {
		t.Fatalf("all allowed, yet: %v", got)
	}
	if got := checkGlobals(found, map[string]string{"internal/registry/pool.BusyPoll": "", "internal/registry/pool.hits": "r", "internal/registry/pool.misses": "r"}); len(got) != 1 || !strings.Contains(got[0], "no reason") {
		t.Fatalf("an entry without a reason passed: %v", got)
	}

	gen := "// Code generated by protoc-gen-go. DO NOT EDIT.\n\npackage pb\n\nvar File_x = 1\n"
	g, err := parser.ParseFile(fset, "pb/x.pb.go", gen, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if found := fileGlobals(fset, g, "pb"); len(found) != 0 {
		t.Fatalf("a generated file's vars were checked: %v", found)
	}
}

// global is one package-level var: its key ("pkgpath.Name") and where it is declared.
type global struct {
	key, pos string
}

// checkGlobals returns one line per global that allowed does not list with a reason, in
// the order found.
func checkGlobals(found []global, allowed map[string]string) []string {
	var out []string
	for _, g := range found {
		reason, ok := allowed[g.key]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: package-level var %s: process-global state (make it a const, a field of the value that owns it, or allow it in allowedGlobals with a reason)", g.pos, g.key))
		case strings.TrimSpace(reason) == "":
			out = append(out, fmt.Sprintf("%s: package-level var %s is allowed with no reason", g.pos, g.key))
		}
	}
	return out
}

// fileGlobals lists the package-level vars of f, a file of the package at pkgpath
// (relative to the module root); none for a generated file. Blank vars (interface checks)
// hold nothing.
func fileGlobals(fset *token.FileSet, f *ast.File, pkgpath string) []global {
	if ast.IsGenerated(f) {
		return nil
	}
	var out []global
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			for _, n := range spec.(*ast.ValueSpec).Names {
				if n.Name == "_" {
					continue
				}
				p := fset.Position(n.Pos())
				out = append(out, global{key: pkgpath + "." + n.Name, pos: fmt.Sprintf("%s:%d", filepath.ToSlash(p.Filename), p.Line)})
			}
		}
	}
	return out
}

// moduleGlobals parses every non-test .go file of the module under root (every GOOS's),
// skipping test/e2e, testdata, node_modules, dot directories and nested modules.
func moduleGlobals(root string) ([]global, error) {
	fset := token.NewFileSet()
	var out []global
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || rel == "test/e2e") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); rel != "." && err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkgpath := filepath.ToSlash(filepath.Dir(rel))
		found := fileGlobals(fset, f, pkgpath)
		for i := range found {
			found[i].pos = rel + found[i].pos[strings.LastIndexByte(found[i].pos, ':'):]
		}
		out = append(out, found...)
		return nil
	})
	return out, err
}

// moduleRoot is the directory of the module's go.mod, above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/mcpgw/mcpgw\n") {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod of github.com/mcpgw/mcpgw above %s", dir)
		}
	}
}
