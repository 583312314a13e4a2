package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/gateway"
	"github.com/mcpgw/mcpgw/internal/statedir"
)

// clientSpec is what one agent runtime's config needs.
type clientSpec struct {
	client, agent, executor, via, url string
	// conversation, when set, is sent as the conversation header (--conversation): the
	// agent's sessions then share thin handshakes.
	conversation       string
	conversationHeader string
	// task, when set, is sent as the task header (--task): every session of the run is
	// the task's, and sees only its servers.
	task       string
	taskHeader string
	bridge     string // absolute path of mcpgw-bridge
	socket     string // non-default daemon socket, absolute
	token      bool   // the gateway wants a bearer token
	// localToken is the gateway's local token, written into an HTTP entry where the OS
	// cannot name a TCP peer's user (auth mode none outside Linux), so the entry connects
	// with no manual step there too.
	localToken                  string
	agentHeader, executorHeader string // the configured identity header names
	bridgeURL                   bool   // the bridge must reach the gateway by URL
}

var clientTransports = map[string][]string{
	// Which of the gateway's routes each client can use (docs/clients/).
	"claude-code": {"http", "bridge"},
	"codex":       {"http", "bridge"},
	"cursor":      {"http", "bridge"},
	// Gemini CLI reads the legacy SSE transport too, spelled "type": "sse" (since 0.61 a
	// url without type is read as streamable HTTP).
	"gemini":   {"http", "bridge", "sse"},
	"qwen":     {"http", "bridge"},
	"opencode": {"http", "bridge"},
	// generic is the plain mcpServers shape with "type": "streamable-http", which clients
	// and tools written against that spelling read (docs/clients/generic.md).
	"generic": {"http", "bridge"},
}

func clientConfig(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("client-config", flag.ContinueOnError)
	cfgFlag := fs.String("config", "", "config file")
	agent := fs.String("agent", "", "agent id")
	client := fs.String("client", "", "claude-code | codex | cursor | gemini | qwen | opencode | generic")
	via := fs.String("via", "http", "http (the gateway's URL), bridge (spawn mcpgw-bridge over stdio) or, for gemini, sse (the legacy SSE transport at /sse)")
	executor := fs.String("executor", "", "executor whose url_rewrite applies (e.g. local_docker)")
	conversation := fs.String("conversation", "", "conversation id sent with every request (X-Conversation-ID, or the configured header)")
	task := fs.String("task", "", "task id sent with every request (X-Task-ID, or the configured header): the run sees only the task's servers")
	outFile := fs.String("out", "", "write the config to this file (mode 0600, replaced whole) instead of stdout: a per-run file, e.g. for claude --mcp-config FILE")
	allowedTools := fs.Bool("allowed-tools", false, "claude-code only: print instead the Claude Code name (mcp__mcpgw__<tool>) of every tool the agent may call (in --task, under --executor), one per line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *agent == "" || *client == "" {
		return fmt.Errorf("client-config needs --agent and --client")
	}
	vias, ok := clientTransports[*client]
	if !ok {
		return fmt.Errorf("unknown client %q (claude-code, codex, cursor, gemini, qwen, opencode)", *client)
	}
	if !contains(vias, *via) {
		return fmt.Errorf("client %s cannot use --via %s (it can: %s)", *client, *via, strings.Join(vias, ", "))
	}
	cfg, _, err := loadConfig(configPath(*cfgFlag))
	if err != nil {
		return err
	}
	if *allowedTools {
		if *client != "claude-code" {
			return fmt.Errorf("--allowed-tools is for --client claude-code (it prints Claude Code's names of the gateway's tools)")
		}
		return printClaudeToolNames(cfg, *agent, *task, *executor, out)
	}
	spec := clientSpec{task: *task, taskHeader: cfg.Auth.Headers.Task, client: *client, agent: *agent, executor: *executor, via: *via, url: gatewayURL(cfg),
		token: cfg.Auth.Mode != "none", agentHeader: cfg.Auth.Headers.Agent, executorHeader: cfg.Auth.Headers.Executor,
		conversation: *conversation, conversationHeader: cfg.Auth.Headers.Conversation}
	if *via == "bridge" {
		if err := spec.findBridge(cfg); err != nil {
			return err
		}
	}
	if *executor != "" {
		ex, ok := cfg.Executors[*executor]
		if !ok {
			return fmt.Errorf("unknown executor %q", *executor)
		}
		if u := auth.RewriteURL(spec.url, ex.MCPPolicy.URLRewrite); u != spec.url {
			// The agent runs where the host's socket is out of reach: the bridge goes by URL.
			spec.url, spec.bridgeURL = u, true
			// The bridge runs in the executor (a container), where a host path means
			// nothing: its command is whatever the executor's image has on PATH.
			spec.bridge = "mcpgw-bridge"
		}
	}
	if cfg.Auth.Mode == "none" && *via != "bridge" && runtime.GOOS != "linux" {
		if spec.localToken, err = statedir.ReadToken(cfg.StateDir); err != nil {
			fmt.Fprintf(notes, "mcpgw client-config: %v; start the gateway once (it makes the token), then run this again: outside Linux a client over HTTP needs it\n", err)
		}
	}
	b, err := renderClientConfig(spec)
	if err != nil {
		return err
	}
	if *outFile != "" {
		return writeRunFile(*outFile, b)
	}
	_, err = out.Write(b)
	return err
}

