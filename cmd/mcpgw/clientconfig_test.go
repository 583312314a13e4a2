package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	toml "github.com/pelletier/go-toml/v2"
)

var update = flag.Bool("update", false, "rewrite testdata/client-config/*.golden from the current output")

// The inputs (testdata/client-config/{none,jwt}.yaml) listen on 127.0.0.1:8080 with state
// dir /srv/mcpgw and define executor "docker" rewriting http://127.0.0.1: to
// http://host.docker.internal:.
const (
	ccAgent     = "a1"
	ccExecutor  = "docker"
	ccURL       = "http://127.0.0.1:8080/mcp"
	ccDockerURL = "http://host.docker.internal:8080/mcp"
	ccSocket    = "/srv/mcpgw/mcpgw.sock"
	// ccBridge is where the golden tests' mcpgw-bridge is (fixBridgeCommand).
	ccBridge = "/opt/mcpgw/bin/mcpgw-bridge"
)

// fixBridgeCommand makes client-config name path as the bridge's command for the rest of
// the test, so that the output does not depend on the machine's PATH.
func fixBridgeCommand(t *testing.T, path string) {
	t.Helper()
	old := bridgeCommand
	bridgeCommand = func() (string, error) { return path, nil }
	t.Cleanup(func() { bridgeCommand = old })
}

// ccClients are the runtimes docs/clients/ covers.
var ccClients = []string{"claude-code", "codex", "cursor", "gemini", "generic", "opencode", "qwen"}

type ccCase struct {
	client, via, executor, auth string
}

func (c ccCase) name() string {
	ex := "noexec"
	if c.executor != "" {
		ex = "exec-" + c.executor
	}
	return fmt.Sprintf("%s-%s-%s-%s", c.client, c.via, ex, c.auth)
}

func (c ccCase) wantURL() string {
	u := ccURL
	if c.executor != "" {
		u = ccDockerURL
	}
	if c.via == "sse" {
		return strings.TrimSuffix(u, "/mcp") + "/sse"
	}
	return u
}

func runClientConfig(t *testing.T, cfgPath string, args ...string) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	err := clientConfig(append([]string{"--config", cfgPath}, args...), &buf)
	return buf.Bytes(), err
}

// TestClientConfigGolden: every client × via × executor × auth against its golden file,
// then parsed with a real parser and checked against the shape that client reads.
func TestClientConfigGolden(t *testing.T) {
	fixBridgeCommand(t, ccBridge)
	if got := slices.Sorted(maps.Keys(clientTransports)); !slices.Equal(got, ccClients) {
		t.Errorf("clients %v, want %v", got, ccClients)
	}
	for _, client := range ccClients {
		for _, via := range clientTransports[client] {
			for _, executor := range []string{"", ccExecutor} {
				for _, auth := range []string{"none", "jwt"} {
					c := ccCase{client, via, executor, auth}
					t.Run(c.name(), func(t *testing.T) {
						args := []string{"--agent", ccAgent, "--client", client, "--via", via}
						if executor != "" {
							args = append(args, "--executor", executor)
						}
						out, err := runClientConfig(t, filepath.Join("testdata", "client-config", auth+".yaml"), args...)
						if err != nil {
							t.Fatalf("client-config %v: %v", args, err)
						}
						ext := ".json"
						if client == "codex" {
							ext = ".toml"
						}
						golden := filepath.Join("testdata", "client-config", c.name()+ext+".golden")
						if *update {
							if err := os.WriteFile(golden, out, 0o644); err != nil {
								t.Fatal(err)
							}
						}
						want, err := os.ReadFile(golden)
						if err != nil {
							t.Fatalf("%v (run go test -run TestClientConfigGolden -update)", err)
						}
						if !bytes.Equal(out, want) {
							t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", golden, out, want)
						}
						checkClientConfig(t, c, out)
					})
				}
			}
		}
	}
}

// bridgeFlags parses args as mcpgw-bridge would (cmd/mcpgw-bridge/main.go's flags).
type bridgeFlags struct {
	socket, url, agent, conversation, task, executor string
}

