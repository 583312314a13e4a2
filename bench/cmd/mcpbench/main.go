// Command mcpbench measures mcpgw side by side with baselines on the same machine in the
// same run: the upstream directly, Go's httputil.ReverseProxy with a tuned Transport, and a
// plain gateway glued from go-sdk's server and client, and, where they apply, gateways from
// npm (supergateway for a stdio server behind HTTP; see npm.go). Every scenario alternates short
// rounds between the targets and reports medians and paired ratios, so that load from
// other work on the machine hits baselines and gateway alike.
//
//	mcpbench run [-scenarios S1,S2,…|all] [-smoke] [-out DIR] [-npm DIR] …
//	mcpbench echo (-http ADDR | -stdio) [-tools N]    fast echo MCP server (bench/echo)
//	mcpbench rproxy -target URL [-idle N]             tuned httputil.ReverseProxy
//	mcpbench sdkgw -upstream URL                      go-sdk server + client gateway
//
// Results go to DIR/<date>-<scenario>.md and .json, with the machine description, and
// DIR/<date>-summary.md lists every target and whether it held.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		// The load client and the echo upstream are the harness, shared by every target:
		// their collections must not land in every target's tail (S3 measures p99 at a
		// fixed rate). Set in-process, so the targets they start keep their own defaults.
		debug.SetGCPercent(harnessGCPercent)
		err = cmdRun(os.Args[2:])
	case "echo":
		debug.SetGCPercent(harnessGCPercent)
		err = cmdEcho(os.Args[2:])
	case "rproxy":
		err = cmdReverseProxy(os.Args[2:])
	case "sdkgw":
		err = cmdSDKGateway(os.Args[2:])
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

// harnessGCPercent is the load client's and the echo server's GC percent.
const harnessGCPercent = 2000

func usage() {
	fmt.Fprintln(os.Stderr, "usage: mcpbench run|echo|rproxy|sdkgw [flags]  (mcpbench run -h)")
}

// env is what every scenario needs.
type env struct {
	repo      string
	self      string // this binary, for echo/rproxy/sdkgw children
	mcpgw     string
	bridge    string
	peers     string // MCPGW_PEERS for go test (S9)
	dir       string // scratch: logs, state dirs
	smoke     bool
	rounds    int
	roundDur  time.Duration
	warmup    time.Duration
	sessionsN int // S5
	burstN    int // S8
	coldRuns  int // S4
	benchTime string
	goBin     string
	alt       string        // candidate mcpgw binary for A/B runs
	soak      time.Duration // S7 churn
	churnWarm time.Duration // S7 warm-up churn before the baseline
	npmDir    string        // where bench/npm/install.sh put node_modules
	nodeBin   string        // node for the npm gateways
	t1Only    []string      // T1: the catalogues to run (all when empty)
	t1Dump    string        // T1: where to write each catalogue's tool list (none when empty)
	machine   Machine
}

var scenarios = []struct {
	id  string
	run func(context.Context, *env, *Result) error
}{
	{"S1", s1}, {"S2", s2}, {"S3", s3}, {"S4", s4}, {"S5", s5}, {"S6", s6}, {"S7", s7}, {"S8", s8}, {"S9", s9}, {"S10", s10},
	{"S11", s11}, {"S12", s12}, {"S13", s13}, {"S14", s14}, {"T1", t1},
}

