package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/internal/bridge"
	"github.com/mcpgw/mcpgw/internal/runnerlink"
)

// runRunner is `mcpgw-bridge runner`: run, in this executor's environment, the stdio
// servers the gateway asks for (docs/runners.md). It returns the exit code: 0 when told
// to stop, 1 on a usage error or a gateway that stayed away, 3 when the gateway refused
// the credential.
func runRunner(args []string) int {
	fs := flag.NewFlagSet("runner", flag.ContinueOnError)
	gw := fs.String("gateway", os.Getenv("MCPGW_GATEWAY"), "the gateway: http(s)://host:port or unix:/path/to/socket ($MCPGW_GATEWAY)")
	executor := fs.String("executor", os.Getenv("MCPGW_EXECUTOR_ID"), "the executor this runner serves ($MCPGW_EXECUTOR_ID)")
	tokenFile := fs.String("token-file", "", "read the runner key from this file (else $MCPGW_RUNNER_TOKEN)")
	maxBackoff := fs.Duration("max-backoff", 30*time.Second, "longest wait between two connection attempts")
	attempts := fs.Int("attempts", 0, "give up after this many failed connection attempts in a row (0: never)")
	debug := fs.Bool("debug", false, "log debug messages to stderr")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mcpgw-bridge runner --gateway URL --executor NAME [--token-file F]\n\n"+
			"Runs, where it is started (a container, a VM), the stdio MCP servers the gateway asks\n"+
			"for this executor's sessions, over one connection it opens to the gateway.\n"+
			"The key comes from $MCPGW_RUNNER_TOKEN or --token-file, never from the command line.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	token := os.Getenv("MCPGW_RUNNER_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpgw-bridge runner:", err)
			return 2
		}
		token = string(trimSpace(b))
	}
	if *gw == "" || *executor == "" || token == "" {
		fmt.Fprintln(os.Stderr, "mcpgw-bridge runner: --gateway, --executor and a key ($MCPGW_RUNNER_TOKEN or --token-file) are required")
		fs.Usage()
		return 2
	}
	lvl := slog.LevelInfo
	if *debug {
		lvl = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})).With("component", "mcpgw-runner", "executor", *executor)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	err := bridge.RunRunner(ctx, bridge.RunnerOptions{Gateway: *gw, Executor: *executor, Token: token, Version: version,
		MaxBackoff: *maxBackoff, Attempts: *attempts, Log: log})
	switch {
	case errors.Is(err, runnerlink.ErrRefused):
		log.Error("the gateway refused this runner's key", "err", err)
		return 3
	case err != nil:
		log.Error("runner stopped", "err", err)
		return 1
	}
	return 0
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}