func parseBridgeArgs(t *testing.T, args []string) bridgeFlags {
	t.Helper()
	var b bridgeFlags
	fs := flag.NewFlagSet("mcpgw-bridge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&b.socket, "socket", "", "")
	fs.StringVar(&b.url, "url", "", "")
	fs.StringVar(&b.agent, "agent", "", "")
	fs.StringVar(&b.conversation, "conversation", "", "")
	fs.StringVar(&b.task, "task", "", "")
	fs.StringVar(&b.executor, "executor", "", "")
	fs.Duration("reconnect-for", 30*time.Second, "")
	fs.Bool("debug", false, "")
	if err := fs.Parse(args); err != nil {
		t.Errorf("mcpgw-bridge would refuse args %q: %v", args, err)
	}
	if fs.NArg() > 0 {
		t.Errorf("mcpgw-bridge args %q: stray positional arguments %q", args, fs.Args())
	}
	return b
}

// checkBridge checks a stdio entry: the command is mcpgw-bridge with args it accepts,
// naming the agent, the (non-default) socket and the executor; a token, when the gateway
// wants one, comes from the client's environment.
func checkBridge(t *testing.T, c ccCase, command string, args []string, env map[string]string, tokenRef string) {
	t.Helper()
	wantCommand := ccBridge
	if c.executor != "" {
		wantCommand = "mcpgw-bridge" // in the executor's container, where host paths mean nothing
	}
	if command != wantCommand {
		t.Errorf("command %q, want %s", command, wantCommand)
	}
	b := parseBridgeArgs(t, args)
	if b.agent != ccAgent {
		t.Errorf("bridge --agent %q, want %q", b.agent, ccAgent)
	}
	if c.executor != "" {
		// The executor rewrites the gateway URL: the agent runs where the host's socket
		// is out of reach, so the bridge goes by the rewritten URL.
		if b.socket != "" || !strings.Contains(b.url, "host.docker.internal") {
			t.Errorf("bridge in executor %s: --socket %q --url %q, want the rewritten URL and no socket", c.executor, b.socket, b.url)
		}
	} else if b.socket != ccSocket {
		t.Errorf("bridge --socket %q, want %q (the config's state dir is not the default)", b.socket, ccSocket)
	}
	if b.executor != c.executor {
		t.Errorf("bridge --executor %q, want %q", b.executor, c.executor)
	}
	if c.auth == "jwt" {
		if env["MCPGW_TOKEN"] != tokenRef {
			t.Errorf("bridge env MCPGW_TOKEN %q, want %q", env["MCPGW_TOKEN"], tokenRef)
		}
	} else if len(env) > 0 {
		t.Errorf("auth none: the bridge needs no environment, got %v", env)
	}
}

// checkHeaders checks the identity and token headers of an HTTP entry.
func checkHeaders(t *testing.T, c ccCase, h map[string]string, bearer string) {
	t.Helper()
	want := map[string]string{"X-Agent-ID": ccAgent}
	if c.executor != "" {
		want["X-Executor-ID"] = c.executor
	}
	if c.auth == "jwt" && bearer != "" {
		want["Authorization"] = bearer
	}
	if !maps.Equal(h, want) {
		t.Errorf("headers %v, want %v", h, want)
	}
}

func checkKeys(t *testing.T, what string, m map[string]json.RawMessage, allowed ...string) {
	t.Helper()
	for k := range m {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: key %q is not one the client reads (allowed: %v)", what, k, allowed)
		}
	}
}

func strictJSON(t *testing.T, out []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("trailing content after the JSON object:\n%s", out)
	}
}

func decodeField[T any](t *testing.T, m map[string]json.RawMessage, key string) (T, bool) {
	t.Helper()
	var v T
	raw, ok := m[key]
	if !ok {
		return v, false
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Errorf("%s: %v (%s)", key, err, raw)
	}
	return v, true
}

