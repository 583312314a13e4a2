// Command mcpgw is the MCP gateway daemon and its admin CLI.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/embedded"
	"github.com/mcpgw/mcpgw/embedded/pluginkinds"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/registry"
	"github.com/mcpgw/mcpgw/internal/registry/pluginkind"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `mcpgw — an MCP gateway: one endpoint in front of many MCP servers.

Usage:
  mcpgw serve    [--config FILE]   run the gateway
  mcpgw validate [--config FILE] [--offline]
                                    check a config: every problem is listed; plugins are
                                    checked without starting them; with upstreams
                                    connected, also name collisions
  mcpgw explain  --agent A [--task T] [--executor E] [--config FILE] [--json]
                                    every tool, admitted or hidden, and the rule
  mcpgw token create-runner-key --executor E [--gateway URL] [--config FILE]
  mcpgw token create-key --agent A | --admin [--read-only] [--connection-scope ID,…] [--config FILE]
                                    create an API key for agent A (printed once)
  mcpgw token issue --agent A [--admin] [--ttl 1h] [--read-only] [--connection-scope ID,…]
                    [--config FILE]     mint a JWT with the config's signing key
  mcpgw client-config --agent A --client claude-code|codex|cursor|gemini|qwen|opencode
                    [--via http|bridge] [--executor E] [--conversation ID] [--task T]
                    [--out FILE] [--config FILE]
                                    print the block for that client's config file
                                    (--out: write it to FILE, 0600, a per-run file)
  mcpgw client-config --agent A --client claude-code --allowed-tools [--task T] [--executor E]
                                    Claude Code's name of every tool A may call
  mcpgw top [--url URL] [--key KEY] [--minutes 15] [--every 5s] [--config FILE]
                                    calls, errors, p50/p99 and list tokens per agent
                                    and tool of a running gateway (GET /api/usage)
  mcpgw ui [--config FILE]          print the web UI's address, signed in with the
                                    gateway's local token (state_dir/local-token)
  mcpgw version                     print the version

The config defaults to $MCPGW_CONFIG, else ./mcpgw.yaml if it exists, else the embedded
defaults (no upstreams, 127.0.0.1:8080). See docs/config.md.
`

func main() {
	// The daemon is its own guardian (Options.GuardianPath): a stdio upstream runs under
	// `mcpgw __mcpgw_child COMMAND ARGS...`.
	embedded.RunGuardian(os.Args)
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "validate":
		err = validate(os.Args[2:], os.Stdout)
	case "explain":
		err = explain(os.Args[2:], os.Stdout)
	case "token":
		err = token(os.Args[2:], os.Stdout)
	case "client-config":
		err = clientConfig(os.Args[2:], os.Stdout)
	case "top":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = top(ctx, os.Args[2:], os.Stdout)
		stop()
	case "ui":
		err = uiAddress(os.Args[2:], os.Stdout)
	case "version", "--version", "-v":
		fmt.Println("mcpgw", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "mcpgw: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		// A subcommand's -h printed its flags: asking for help is not a failure.
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpgw:", err)
		os.Exit(1)
	}
}

func configPath(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if env := os.Getenv("MCPGW_CONFIG"); env != "" {
		return env
	}
	if _, err := os.Stat("mcpgw.yaml"); err == nil {
		return "mcpgw.yaml"
	}
	return ""
}

func loadConfig(path string) (*config.Config, config.Problems, error) {
	if path == "" {
		return config.Parse(nil)
	}
	return config.Load(path)
}