func cmdRun(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	which := fs.String("scenarios", "all", "comma-separated scenario ids (S1,S2,S3,S4,S5,S6,S7,S8,S9,S10,S11,S12,S13,S14,T1) or all")
	smokeFlag := fs.Bool("smoke", false, "run every scenario for about a second: checks that they run and write files, numbers mean nothing")
	out := fs.String("out", "bench/results", "directory for <date>-<scenario>.md/.json")
	repo := fs.String("repo", ".", "repository root (for go test and git describe)")
	mcpgw := fs.String("mcpgw", "bin/mcpgw", "mcpgw binary")
	bridge := fs.String("bridge", "bin/mcpgw-bridge", "mcpgw-bridge binary")
	peers := fs.String("peers", os.Getenv("MCPGW_PEERS"), "MCPGW_PEERS for the in-process benchmarks (S9), so their TestMain does not rebuild the everything-server")
	rounds := fs.Int("rounds", 5, "interleaved rounds per scenario")
	roundDur := fs.Duration("round", 2*time.Second, "length of one target's turn in a round")
	sessionsN := fs.Int("sessions", 10000, "idle sessions for S5/S6")
	benchTime := fs.String("benchtime", "3s", "go test -benchtime for S9")
	goBin := fs.String("go", "go", "go command (S9 runs go test)")
	alt := fs.String("alt", "", "a second mcpgw binary (a candidate change) run as one more target in S1, S2 and S4, interleaved with bin/mcpgw")
	keep := fs.Bool("keep", false, "keep the scratch directory (logs, state)")
	soak := fs.Duration("soak", 30*time.Second, "S7: how long sessions are churned per gateway")
	npmDir := fs.String("npm", "", "directory holding node_modules with the npm gateways (bench/npm/install.sh DIR; make bench passes .cache/bench-npm); empty: npm baselines are skipped")
	nodeBin := fs.String("node", "", "node binary for the npm gateways (default: test/e2e's Node 22 if installed, else node on PATH)")
	t1Only := fs.String("t1-catalogues", "", "T1: comma-separated catalogues to run (small, medium, large, services, trades, care, civic, travel, homes); empty: all")
	t1Dump := fs.String("t1-dump", "", "T1: write each catalogue's full tool list to DIR/<catalogue>.json.gz, as toolsearch's testdata/catalogues holds them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return a
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	e := &env{repo: abs(*repo), self: self, mcpgw: abs(*mcpgw), bridge: abs(*bridge), peers: *peers, smoke: *smokeFlag,
		rounds: *rounds, roundDur: *roundDur, warmup: 500 * time.Millisecond, sessionsN: *sessionsN, burstN: 1000,
		coldRuns: 5, benchTime: *benchTime, goBin: *goBin, soak: *soak, churnWarm: 2 * time.Second}
	if *alt != "" {
		e.alt = abs(*alt)
	}
	if e.peers != "" {
		e.peers = abs(e.peers)
	}
	smoke = *smokeFlag
	if *smokeFlag {
		e.rounds, e.roundDur, e.warmup, e.sessionsN, e.burstN, e.coldRuns, e.benchTime = 1, 100*time.Millisecond, 30*time.Millisecond, 200, 100, 1, "50x"
		e.soak, e.churnWarm = 300*time.Millisecond, 100*time.Millisecond
	}
	if *npmDir != "" {
		e.npmDir = abs(*npmDir)
	}
	e.t1Only, e.t1Dump = catalogueNames(*t1Only), *t1Dump
	e.nodeBin = findNode(e.repo, *nodeBin)
	for _, bin := range []string{e.mcpgw, e.bridge} {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s is missing: run make build first", bin)
		}
	}
	e.dir, err = os.MkdirTemp("", "mcpbench-")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(e.dir)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	defer stopAll()

	want := map[string]bool{}
	for _, id := range strings.Split(*which, ",") {
		want[strings.ToUpper(strings.TrimSpace(id))] = true
	}
	var results []*Result
	failed := 0
	outDir := abs(*out)
	for _, sc := range scenarios {
		if !want["ALL"] && !want[sc.id] {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		e.machine = describeMachine(e.repo, e.mcpgw)
		r := &Result{ID: sc.id, Params: map[string]any{}, Smoke: e.smoke}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "== %s\n", sc.id)
		logStart = start
		if err := sc.run(ctx, e, r); err != nil {
			r.Error = err.Error()
			failed++
			fmt.Fprintf(os.Stderr, "%s failed: %v\n", sc.id, err)
		}
		stopAll()
		r.Duration = time.Since(start).Round(10 * time.Millisecond).String()
		r.Machine = e.machine
		r.Machine.LoadAvgEnd = loadAvg()
		if err := r.write(outDir); err != nil {
			return err
		}
		fmt.Println(r.markdown())
		results = append(results, r)
	}
	if len(results) == 0 {
		return fmt.Errorf("no scenario matches %q", *which)
	}
	if _, err := writeSummary(outDir, results); err != nil {
		return err
	}
	held, total := countChecks(results)
	fmt.Printf("mcpbench: %d scenarios, %d of %d targets hold; results in %s\n", len(results), held, total, outDir)
	if *keep {
		fmt.Printf("mcpbench: scratch kept in %s\n", e.dir)
	}
	if failed > 0 {
		return fmt.Errorf("%d scenario(s) failed to run", failed)
	}
	return nil
}

// countChecks counts the targets of results and those that hold.
func countChecks(results []*Result) (held, total int) {
	for _, r := range results {
		for _, c := range r.Checks {
			total++
			if c.Pass {
				held++
			}
		}
	}
	return held, total
}