// claudeServerKey is the mcpServers key client-config writes for Claude Code; Claude Code
// names a tool of that entry mcp__<key>__<tool>.
const claudeServerKey = "mcpgw"

// printClaudeToolNames prints, one per line, the name Claude Code gives each tool the
// agent may call (mcp__mcpgw__<exposed name>): the names its --allowedTools and
// permissions.allow match, where a name written for the upstream alone
// (mcp__filesystem__read_file) never does. The tools are decided as mcpgw explain
// decides them.
func printClaudeToolNames(cfg *config.Config, agent, task, executor string, out io.Writer) error {
	if _, ok := cfg.Tasks[task]; task != "" && !ok {
		// A task made through the admin API lives in the running gateway's store.
		base := strings.TrimSuffix(gatewayURL(cfg), "/mcp")
		return fmt.Errorf("task %q is not in the config file; for a task made through the admin API ask the gateway: GET %s/api/agents/%s/view?task=%s", task, base, agent, task)
	}
	v, err := explainView(cfg, agent, task, executor)
	if err != nil {
		return err
	}
	for _, w := range v.Warnings {
		fmt.Fprintln(notes, "mcpgw client-config: warning:", w)
	}
	var b strings.Builder
	for _, d := range v.Tools {
		if d.Admitted {
			b.WriteString("mcp__" + claudeServerKey + "__" + d.Tool + "\n")
		}
	}
	_, err = io.WriteString(out, b.String())
	return err
}

// writeRunFile writes a client config to path, replacing it whole (a reader never sees
// half a file) with mode 0600: the config may hold a token.
func writeRunFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	fmt.Fprintf(notes, "mcpgw client-config: wrote %s\n", path)
	return nil
}

// findBridge sets the bridge's command and, when the daemon's socket is not the default
// one, its socket.
func (s *clientSpec) findBridge(cfg *config.Config) error {
	// The agent spawns the bridge from its own working directory, with a PATH that may
	// not hold ~/.local/bin (a desktop app's): every path in its entry is absolute.
	var err error
	if s.bridge, err = bridgeCommand(); err != nil {
		return err
	}
	stateDir, err := filepath.Abs(cfg.StateDir)
	if err != nil {
		return err
	}
	if stateDir != cfg.StateDir {
		fmt.Fprintf(notes, "mcpgw client-config: state_dir %q is relative; the daemon resolves it against its working directory, taken here as this one: %s\n", cfg.StateDir, stateDir)
	}
	if def, err := filepath.Abs(config.DefaultStateDir()); err != nil || stateDir != def {
		s.socket = gateway.SocketPath(stateDir)
	}
	return nil
}

// notes receives what client-config tells its user besides the config block (stderr).
var notes io.Writer = os.Stderr

// bridgeCommand is the absolute path of the mcpgw-bridge an agent should spawn: the one on
// PATH (what `make install` put in place, which survives a `make clean` of the build
// tree), else the one next to this executable (bin/ in a build tree). With neither, it is
// the path next to this executable, with a note that it is missing. Tests replace it.
var bridgeCommand = func() (string, error) {
	var sibling string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		sibling = filepath.Join(filepath.Dir(exe), "mcpgw-bridge")
	}
	if p, err := exec.LookPath("mcpgw-bridge"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs, nil
		}
	}
	if sibling == "" {
		return "", fmt.Errorf("cannot find mcpgw-bridge: it is not on PATH and the path of this executable is unknown; run `make install`")
	}
	if fi, err := os.Stat(sibling); err != nil || fi.IsDir() {
		fmt.Fprintf(notes, "mcpgw client-config: mcpgw-bridge is neither on PATH nor at %s; run `make install` (or `make build`) before the agent starts it\n", sibling)
	}
	return sibling, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// gatewayURL is the URL clients use: the listener, with a wildcard host made loopback.