func checkClientConfig(t *testing.T, c ccCase, out []byte) {
	t.Helper()
	switch c.client {
	case "codex":
		checkCodex(t, c, out)
	case "opencode":
		checkOpencode(t, c, out)
	default:
		checkMCPServersJSON(t, c, out)
	}
}

// checkMCPServersJSON: Claude Code (.mcp.json), Cursor (mcp.json), Gemini CLI and Qwen
// Code (settings.json) all read {"mcpServers": {NAME: entry}}.
func checkMCPServersJSON(t *testing.T, c ccCase, out []byte) {
	var top map[string]json.RawMessage
	strictJSON(t, out, &top)
	checkKeys(t, "top level", top, "mcpServers")
	servers, _ := decodeField[map[string]map[string]json.RawMessage](t, top, "mcpServers")
	e, ok := servers["mcpgw"]
	if !ok || len(servers) != 1 {
		t.Fatalf("mcpServers: want exactly the entry mcpgw, got %v", slices.Collect(maps.Keys(servers)))
	}
	// What each client reads, and how it spells "from the environment".
	var allowed []string
	var tokenRef, urlKey, wantType string
	switch c.client {
	case "claude-code":
		allowed = []string{"type", "command", "args", "env", "url", "headers"}
		tokenRef, urlKey = "${MCPGW_TOKEN}", "url"
		wantType = map[string]string{"http": "http", "bridge": "stdio"}[c.via]
	case "generic":
		allowed = []string{"type", "command", "args", "env", "url", "headers"}
		tokenRef, urlKey = "${MCPGW_TOKEN}", "url"
		wantType = map[string]string{"http": "streamable-http", "bridge": "stdio"}[c.via]
	case "cursor":
		allowed = []string{"type", "command", "args", "env", "envFile", "url", "headers"}
		tokenRef, urlKey = "${env:MCPGW_TOKEN}", "url"
	case "gemini", "qwen":
		// url is SSE for these two; streamable HTTP is httpUrl.
		allowed = []string{"command", "args", "env", "cwd", "httpUrl", "url", "headers", "timeout", "trust",
			"includeTools", "excludeTools", "description"}
		tokenRef, urlKey = "$MCPGW_TOKEN", "httpUrl"
		if c.via == "sse" {
			// Gemini CLI 0.61 reads a url without type as streamable HTTP.
			allowed = append(allowed, "type")
			urlKey, wantType = "url", "sse"
		}
	}
	checkKeys(t, "mcpServers.mcpgw", e, allowed...)
	typ, hasType := decodeField[string](t, e, "type")
	if wantType != "" && typ != wantType {
		t.Errorf("type %q, want %q", typ, wantType)
	}
	if hasType && c.client != "claude-code" && c.client != "generic" && c.via != "sse" {
		t.Errorf("%s: unexpected type %q", c.client, typ)
	}
	if c.via != "bridge" {
		if u, _ := decodeField[string](t, e, urlKey); u != c.wantURL() {
			t.Errorf("%s %q, want %q", urlKey, u, c.wantURL())
		}
		if _, ok := e["command"]; ok {
			t.Errorf("an HTTP entry with a command: clients would spawn it instead")
		}
		if (c.client == "gemini" || c.client == "qwen") && c.via == "http" && e["url"] != nil {
			t.Errorf("%s reads url as legacy SSE; the gateway's /mcp is streamable HTTP (httpUrl)", c.client)
		}
		h, _ := decodeField[map[string]string](t, e, "headers")
		checkHeaders(t, c, h, "Bearer "+tokenRef)
		return
	}
	for _, k := range []string{"url", "httpUrl", "headers"} {
		if _, ok := e[k]; ok {
			t.Errorf("a stdio entry with %s", k)
		}
	}
	cmd, _ := decodeField[string](t, e, "command")
	args, _ := decodeField[[]string](t, e, "args")
	env, _ := decodeField[map[string]string](t, e, "env")
	checkBridge(t, c, cmd, args, env, tokenRef)
}

