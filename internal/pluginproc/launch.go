package pluginproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/mcpgw/mcpgw/internal/pluginpb"
	"github.com/mcpgw/mcpgw/plugin"
)

// Command is a plugin executable to start.
type Command struct {
	Name   string          // the plugin's name, for logs
	Path   string          // the executable (looked up on PATH when it has no slash)
	Args   []string        // its arguments
	Env    []string        // "KEY=value" pairs added to (and overriding) the gateway's environment
	Dir    string          // its working directory ("": the gateway's)
	Config json.RawMessage // sent to the plugin's open function; nil: none
	Logger *slog.Logger    // gets the plugin's stdout, stderr and go-plugin's own messages
	// MaxMessageBytes bounds one answer from the plugin (0: go-plugin's, 2 GiB). The host
	// refuses a larger one after reading its 5-byte gRPC header, before its body, and the
	// plugin is told the bound (MaxMessageEnv), so it refuses to send more instead.
	MaxMessageBytes int
	// BusyWait is the host's busy waiting for plugin calls, shared by the plugins it
	// launches (nil: calls always wait in the poller).
	BusyWait *BusyWait
}

// MaxMessageEnv is the environment variable that tells a plugin process how large one
// answer to the host may be (Command.MaxMessageBytes); Serve reads it.
const MaxMessageEnv = "MCPGW_PLUGIN_MAX_MESSAGE_BYTES"

// DefaultEnv is added to a plugin's environment after the gateway's and before the
// plugin's own env, which overrides it: one KEY=value pair.
//
// GOMAXPROCS=1: a plugin answers one small request at a time for the host, which waits
// for it. With more than one P, every call in the plugin process hands work between
// threads (gRPC's reader, the call's goroutine, its writer), each handoff a futex wake of
// another thread and idle threads spinning to steal work: strace -c -f of
// bin/mcpgw-plugin-sql under S13 counted 6 futex and 7.5 nanosleep calls per tool call
// with GOMAXPROCS=2, 0.6 and 1.8 with 1, and the call's p50 fell by 40-60 µs. A plugin
// whose provider does CPU-heavy work in parallel sets GOMAXPROCS in its env.
const DefaultEnv = "GOMAXPROCS=1"

// DefaultStartTimeout bounds the start (process, handshake, Open) when ctx has no deadline.
const DefaultStartTimeout = time.Minute

// Launch starts the executable, checks go-plugin's handshake, sends the plugin its
// config, and returns its provider: a *Remote, wrapped so that it also implements
// plugin.ActionProvider and plugin.Watcher when the remote provider does. The value
// implements io.Closer (ending the process), Refresh(ctx), and Exited() and Err() for the
// host to learn that the process went. ctx bounds the start only.
func Launch(ctx context.Context, c Command) (plugin.Plugin, error) {
	if c.Path == "" {
		return nil, errors.New("no command to start")
	}
	log := c.Logger
	if log == nil {
		log = slog.Default()
	}
	log = log.With("plugin", c.Name)
	timeout := DefaultStartTimeout
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	var proc *procRunner
	client := goplugin.NewClient(&goplugin.ClientConfig{
		// go-plugin hands the runner a blank command holding only its own variables (the
		// cookie, the socket directory): the plugin gets the gateway's environment, then
		// env, then those.
		RunnerFunc: func(l hclog.Logger, spec *exec.Cmd, _ string) (runner.Runner, error) {
			cmd := exec.Command(c.Path, c.Args...)
			cmd.Env = append(append(append(os.Environ(), DefaultEnv), c.Env...), spec.Env...)
			if c.MaxMessageBytes > 0 {
				cmd.Env = append(cmd.Env, MaxMessageEnv+"="+strconv.Itoa(c.MaxMessageBytes))
			}
			cmd.Dir = c.Dir
			r, err := newProcRunner(l, cmd)
			proc = r
			return r, err
		},
		PluginLogBufferSize: logBuffer,
		HandshakeConfig:     handshake(),
		Plugins:             goplugin.PluginSet{pluginName: &grpcPlugin{}},
		SkipHostEnv:         true, // the runner adds it, with the plugin's own variables after it
		AllowedProtocols:    []goplugin.Protocol{goplugin.ProtocolGRPC},
		GRPCDialOptions:     dialOptions(c.MaxMessageBytes, c.BusyWait),
		StartTimeout:        timeout,
		Logger:              newHCLogger(log, filepath.Base(c.Path)),
		SyncStdout:          &lineLogger{log: log, level: slog.LevelInfo, stream: "stdout"},
		SyncStderr:          &lineLogger{log: log, level: slog.LevelWarn, stream: "stderr"},
	})
	fail := func(err error) (plugin.Plugin, error) {
		client.Kill()
		return nil, err
	}
	stop := context.AfterFunc(ctx, client.Kill) // a start that outlives ctx ends
	defer stop()
	rpc, err := client.Client()
	if err != nil {
		return fail(fmt.Errorf("starting plugin %s: %w", c.Path, err))
	}
	raw, err := rpc.Dispense(pluginName)
	if err != nil {
		return fail(fmt.Errorf("plugin %s: %w", c.Path, err))
	}
	pc, ok := raw.(pluginpb.ProviderClient)
	if !ok {
		return fail(fmt.Errorf("plugin %s: go-plugin returned %T", c.Path, raw))
	}
	cfg := []byte(c.Config)
	if string(cfg) == "null" {
		cfg = nil
	}
	opened, err := pc.Open(ctx, &pluginpb.OpenRequest{Config: cfg})
	if err != nil {
		return fail(fmt.Errorf("plugin %s: %w", c.Path, fromStatus(err)))
	}
	waitCtx, stopWait := context.WithCancel(context.Background())
	r := &Remote{c: pc, kill: client.Kill, stopWait: stopWait, exited: make(chan struct{}), proc: proc}
	w, err := pc.Wait(waitCtx, &pluginpb.Empty{})
	if err != nil {
		stopWait()
		return fail(fmt.Errorf("plugin %s: %w", c.Path, fromStatus(err)))
	}
	go r.watch(w.Recv, client.Exited)
	return shaped(r, opened.Actions, opened.Watcher), nil
}

// watch waits for the Wait stream to break and records why: the process exited, or the
// connection to it was lost (which ends the process too: Serve exits with the host's
// connection, and the host kills it on Close).
func (r *Remote) watch(recv func() (*pluginpb.Empty, error), exited func() bool) {
	var err error
	for err == nil {
		_, err = recv()
	}
	r.mu.Lock()
	closing := r.closing
	r.mu.Unlock()
	if closing {
		return // Close ended it; not a crash
	}
	// go-plugin reaps the process a moment after the socket closed.
	for i := 0; i < 50 && !exited(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	why := fmt.Errorf("lost the connection to the plugin process: %v", fromStatus(err))
	if exited() {
		why = errors.New("the plugin process exited")
		if werr, done := r.proc.exit(); done && werr != nil {
			why = fmt.Errorf("the plugin process exited (%v)", werr)
		}
	}
	r.mu.Lock()
	r.exitErr = why
	r.mu.Unlock()
	close(r.exited)
	r.kill() // reap it, and end it if only the connection was lost
}
