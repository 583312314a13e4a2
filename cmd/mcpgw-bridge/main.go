// Command mcpgw-bridge lets an MCP client that only speaks stdio use the mcpgw daemon: it
// relays newline-delimited JSON-RPC between stdin/stdout and the daemon's Unix socket (or
// a remote gateway's streamable HTTP endpoint), and hides daemon restarts.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpgw/mcpgw/internal/bridge"
	"github.com/mcpgw/mcpgw/internal/statedir"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "runner" {
		os.Exit(runRunner(os.Args[2:]))
	}
	env := func(k string) string { return os.Getenv(k) }
	socket := flag.String("socket", "", "daemon Unix socket (default $MCPGW_SOCKET, else STATE_DIR/mcpgw.sock)")
	url := flag.String("url", "", "remote gateway endpoint, e.g. https://gw.example/mcp (token from $MCPGW_TOKEN)")
	agent := flag.String("agent", env("MCPGW_AGENT_ID"), "agent id ($MCPGW_AGENT_ID)")
	conv := flag.String("conversation", env("MCPGW_CONVERSATION_ID"), "conversation id ($MCPGW_CONVERSATION_ID)")
	task := flag.String("task", env("MCPGW_TASK_ID"), "task id ($MCPGW_TASK_ID)")
	executor := flag.String("executor", env("MCPGW_EXECUTOR_ID"), "executor id ($MCPGW_EXECUTOR_ID)")
	reconnect := flag.Duration("reconnect-for", 30*time.Second, "how long to wait for a daemon that is away (once per outage)")
	drain := flag.Duration("drain-for", bridge.DefaultDrainFor, "after stdin closes, how long to wait for the answers still in flight")
	socketHTTP := flag.Bool("socket-http", false, "relay over the socket with one HTTP exchange per message instead of its line mode")
	debug := flag.Bool("debug", false, "log debug messages to stderr")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: mcpgw-bridge [--agent A] [--socket PATH | --url URL] [flags]\n\n"+
			"Relays MCP between stdin/stdout and the mcpgw daemon (by default its socket %s).\n"+
			"stdout carries MCP only; logs go to stderr.\n\n", statedir.Socket(statedir.Default()))
		flag.PrintDefaults()
	}
	flag.Parse()
	if *showVersion {
		fmt.Println("mcpgw-bridge", version)
		return
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "mcpgw-bridge: unexpected argument %q (flags start with --)\n", flag.Arg(0))
		flag.Usage()
		os.Exit(2)
	}
	if *socket != "" && *url != "" {
		fmt.Fprintln(os.Stderr, "mcpgw-bridge: --socket and --url exclude each other: pick the local daemon's socket or a remote gateway")
		os.Exit(2)
	}
	lvl := slog.LevelInfo
	if *debug {
		lvl = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})).With("component", "mcpgw-bridge")

	o := bridge.Options{URL: *url, Token: os.Getenv("MCPGW_TOKEN"), Agent: *agent, Conversation: *conv, Task: *task,
		Executor: *executor, ReconnectFor: *reconnect, DrainFor: *drain, SocketHTTP: *socketHTTP, Log: log}
	if o.URL == "" {
		o.Socket = *socket
		if o.Socket == "" {
			o.Socket = os.Getenv("MCPGW_SOCKET")
		}
		if o.Socket == "" {
			o.Socket = statedir.Socket(statedir.Default())
		}
	}

	// Leave with the parent: the OS tells us when it dies (parent_*.go), and we also poll.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	leaveWithParent(func() { log.Info("parent exited; leaving"); stop() })
	parent := os.Getppid()
	go func() {
		for range time.Tick(500 * time.Millisecond) {
			if os.Getppid() != parent {
				log.Info("parent exited; leaving")
				stop()
				return
			}
		}
	}()

	go func() {
		// A read of stdin cannot be interrupted; leave once the relay has been told to stop.
		<-ctx.Done()
		time.Sleep(200 * time.Millisecond)
		os.Exit(0)
	}()
	b := bridge.New(o, os.Stdout)
	if err := b.Run(ctx, os.Stdin); err != nil && ctx.Err() == nil {
		log.Error("bridge stopped", "err", err)
		os.Exit(1)
	}
}