// checkOpencode: opencode.json {"$schema", "mcp": {NAME: {type: local, command: [...],
// environment} | {type: remote, url, headers}}}; both entry types reject other keys.
func checkOpencode(t *testing.T, c ccCase, out []byte) {
	var top map[string]json.RawMessage
	strictJSON(t, out, &top)
	checkKeys(t, "top level", top, "$schema", "mcp")
	if s, _ := decodeField[string](t, top, "$schema"); s != "https://opencode.ai/config.json" {
		t.Errorf("$schema %q", s)
	}
	servers, _ := decodeField[map[string]map[string]json.RawMessage](t, top, "mcp")
	e, ok := servers["mcpgw"]
	if !ok || len(servers) != 1 {
		t.Fatalf("mcp: want exactly the entry mcpgw, got %v", slices.Collect(maps.Keys(servers)))
	}
	typ, _ := decodeField[string](t, e, "type")
	if enabled, ok := decodeField[bool](t, e, "enabled"); ok && !enabled {
		t.Errorf("enabled: false")
	}
	const tokenRef = "{env:MCPGW_TOKEN}"
	if c.via == "http" {
		checkKeys(t, "mcp.mcpgw (remote)", e, "type", "url", "headers", "enabled", "timeout", "oauth")
		if typ != "remote" {
			t.Errorf("type %q, want remote", typ)
		}
		if u, _ := decodeField[string](t, e, "url"); u != c.wantURL() {
			t.Errorf("url %q, want %q", u, c.wantURL())
		}
		h, _ := decodeField[map[string]string](t, e, "headers")
		checkHeaders(t, c, h, "Bearer "+tokenRef)
		return
	}
	checkKeys(t, "mcp.mcpgw (local)", e, "type", "command", "environment", "enabled", "timeout")
	if typ != "local" {
		t.Errorf("type %q, want local", typ)
	}
	cmd, _ := decodeField[[]string](t, e, "command")
	if len(cmd) == 0 {
		t.Fatalf("command: want [program, args...], got %v", cmd)
	}
	env, _ := decodeField[map[string]string](t, e, "environment")
	checkBridge(t, c, cmd[0], cmd[1:], env, tokenRef)
}