// logLevel is the daemon logger's level; the gateway changes it when the config's
// log.level changes while it runs.
var logLevel = new(slog.LevelVar)

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(cfg.Log.Level))
	logLevel.Set(lvl)
	opts := &slog.HandlerOptions{Level: logLevel}
	if cfg.Log.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func validate(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	cfgFlag := fs.String("config", "", "config file")
	offline := fs.Bool("offline", false, "do not connect to upstreams (skips name collision checks)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	path := configPath(*cfgFlag)
	cfg, ps, err := loadConfig(path)
	for _, p := range ps {
		fmt.Fprintln(out, p.String())
	}
	if err != nil {
		var probs config.Problems
		if errors.As(err, &probs) {
			return fmt.Errorf("%s: invalid config", display(path))
		}
		return err
	}
	// Plugins are checked statically, never started: starting one may create its database.
	pps := registry.CheckPlugins(context.Background(), cfg, pluginkind.All())
	for _, p := range pps {
		fmt.Fprintln(out, p.String())
	}
	if pps.HasErrors() {
		return fmt.Errorf("%s: invalid config", display(path))
	}
	if !*offline && len(cfg.Servers) > 0 {
		// Upstreams only: starting a plugin may create its database (a seed), which
		// checking a file must not do.
		servers := *cfg
		servers.Plugins = nil
		reg := registry.New(&servers, slog.New(slog.NewTextHandler(io.Discard, nil)))
		reg.NoPools = true // checking lists tools: no warm instances
		wait := gateway.StartWindow(cfg)
		reg.Start(wait)
		for _, st := range reg.Statuses() {
			if st.State != registry.StateUp {
				why := st.Error
				if why == "" {
					// Still starting: it neither answered nor failed in the time given.
					why = fmt.Sprintf("no answer to initialize within %s", wait)
				}
				fmt.Fprintf(out, "warning: servers.%s: could not list its tools (%s): %s\n", st.Name, st.State, why)
			}
			for _, p := range st.Problems {
				fmt.Fprintf(out, "warning: servers.%s: %s\n", st.Name, p)
			}
		}
		coll := reg.Collisions()
		reg.Close()
		for _, p := range coll {
			fmt.Fprintln(out, p.String())
		}
		if len(coll) > 0 {
			return fmt.Errorf("%s: invalid config", display(path))
		}
	}
	if len(cfg.Plugins) > 0 {
		fmt.Fprintf(out, "%s: ok (%d servers, %d plugins)\n", display(path), len(cfg.Servers), len(cfg.Plugins))
		return nil
	}
	fmt.Fprintf(out, "%s: ok (%d servers)\n", display(path), len(cfg.Servers))
	return nil
}

func display(path string) string {
	if path == "" {
		return "embedded defaults"
	}
	return path
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfgFlag := fs.String("config", "", "config file")
	listen := fs.String("listen", "", "override the config's listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	path := configPath(*cfgFlag)
	cfg, ps, err := loadConfig(path)
	if err != nil {
		for _, p := range ps {
			fmt.Fprintln(os.Stderr, p.String())
		}
		return fmt.Errorf("%s: invalid config; nothing started", display(path))
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	log := newLogger(cfg, os.Stderr)
	slog.SetDefault(log)
	if os.Getenv("GOGC") == "" {
		// The live heap is small and the call path allocates, so the default GOGC=100
		// collects all the time; 400 was measured here to cut GC CPU by about half
		// (docs/performance.md). GOGC in the environment wins.
		debug.SetGCPercent(400)
	}
	for _, p := range ps {
		log.Warn("config", "problem", p.String())
	}
	if err := checkListener(cfg, log, *listen != ""); err != nil {
		return err
	}
	peer := make(chan struct{}, 1)
	// The daemon runs every plugin kind: the sql plugin and out-of-process plugins.
	opts := embedded.Options{Logger: log, LogLevel: logLevel, Version: version, PluginKinds: pluginkinds.All()}
	if exe, err := os.Executable(); err == nil {
		opts.GuardianPath = exe
	}
	if path != "" {
		// Another replica reloaded: read the file again (merged with the stored API
		// entries). Without a file the gateway re-applies the stored entries itself.
		opts.OnPeerReload = func() {
			select {
			case peer <- struct{}{}:
			default:
			}
		}
	}
	// The daemon is the embedding API's first host: an embedding program runs the same
	// code (package embedded).
	g, err := embedded.New(cfg, opts)
	if err != nil {
		return fmt.Errorf("%s: %w; nothing started", display(path), err)
	}
	defer g.Close()
	if err := g.Start(context.Background()); err != nil {
		var coll config.Problems
		if errors.As(err, &coll) {
			for _, p := range coll {
				fmt.Fprintln(os.Stderr, p.String())
			}
			return fmt.Errorf("%s: invalid config (exposed name collisions); nothing started", display(path))
		}
		return fmt.Errorf("%s: %w; nothing started", display(path), err)
	}
	ln, err := g.Listen()
	if err != nil {
		return err
	}
	sockPath, err := g.StartSocket("")
	if err != nil {
		ln.Close()
		return err
	}
	log.Info("mcpgw listening", "addr", "http://"+ln.Addr().String()+"/mcp", "version", version,
		"servers", len(cfg.Servers), "state_dir", cfg.StateDir, "store", cfg.Store, "socket", sockPath,
		"ui", "http://"+ln.Addr().String()+"/ui/ (mcpgw ui prints a signed-in address)")

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	errc := make(chan error, 1)
	go func() { errc <- g.Serve(ln) }()
	stopWatch := make(chan struct{})
	go watchConfig(path, cfg, g, log, hup, peer, stopWatch)
	select {
	case sig := <-sigs:
		log.Info("shutting down", "signal", sig.String())
	case err := <-errc:
		if err != nil {
			log.Error("server failed", "err", err)
		}
	}
	close(stopWatch)
	return g.Close()
}

// checkListener runs the listen checks again after a --listen override; the config's own
// listen address was checked (and its warnings logged) when it loaded.
func checkListener(cfg *config.Config, log *slog.Logger, overridden bool) error {
	if !overridden {
		return nil
	}
	ps := cfg.ListenProblems()
	for _, p := range ps.Warnings() {
		log.Warn("config", "problem", p.String())
	}
	if ps.HasErrors() {
		return ps
	}
	return nil
}