func gatewayURL(cfg *config.Config) string {
	host, port, _ := net.SplitHostPort(cfg.Listen)
	switch host {
	case "", "0.0.0.0", "::":
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/mcp"
}

func (s clientSpec) bridgeArgs() []string {
	args := []string{"--agent", s.agent}
	switch {
	case s.bridgeURL:
		args = append(args, "--url", s.url)
	case s.socket != "":
		args = append(args, "--socket", s.socket)
	}
	if s.executor != "" {
		args = append(args, "--executor", s.executor)
	}
	if s.conversation != "" {
		args = append(args, "--conversation", s.conversation)
	}
	if s.task != "" {
		args = append(args, "--task", s.task)
	}
	return args
}

// renderClientConfig prints the block for the client's own config format.
func renderClientConfig(s clientSpec) ([]byte, error) {
	headers := map[string]string{s.agentHeader: s.agent}
	if s.executor != "" {
		headers[s.executorHeader] = s.executor
	}
	if s.conversation != "" {
		headers[s.conversationHeader] = s.conversation
	}
	if s.task != "" {
		headers[s.taskHeader] = s.task
	}
	// Each client spells "take this from the environment" its own way.
	tokenRef := map[string]string{
		"claude-code": "Bearer ${MCPGW_TOKEN}",
		"cursor":      "Bearer ${env:MCPGW_TOKEN}",
		"gemini":      "Bearer $MCPGW_TOKEN",
		"qwen":        "Bearer $MCPGW_TOKEN",
		"opencode":    "Bearer {env:MCPGW_TOKEN}",
		"generic":     "Bearer ${MCPGW_TOKEN}",
	}
	if s.token && s.client != "codex" {
		headers["Authorization"] = tokenRef[s.client]
	}
	if s.localToken != "" {
		headers["Authorization"] = "Bearer " + s.localToken
	}
	bridgeEnv := map[string]string{}
	if s.token {
		bridgeEnv["MCPGW_TOKEN"] = strings.TrimPrefix(tokenRef[s.client], "Bearer ")
	}
	var server map[string]any
	switch s.client {
	case "codex":
		return renderCodex(s), nil
	case "claude-code":
		if s.via == "bridge" {
			server = map[string]any{"type": "stdio", "command": s.bridge, "args": s.bridgeArgs()}
		} else {
			server = map[string]any{"type": "http", "url": s.url, "headers": headers}
		}
	case "generic":
		if s.via == "bridge" {
			server = map[string]any{"type": "stdio", "command": s.bridge, "args": s.bridgeArgs()}
		} else {
			server = map[string]any{"type": "streamable-http", "url": s.url, "headers": headers}
		}
	case "cursor":
		if s.via == "bridge" {
			server = map[string]any{"command": s.bridge, "args": s.bridgeArgs()}
		} else {
			server = map[string]any{"url": s.url, "headers": headers}
		}
	case "gemini", "qwen":
		switch s.via {
		case "bridge":
			server = map[string]any{"command": s.bridge, "args": s.bridgeArgs()}
		case "sse":
			// The legacy transport's stream is /sse beside /mcp (internal/gateway/internal/legacysse).
			server = map[string]any{"type": "sse", "url": strings.TrimSuffix(s.url, "/mcp") + "/sse", "headers": headers}
		default:
			server = map[string]any{"httpUrl": s.url, "headers": headers}
		}
	case "opencode":
		var srv map[string]any
		if s.via == "bridge" {
			srv = map[string]any{"type": "local", "command": append([]string{s.bridge}, s.bridgeArgs()...), "enabled": true}
			if len(bridgeEnv) > 0 {
				srv["environment"] = bridgeEnv
			}
		} else {
			srv = map[string]any{"type": "remote", "url": s.url, "headers": headers, "enabled": true}
		}
		return marshal(map[string]any{"$schema": "https://opencode.ai/config.json", "mcp": map[string]any{"mcpgw": srv}})
	}
	if s.via == "bridge" && len(bridgeEnv) > 0 {
		server["env"] = bridgeEnv
	}
	return marshal(map[string]any{"mcpServers": map[string]any{"mcpgw": server}})
}

func marshal(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// renderCodex writes Codex's TOML (~/.codex/config.toml).
func renderCodex(s clientSpec) []byte {
	var b bytes.Buffer
	b.WriteString("[mcp_servers.mcpgw]\n")
	if s.via == "bridge" {
		b.WriteString("command = " + strconv.Quote(s.bridge) + "\n")
		b.WriteString("args = [")
		for i, a := range s.bridgeArgs() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(a))
		}
		b.WriteString("]\n")
		if s.token {
			b.WriteString("env_vars = [\"MCPGW_TOKEN\"]\n")
		}
		return b.Bytes()
	}
	b.WriteString("url = " + strconv.Quote(s.url) + "\n")
	if s.token {
		b.WriteString("bearer_token_env_var = \"MCPGW_TOKEN\"\n")
	}
	hs := map[string]string{s.agentHeader: s.agent}
	if s.conversation != "" {
		hs[s.conversationHeader] = s.conversation
	}
	if s.task != "" {
		hs[s.taskHeader] = s.task
	}
	if s.localToken != "" {
		hs["Authorization"] = "Bearer " + s.localToken
	}
	if s.executor != "" {
		hs[s.executorHeader] = s.executor
	}
	keys := make([]string, 0, len(hs))
	for k := range hs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("http_headers = { ")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(k) + " = " + strconv.Quote(hs[k]))
	}
	b.WriteString(" }\n")
	return b.Bytes()
}