// checkCodex: ~/.codex/config.toml [mcp_servers.NAME] with command/args (stdio) or url +
// bearer_token_env_var + http_headers (streamable HTTP).
func checkCodex(t *testing.T, c ccCase, out []byte) {
	var top map[string]any
	if err := toml.Unmarshal(out, &top); err != nil {
		t.Fatalf("not TOML: %v\n%s", err, out)
	}
	if keys := slices.Sorted(maps.Keys(top)); !slices.Equal(keys, []string{"mcp_servers"}) {
		t.Errorf("top-level keys %v, want [mcp_servers]", keys)
	}
	var doc struct {
		MCPServers map[string]map[string]any `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("TOML: %v", err)
	}
	e, ok := doc.MCPServers["mcpgw"]
	if !ok || len(doc.MCPServers) != 1 {
		t.Fatalf("mcp_servers: want exactly mcpgw, got %v", slices.Collect(maps.Keys(doc.MCPServers)))
	}
	allowed := []string{"command", "args", "env", "env_vars", "cwd", "url", "bearer_token_env_var", "http_headers",
		"env_http_headers", "enabled", "startup_timeout_sec", "tool_timeout_sec", "enabled_tools", "disabled_tools"}
	for k := range e {
		if !slices.Contains(allowed, k) {
			t.Errorf("mcp_servers.mcpgw: key %q is not one Codex reads", k)
		}
	}
	var entry struct {
		Command           string            `toml:"command"`
		Args              []string          `toml:"args"`
		Env               map[string]string `toml:"env"`
		EnvVars           []string          `toml:"env_vars"`
		URL               string            `toml:"url"`
		BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
		HTTPHeaders       map[string]string `toml:"http_headers"`
	}
	b, _ := toml.Marshal(e)
	if err := toml.Unmarshal(b, &entry); err != nil {
		t.Fatalf("mcp_servers.mcpgw: %v", err)
	}
	if c.via == "http" {
		if entry.Command != "" {
			t.Errorf("an HTTP entry with command %q", entry.Command)
		}
		if entry.URL != c.wantURL() {
			t.Errorf("url %q, want %q", entry.URL, c.wantURL())
		}
		wantVar := ""
		if c.auth == "jwt" {
			wantVar = "MCPGW_TOKEN"
		}
		if entry.BearerTokenEnvVar != wantVar {
			t.Errorf("bearer_token_env_var %q, want %q", entry.BearerTokenEnvVar, wantVar)
		}
		checkHeaders(t, c, entry.HTTPHeaders, "")
		if _, ok := entry.HTTPHeaders["Authorization"]; ok {
			t.Errorf("a literal Authorization header: Codex takes the token from bearer_token_env_var")
		}
		return
	}
	if entry.URL != "" {
		t.Errorf("a stdio entry with url %q", entry.URL)
	}
	env := map[string]string{}
	if c.auth == "jwt" {
		env["MCPGW_TOKEN"] = tokenIf(c)
	}
	checkBridge(t, c, entry.Command, entry.Args, env, tokenIf(c))
	// Codex starts stdio servers with a scrubbed environment: the token must be forwarded
	// by name (env_vars), never written into the file.
	if c.auth == "jwt" && !slices.Contains(entry.EnvVars, "MCPGW_TOKEN") {
		t.Errorf("env_vars %v: MCPGW_TOKEN is not forwarded to the bridge", entry.EnvVars)
	}
	if c.auth == "none" && len(entry.EnvVars) > 0 {
		t.Errorf("auth none: env_vars %v", entry.EnvVars)
	}
	if len(entry.Env) > 0 {
		t.Errorf("env %v: nothing should be written literally", entry.Env)
	}
}

// TestClientConfigGoldenFilesUsed: no stale golden file is left behind.
func TestClientConfigGoldenFilesUsed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "client-config", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, client := range ccClients {
		for _, via := range clientTransports[client] {
			for _, executor := range []string{"", ccExecutor} {
				for _, auth := range []string{"none", "jwt"} {
					ext := ".json"
					if client == "codex" {
						ext = ".toml"
					}
					want[ccCase{client, via, executor, auth}.name()+ext+".golden"] = true
				}
			}
		}
	}
	var stale []string
	for _, f := range files {
		if !want[filepath.Base(f)] {
			stale = append(stale, f)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("golden files no case produces: %v", stale)
	}
	if len(files)-len(stale) != len(want) {
		t.Errorf("%d golden files for %d cases (run go test -run TestClientConfigGolden -update)", len(files)-len(stale), len(want))
	}
}

// TestClientConfigDefaultSocket: with the default state dir the bridge needs no --socket.
func TestClientConfigDefaultSocket(t *testing.T) {
	fixBridgeCommand(t, ccBridge)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cfg := filepath.Join(t.TempDir(), "mcpgw.yaml")
	if err := os.WriteFile(cfg, []byte("listen: 0.0.0.0:9090\nauth: {allow_non_loopback: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runClientConfig(t, cfg, "--agent", "a1", "--client", "claude-code", "--via", "bridge")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MCPServers map[string]struct {
			Args []string `json:"args"`
		} `json:"mcpServers"`
	}
	strictJSON(t, out, &doc)
	if b := parseBridgeArgs(t, doc.MCPServers["mcpgw"].Args); b.socket != "" || b.agent != "a1" {
		t.Errorf("default state dir: bridge args %q, want --agent a1 and no --socket", doc.MCPServers["mcpgw"].Args)
	}
	// A wildcard listener is reached on loopback.
	out, err = runClientConfig(t, cfg, "--agent", "a1", "--client", "cursor")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"url": "http://127.0.0.1:9090/mcp"`) {
		t.Errorf("listen 0.0.0.0:9090: %s", out)
	}
}

// TestClientConfigErrors: bad invocations are errors, not configs.
func TestClientConfigErrors(t *testing.T) {
	cfg := filepath.Join("testdata", "client-config", "none.yaml")
	for _, args := range [][]string{
		{"--client", "cursor"},
		{"--agent", "a1"},
		{"--agent", "a1", "--client", "vscode"},
		{"--agent", "a1", "--client", "cursor", "--via", "sse"},
		{"--agent", "a1", "--client", "cursor", "--executor", "nope"},
	} {
		out, err := runClientConfig(t, cfg, args...)
		if err == nil {
			t.Errorf("client-config %v: no error, printed %s", args, out)
		}
	}
}

// TestClientConfigIdentityHeaderNames: the gateway reads identity from the header names
// configured under auth.headers; the HTTP configs must send those names.
func TestClientConfigIdentityHeaderNames(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcpgw.yaml")
	if err := os.WriteFile(cfg, []byte(`listen: 127.0.0.1:8080
state_dir: /srv/mcpgw
auth:
  headers: {agent: X-Who, executor: X-Where}
executors:
  docker: {type: local_docker}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, client := range ccClients {
		out, err := runClientConfig(t, cfg, "--agent", "a1", "--client", client, "--executor", "docker")
		if err != nil {
			t.Fatalf("%s: %v", client, err)
		}
		s := string(out)
		if !strings.Contains(s, `"X-Who"`) || !strings.Contains(s, `"X-Where"`) || strings.Contains(s, "X-Agent-ID") || strings.Contains(s, "X-Executor-ID") {
			t.Errorf("%s with auth.headers {agent: X-Who, executor: X-Where}: the gateway would not see the identity:\n%s", client, out)
		}
	}
}

// tokenIf is what checkBridge expects for Codex, which forwards MCPGW_TOKEN by name.
func tokenIf(c ccCase) string {
	if c.auth == "jwt" {
		return "$MCPGW_TOKEN"
	}
	return ""
}

// bridgeEntry runs client-config --via bridge for claude-code and returns the entry's
// command and args, and what it said on stderr.
func bridgeEntry(t *testing.T, cfg string) (string, []string, string) {
	t.Helper()
	var note bytes.Buffer
	old := notes
	notes = &note
	defer func() { notes = old }()
	out, err := runClientConfig(t, cfg, "--agent", "a1", "--client", "claude-code", "--via", "bridge")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	strictJSON(t, out, &doc)
	e := doc.MCPServers["mcpgw"]
	return e.Command, e.Args, note.String()
}

// TestClientConfigRelativeStateDir: a relative state_dir (the daemon resolves it against
// its working directory) and a relative config path still give absolute paths, resolved
// against client-config's working directory, and a note saying so.
func TestClientConfigRelativeStateDir(t *testing.T) {
	fixBridgeCommand(t, ccBridge)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("mcpgw.yaml", []byte("listen: 127.0.0.1:8080\nstate_dir: .cache/state\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, args, note := bridgeEntry(t, "mcpgw.yaml")
	if cmd != ccBridge {
		t.Errorf("command %q, want %q", cmd, ccBridge)
	}
	b := parseBridgeArgs(t, args)
	want := filepath.Join(dir, ".cache", "state", "mcpgw.sock")
	if b.socket != want {
		t.Errorf("--socket %q, want the absolute %q", b.socket, want)
	}
	if !strings.Contains(note, `state_dir ".cache/state" is relative`) || !strings.Contains(note, filepath.Join(dir, ".cache", "state")) {
		t.Errorf("no note about the relative state_dir on stderr: %q", note)
	}
}

// TestClientConfigBridgeCommandResolved: the real resolver prefers mcpgw-bridge on PATH,
// made absolute even when PATH holds a relative directory, else the path next to the
// running executable, with a note when that is missing too.
func TestClientConfigBridgeCommandResolved(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	cfg := filepath.Join(t.TempDir(), "mcpgw.yaml")
	if err := os.WriteFile(cfg, []byte("listen: 127.0.0.1:8080\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	installed := t.TempDir()
	bin := filepath.Join(installed, "mcpgw-bridge")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", installed)
	cmd, args, note := bridgeEntry(t, cfg)
	if cmd != bin {
		t.Errorf("with mcpgw-bridge on PATH: command %q, want %q", cmd, bin)
	}
	if b := parseBridgeArgs(t, args); b.socket != "" {
		t.Errorf("default state dir: --socket %q, want none", b.socket)
	}
	if note != "" {
		t.Errorf("unexpected note: %q", note)
	}

	// Not on PATH: next to this executable (the test binary, which has no such sibling).
	t.Setenv("PATH", t.TempDir())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	cmd, _, note = bridgeEntry(t, cfg)
	if want := filepath.Join(filepath.Dir(exe), "mcpgw-bridge"); cmd != want {
		t.Errorf("without mcpgw-bridge on PATH: command %q, want the sibling %q", cmd, want)
	}
	if !filepath.IsAbs(cmd) {
		t.Errorf("command %q is not absolute", cmd)
	}
	if !strings.Contains(note, "make install") {
		t.Errorf("no note that mcpgw-bridge is missing: %q", note)
	}
}

// TestClientConfigConversation: --conversation puts the conversation header (by its
// configured name) in every client's HTTP entry, and --conversation in the bridge's args.
func TestClientConfigConversation(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcpgw.yaml")
	if err := os.WriteFile(cfg, []byte("listen: 127.0.0.1:8080\nstate_dir: /srv/mcpgw\nauth:\n  headers: {conversation: X-Conv}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, client := range ccClients {
		out, err := runClientConfig(t, cfg, "--agent", "a1", "--client", client, "--conversation", "c-42")
		if err != nil {
			t.Fatalf("%s: %v", client, err)
		}
		if s := string(out); !strings.Contains(s, `"X-Conv"`) || !strings.Contains(s, `"c-42"`) {
			t.Errorf("%s --conversation c-42: no X-Conv header:\n%s", client, out)
		}
	}
	out, err := runClientConfig(t, cfg, "--agent", "a1", "--client", "claude-code", "--via", "bridge", "--conversation", "c-42")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"--conversation",`) || !strings.Contains(string(out), `"c-42"`) {
		t.Errorf("the bridge entry lacks --conversation c-42:\n%s", out)
	}
}

// TestClientConfigAllowedToolsRefusals: --allowed-tools is Claude Code's names only, and a
// task the config file does not have is named with where to ask instead (the running
// gateway's view), rather than explained as if it had no servers.
func TestClientConfigAllowedToolsRefusals(t *testing.T) {
	cfg := filepath.Join("testdata", "client-config", "none.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", ccAgent, "--client", "codex", "--allowed-tools"}, "--allowed-tools is for --client claude-code"},
		{[]string{"--agent", ccAgent, "--client", "claude-code", "--task", "made-by-api", "--allowed-tools"},
			`task "made-by-api" is not in the config file; for a task made through the admin API ask the gateway: GET http://127.0.0.1:8080/api/agents/a1/view?task=made-by-api`},
	} {
		out, err := runClientConfig(t, cfg, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("client-config %v: %v (printed %q); want an error saying %q", c.args, err, out, c.want)
		}
	}
}

// TestClientConfigTask: --task reaches every client's entry: the task header over HTTP,
// the bridge's --task over stdio.
func TestClientConfigTask(t *testing.T) {
	fixBridgeCommand(t, ccBridge)
	cfg := filepath.Join("testdata", "client-config", "none.yaml")
	for _, client := range ccClients {
		for via, want := range map[string]string{"http": `"X-Task-ID"`, "bridge": `"--task"`} {
			out, err := runClientConfig(t, cfg, "--agent", ccAgent, "--client", client, "--via", via, "--task", "task-42")
			if err != nil {
				t.Fatalf("%s --via %s --task: %v", client, via, err)
			}
			if !strings.Contains(string(out), want) || !strings.Contains(string(out), `"task-42"`) {
				t.Errorf("%s --via %s --task task-42: no %s task-42 in\n%s", client, via, want, out)
			}
		}
	}
}
