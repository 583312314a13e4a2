package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// designExample is the example config of docs/architecture.md, verbatim: the shape users type.
const designExample = `listen: 127.0.0.1:8080
state_dir: ~/.local/state/mcpgw      # bbolt file, Unix socket, audit log
store: bolt                          # bolt | memory | redis://127.0.0.1:6379/0
naming:
  prefix: always                     # always | never
  separator: "__"
  max_length: 64
auth:
  mode: none                         # none | api_key | jwt | oauth
  # jwt:
  #   issuer: https://issuer.example
  #   audience: mcpgw
  #   keys:
  #     - {alg: HS256, secret: "${MCPGW_JWT_SECRET}"}
  #     - {alg: RS256, public_key_file: /etc/mcpgw/jwt.pub}
servers:
  everything:
    type: stdio
    command: npx
    args: ["-y", "@modelcontextprotocol/server-everything"]
    mode: auto                       # auto | shared | per_session
  docs:
    type: streamable_http
    url: http://127.0.0.1:3101/mcp
    headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
    default_enabled: false
agents:
  claude-code:
    servers: [everything, docs]
    tools: {deny: ["everything__get-env"]}
executors:
  docker:
    type: local_docker
    mcp_policy:
      allow_stdio: true
      allow_streamable_http: true
      url_rewrite: {"http://127.0.0.1": "http://host.docker.internal"}
tasks:
  task-42:
    enabled_mcp_servers: [docs]
`

func TestDesignExampleParses(t *testing.T) {
	t.Setenv("DOCS_TOKEN", "s3cret")
	t.Setenv("HOME", "/home/tester")
	cfg, ps, err := Parse([]byte(designExample))
	if err != nil {
		t.Fatalf("architecture example: %v", err)
	}
	if ps.HasErrors() {
		t.Fatalf("architecture example has errors: %v", ps)
	}
	if got := cfg.Servers["docs"].Headers["Authorization"]; got != "Bearer s3cret" {
		t.Errorf("docs Authorization = %q, want expanded token", got)
	}
	if cfg.StateDir != filepath.Join("/home/tester", ".local/state/mcpgw") {
		t.Errorf("state_dir = %q, want ~ expanded", cfg.StateDir)
	}
	ev := cfg.Servers["everything"]
	if ev.Transport() != TransportStdio || ev.ResolvedMode() != ModePerSession || ev.Command != "npx" || len(ev.Args) != 2 {
		t.Errorf("everything = %+v (mode %s)", ev, ev.ResolvedMode())
	}
	docs := cfg.Servers["docs"]
	if docs.Transport() != TransportHTTP || docs.ResolvedMode() != ModeShared || docs.Enabled() {
		t.Errorf("docs: transport %s mode %s enabled %v", docs.Transport(), docs.ResolvedMode(), docs.Enabled())
	}
	a := cfg.Agents["claude-code"]
	if len(a.Servers) != 2 || a.Servers[0].Name != "everything" || a.Servers[1].Name != "docs" || len(a.Tools.Deny) != 1 {
		t.Errorf("agent claude-code = %+v", a)
	}
	p := cfg.Executors["docker"].MCPPolicy
	if p.AllowStdio == nil || !*p.AllowStdio || p.URLRewrite["http://127.0.0.1"] != "http://host.docker.internal" {
		t.Errorf("executor docker policy = %+v", p)
	}
	if got := cfg.Tasks["task-42"].EnabledMCPServers; len(got) != 1 || got[0] != "docs" {
		t.Errorf("task-42 servers = %v", got)
	}
	if cfg.Version != CurrentVersion {
		t.Errorf("version = %d, want migrated to %d", cfg.Version, CurrentVersion)
	}
}

// TestDesignExampleNoSpuriousWarnings: the only ${VAR} left unset sits in a YAML comment.
func TestDesignExampleNoSpuriousWarnings(t *testing.T) {
	t.Setenv("DOCS_TOKEN", "s3cret")
	os.Unsetenv("MCPGW_JWT_SECRET")
	_, ps, err := Parse([]byte(designExample))
	if err != nil {
		t.Fatal(err)
	}
	if w := ps.Warnings(); len(w) > 0 {
		t.Fatalf("warnings for a commented-out line: %v", w)
	}
}

const sharedStdioMsg = `mcp server "local": shared mode requires HTTP/SSE/streamable HTTP transport (stdio is per-session only)`

func TestConfigProblems(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		// every wantErr must be the text (or, with a leading ~, a substring) of one error
		wantErr []string
		// substrings of warnings that must be there
		wantWarn []string
	}{
		{
			name:    "listen port that is not a number",
			yaml:    "listen: 127.0.0.1:notaport\n",
			wantErr: []string{`~listen: "127.0.0.1:notaport": port "notaport" is not a number`},
		},
		{
			name:    "busy_poll longer than 10ms",
			yaml:    "upstream: {busy_poll: 50ms}\n",
			wantErr: []string{"upstream.busy_poll: 50ms is too long (at most 10ms; negative turns it off)"},
		},
		{
			name:    "disabled_agent that is neither refuse nor empty",
			yaml:    "auth: {disabled_agent: hide}\n",
			wantErr: []string{`auth.disabled_agent: "hide" is not one of refuse, empty`},
		},
		{
			name:    "auth none on a non-loopback listener",
			yaml:    "listen: 0.0.0.0:8080\n",
			wantErr: []string{"~listen: auth.mode none trusts identity headers, so it only runs on a loopback listener"},
		},
		{
			name:     "auth none on a non-loopback listener, allowed",
			yaml:     "listen: \"[::]:8080\"\nauth: {allow_non_loopback: true}\n",
			wantWarn: []string{"AUTH IS OFF on a non-loopback listener"},
		},
		{
			name: "url_rewrite sides that are not URLs",
			yaml: "executors:\n  e:\n    type: local_pc\n    mcp_policy:\n      url_rewrite: {localhost: \"http://h:1\", \"http://127.0.0.1\": docker-host}\n",
			wantErr: []string{`~executors.e.mcp_policy.url_rewrite: "localhost" is not an http(s) URL prefix`,
				`~executors.e.mcp_policy.url_rewrite: "docker-host" is not an http(s) URL prefix`},
		},
		{
			name:    "env_injection name with =",
			yaml:    "executors:\n  e:\n    type: local_pc\n    mcp_policy:\n      env_injection: {\"A=B\": x}\n",
			wantErr: []string{`~executors.e.mcp_policy.env_injection: "A=B" is not an environment variable name`},
		},
		{
			name: "the mcpgw plugin with connections, enabled by default",
			yaml: "plugins:\n  gw: {type: mcpgw, default_enabled: true, connections: {x: {driver: sqlite, dsn: a.db}}}\nagents:\n  ops: {servers: [gw]}\n",
			wantErr: []string{"~plugins.gw.connections: the mcpgw plugin has one connection",
				"~plugins.gw.default_enabled: the mcpgw plugin is only for agents that list it"},
		},
		{
			name:     "the mcpgw plugin no agent lists",
			yaml:     "plugins:\n  gw: {type: mcpgw}\nagents:\n  ops: {connection_scope: [gateway]}\n",
			wantWarn: []string{`plugins.gw: no agent lists "gw" in its servers`},
		},
		{
			name: "connection scopes of agents and keys",
			yaml: "agents:\n  a: {connection_scope: [\"bad id\", nope, nope]}\nauth:\n  api_keys:\n    - {agent: a, sha256: " + strings.Repeat("0", 64) + ", connection_scope: [\"x/y\"]}\n",
			wantErr: []string{`agents.a.connection_scope: "bad id" is not a connection id (1 to 64 of the characters A-Z a-z 0-9 _ . -)`,
				`auth.api_keys[0].connection_scope: "x/y" is not a connection id (1 to 64 of the characters A-Z a-z 0-9 _ . -)`},
			wantWarn: []string{`agents.a.connection_scope: no plugin has a connection "nope"`, `agents.a.connection_scope: "nope" is listed twice`},
		},
		{
			name:    "unknown type",
			yaml:    "servers:\n  a: {type: grpc, url: http://x}\n",
			wantErr: []string{`~servers.a: unknown type "grpc"`},
		},
		{
			name:    "missing type",
			yaml:    "servers:\n  a: {url: http://x}\n",
			wantErr: []string{"~servers.a: missing type"},
		},
		{
			name:    "missing command",
			yaml:    "servers:\n  a: {type: stdio}\n",
			wantErr: []string{"~servers.a: type stdio needs a command"},
		},
		{
			name:    "missing url",
			yaml:    "servers:\n  a: {type: sse}\n",
			wantErr: []string{"~servers.a: type sse needs a url"},
		},
		{
			name:    "url not http",
			yaml:    "servers:\n  a: {type: http, url: \"ftp://example.com/mcp\"}\n",
			wantErr: []string{`~servers.a: url "ftp://example.com/mcp" is not an http(s) URL`},
		},
		{
			name:    "url without host",
			yaml:    "servers:\n  a: {type: streamable_http, url: \"http://\"}\n",
			wantErr: []string{`~is not an http(s) URL`},
		},
		{
			name:    "url unparsable",
			yaml:    "servers:\n  a: {type: streamable_http, url: \"http://[::1\"}\n",
			wantErr: []string{`~is not an http(s) URL`},
		},
		{
			name:    "shared stdio",
			yaml:    "servers:\n  local: {type: stdio, command: x, mode: shared}\n",
			wantErr: []string{sharedStdioMsg},
		},
		{
			name:    "shared stdio chosen by an agent",
			yaml:    "servers:\n  local: {type: stdio, command: x}\nagents:\n  a:\n    servers: [{name: local, mode: shared}]\n",
			wantErr: []string{"agents.a: " + sharedStdioMsg},
		},
		{
			name: "shared stdio with stdio_proxy is fine",
			yaml: "servers:\n  local: {type: stdio, command: x, mode: shared, stdio_proxy: true}\n",
		},
		{
			name:    "unknown top-level key",
			yaml:    "listen: 127.0.0.1:8080\nlisten_addr: 1\n",
			wantErr: []string{"~listen_addr: line 2: unknown key"},
		},
		{
			name:    "unknown server key",
			yaml:    "servers:\n  a: {type: stdio, command: x, comand: y}\n",
			wantErr: []string{"~comand: line 2: unknown key (did you mean \"command\"?)"},
		},
		{
			name:    "every problem at once",
			yaml:    "store: etcd\nnaming: {prefix: sometimes}\nservers:\n  a: {type: stdio}\n  b: {type: sse}\n  c: {type: grpc}\n  local: {type: stdio, command: x, mode: shared}\ntasks:\n  t: {enabled_mcp_servers: [nope]}\n",
			wantErr: []string{`~store: "etcd"`, `~naming.prefix: "sometimes"`, "~servers.a: type stdio needs a command", "~servers.b: type sse needs a url", `~servers.c: unknown type "grpc"`, sharedStdioMsg, `~tasks.t: unknown server "nope"`},
		},
		{
			name:     "allowlist and denylist",
			yaml:     "servers:\n  a: {type: http, url: \"http://x/mcp\"}\nexecutors:\n  e:\n    type: local_pc\n    mcp_policy: {allowlist_servers: [a], denylist_servers: [a]}\n",
			wantWarn: []string{"executors.e: both allowlist_servers and denylist_servers are set; the allowlist wins"},
		},
		{
			name:    "server name with the separator",
			yaml:    "servers:\n  my__srv: {type: http, url: \"http://x/mcp\"}\n",
			wantErr: []string{`~servers.my__srv: server name contains the name separator "__"`},
		},
		{
			name:    "api key hash that is not hex",
			yaml:    "auth:\n  mode: api_key\n  api_keys: [{agent: a, sha256: \"" + strings.Repeat("z", 64) + "\"}]\n",
			wantErr: []string{"auth.api_keys[0]: sha256 must be 64 hex digits"},
		},
		{
			name:    "api key hash pasted with sha256sum's file name",
			yaml:    "auth:\n  mode: api_key\n  api_keys: [{agent: a, sha256: \"" + strings.Repeat("a", 64) + "  -\"}]\n",
			wantErr: []string{"auth.api_keys[0]: sha256 must be 64 hex digits"},
		},
		{
			name: "api key hash in upper case is fine",
			yaml: "auth:\n  mode: api_key\n  api_keys: [{agent: a, sha256: \"" + strings.Repeat("AB", 32) + "\"}]\n",
		},
		{
			name:    "agent names an unknown server",
			yaml:    "agents:\n  a: {servers: [ghost]}\n",
			wantErr: []string{`~agents.a: unknown server "ghost"`},
		},
		{
			name: "a plugin named by an agent, a task and an executor list",
			yaml: "plugins:\n  shop:\n    type: sql\n    connections:\n      main: {driver: sqlite, dsn: /tmp/shop.db}\n" +
				"agents:\n  a: {servers: [shop], connection_scope: [main]}\nexecutors:\n  e: {type: local_pc, mcp_policy: {allowlist_servers: [shop]}}\ntasks:\n  t: {enabled_mcp_servers: [shop]}\n",
		},
		{
			name: "plugin problems, all at once",
			yaml: "servers:\n  shop: {type: http, url: \"http://x/mcp\"}\nplugins:\n  shop: {type: sql, connections: {main: {driver: sqlite, dsn: a.db}}}\n" +
				"  k8s: {type: kubernetes}\n  none: {connections: {}}\n  \"bad name\": {type: sql, connections: {main: {driver: sqlite, dsn: a.db}}}\n" +
				"  empty: {type: sql}\n  conns:\n    type: sql\n    connections:\n      pg: {driver: mysql, dsn: x, listen: true}\n      nodsn: {driver: sqlite}\n      mem: {driver: sqlite, dsn: \":memory:\"}\n" +
				"      \"no/slash\": {driver: sqlite, dsn: b.db}\n      seeded: {driver: sqlite, dsn: c.db, seed: /nonexistent/seed.sql}\n",
			wantErr: []string{
				"~plugins.shop: a server has the same name",
				`~plugins.k8s: unknown type "kubernetes"`,
				"~plugins.none: missing type",
				"~plugins.bad name: plugin name must be",
				"~plugins.empty.connections: at least one connection is needed",
				`~plugins.conns.connections.pg.driver: "mysql" is not supported (sqlite or postgres)`,
				"~plugins.conns.connections.pg: listen and schemas are for postgres connections",
				"~plugins.conns.connections.nodsn.dsn: required",
				"~plugins.conns.connections.mem.database: an in-memory database needs a database name",
				"~plugins.conns.connections.no/slash: connection id must be",
				"~plugins.conns.connections.seeded.seed:",
			},
		},
		{
			name:     "connection_scope naming no plugin's connection",
			yaml:     "agents:\n  a: {connection_scope: [prod]}\n",
			wantWarn: []string{`agents.a.connection_scope: no plugin has a connection "prod"`},
		},
		{
			name:    "negative concurrency and queue",
			yaml:    "servers:\n  s: {type: stdio, command: x, max_concurrency: -1, queue: {max: -2, timeout: -1s}}\n",
			wantErr: []string{"~servers.s.max_concurrency: must not be negative", "~servers.s.queue.max: must not be negative", "~servers.s.queue.timeout: must not be negative"},
		},
		{
			name:    "limits",
			yaml:    "naming: {max_length: 8}\nhttp: {max_body_bytes: 10}\nlisten: nocolon\n",
			wantErr: []string{"~naming.max_length", "~http.max_body_bytes", "~listen:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ps, err := Parse([]byte(tt.yaml))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if cfg == nil {
					t.Fatal("no config")
				}
			} else {
				if err == nil {
					t.Fatalf("no error; problems: %v", ps)
				}
				if err.Error() != Problems(ps).Error() {
					t.Errorf("the error is not the problem list:\nerr %v\nps  %v", err, ps)
				}
			}
			var errs, warns []string
			for _, p := range ps {
				// The problem's own line: a hint follows on a line of its own.
				line, _, _ := strings.Cut(p.String(), "\n")
				s := strings.TrimPrefix(strings.TrimPrefix(line, "error: "), "warning: ")
				if p.Warning {
					warns = append(warns, s)
				} else {
					errs = append(errs, s)
				}
			}
			for _, w := range tt.wantErr {
				if !matchAny(errs, w) {
					t.Errorf("missing error %q in:\n  %s", w, strings.Join(errs, "\n  "))
				}
			}
			if n := nonWarnings(ps); n != len(tt.wantErr) && len(tt.wantErr) > 0 {
				t.Errorf("%d errors, want %d:\n  %s", n, len(tt.wantErr), strings.Join(errs, "\n  "))
			}
			for _, w := range tt.wantWarn {
				if !matchAny(warns, "~"+w) {
					t.Errorf("missing warning %q in:\n  %s", w, strings.Join(warns, "\n  "))
				}
			}
		})
	}
}

func matchAny(list []string, want string) bool {
	for _, s := range list {
		if sub, ok := strings.CutPrefix(want, "~"); ok {
			if strings.Contains(s, sub) {
				return true
			}
		} else if s == want {
			return true
		}
	}
	return false
}

func nonWarnings(ps Problems) int {
	n := 0
	for _, p := range ps {
		if !p.Warning {
			n++
		}
	}
	return n
}

func TestSharedStdioMessageIsExact(t *testing.T) {
	_, ps, err := Parse([]byte("servers:\n  local: {type: stdio, command: x, mode: shared}\n"))
	if err == nil {
		t.Fatal("shared stdio accepted")
	}
	for _, p := range ps {
		if p.Text == sharedStdioMsg {
			if p.String() != "error: "+sharedStdioMsg+"\n  "+SharedStdioHint || !strings.Contains(p.Hint, "stdio_proxy: true") ||
				!strings.Contains(p.Hint, "per_agent") || !strings.Contains(p.Hint, "per_call") {
				t.Errorf("printed as %q: want the exact text on its own line, then the ways out", p.String())
			}
			return
		}
	}
	t.Fatalf("no problem with exactly the documented text; got %v", ps)
}

// TestUnknownKeysDoNotHideOtherProblems: `mcpgw validate` lists every problem, also when
// one of them is a misspelt key.
func TestUnknownKeysDoNotHideOtherProblems(t *testing.T) {
	_, ps, err := Parse([]byte("servers:\n  a: {type: stdio, comand: x}\n  b: {type: sse}\n"))
	if err == nil {
		t.Fatal("accepted")
	}
	var errs []string
	for _, p := range ps {
		errs = append(errs, p.String())
	}
	for _, want := range []string{"servers.a.comand: line 2: unknown key", "servers.a: type stdio needs a command", "servers.b: type sse needs a url"} {
		if !matchAny(errs, "~"+want) {
			t.Errorf("missing %q in %v", want, errs)
		}
	}
}

func TestEnvExpansion(t *testing.T) {
	t.Setenv("MCPGW_T_URL", "http://127.0.0.1:9000/mcp")
	t.Setenv("MCPGW_T_TOKEN", "tok")
	t.Setenv("MCPGW_T_EMPTY", "")
	os.Unsetenv("MCPGW_T_UNSET")
	yaml := `servers:
  a:
    type: streamable_http
    url: ${MCPGW_T_URL}
    headers:
      Authorization: "Bearer ${MCPGW_T_TOKEN}"
      X-Default: "${MCPGW_T_UNSET:-fallback}"
      X-Empty-Default: "${MCPGW_T_EMPTY:-was-empty}"
      X-Set-Default: "${MCPGW_T_TOKEN:-unused}"
      X-Missing: "[${MCPGW_T_UNSET}]"
      X-Literal: "$MCPGW_T_TOKEN {x} ${not-a-name}"
`
	cfg, ps, err := Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Servers["a"]
	if a.URL != "http://127.0.0.1:9000/mcp" {
		t.Errorf("url = %q", a.URL)
	}
	want := map[string]string{
		"Authorization":   "Bearer tok",
		"X-Default":       "fallback",
		"X-Empty-Default": "was-empty",
		"X-Set-Default":   "tok",
		"X-Missing":       "[]",
		"X-Literal":       "$MCPGW_T_TOKEN {x} ${not-a-name}",
	}
	for k, v := range want {
		if a.Headers[k] != v {
			t.Errorf("header %s = %q, want %q", k, a.Headers[k], v)
		}
	}
	w := ps.Warnings()
	if len(w) != 1 || !strings.Contains(w[0].Text, "MCPGW_T_UNSET") {
		t.Errorf("warnings = %v, want exactly one naming MCPGW_T_UNSET", w)
	}
}

// TestEnvValuesAreNotYAML: a secret with YAML syntax in it arrives as typed in the
// environment.
func TestEnvValuesAreNotYAML(t *testing.T) {
	t.Setenv("MCPGW_T_PW", `pa"ss #word`)
	// An unquoted ${VAR} inside a flow mapping ({…}) is not valid YAML (its "}" ends the
	// mapping), so the unquoted reference sits in a block mapping.
	cfg, _, err := Parse([]byte("servers:\n  a:\n    type: http\n    url: http://x/mcp\n    headers:\n      X-Pw: ${MCPGW_T_PW}\n      X-Q: \"${MCPGW_T_PW}\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"X-Pw", "X-Q"} {
		if got := cfg.Servers["a"].Headers[k]; got != `pa"ss #word` {
			t.Errorf("%s = %q", k, got)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, _, err := Parse([]byte("servers:\n  a: {type: http, url: \"http://x/mcp\", timeouts: {call: 2s}}\n  b: {type: stdio, command: x}\nupstream: {call_timeout: 300ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != "127.0.0.1:8080" || cfg.Store != "bolt" || cfg.Naming.Separator != "__" || cfg.Naming.MaxLength != 64 || cfg.HTTP.MaxBodyBytes != 4<<20 {
		t.Errorf("defaults: %+v", cfg)
	}
	if cfg.Servers["a"].Timeouts.Call != 2*time.Second || cfg.Servers["b"].Timeouts.Call != 300*time.Millisecond {
		t.Errorf("call timeouts a=%v b=%v", cfg.Servers["a"].Timeouts.Call, cfg.Servers["b"].Timeouts.Call)
	}
	if cfg.Upstream.BusyPoll != 0 {
		t.Errorf("upstream.busy_poll = %s, want 0 (off by default)", cfg.Upstream.BusyPoll)
	}
	if on, _, err := Parse([]byte("upstream: {busy_poll: 200us}\n")); err != nil || on.Upstream.BusyPoll != 200*time.Microsecond {
		t.Errorf("busy_poll 200us: %v, %v (want kept as set)", on.Upstream.BusyPoll, err)
	}
	if off, _, err := Parse([]byte("upstream: {busy_poll: -1s}\n")); err != nil || off.Upstream.BusyPoll >= 0 {
		t.Errorf("busy_poll -1s: %v, %v (want negative: off)", off.Upstream.BusyPoll, err)
	}
	if cfg.Servers["a"].ProtocolVer != ProtocolAuto {
		t.Errorf("upstream protocol = %q, want %s", cfg.Servers["a"].ProtocolVer, ProtocolAuto)
	}
	// max_concurrency: 1 for stdio, unlimited for HTTP, as configured when set (0 too).
	if a, b := cfg.Servers["a"].Concurrency(), cfg.Servers["b"].Concurrency(); a != 0 || b != 1 {
		t.Errorf("max_concurrency a=%d b=%d, want 0 (http) and 1 (stdio)", a, b)
	}
	if q := cfg.Servers["b"].Queue; q.Max != 64 || q.Timeout != 30*time.Second {
		t.Errorf("queue = %+v, want max 64, timeout 30s", q)
	}
	set, _, err := Parse([]byte("servers:\n  a: {type: http, url: \"http://x/mcp\", max_concurrency: 4}\n  b: {type: stdio, command: x, max_concurrency: 0, queue: {max: 3, timeout: 2s}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := set.Servers["a"].Concurrency(), set.Servers["b"].Concurrency(); a != 4 || b != 0 {
		t.Errorf("configured max_concurrency a=%d b=%d, want 4 and 0", a, b)
	}
	if q := set.Servers["b"].Queue; q.Max != 3 || q.Timeout != 2*time.Second {
		t.Errorf("configured queue = %+v", q)
	}
}

func TestLoadConfigNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mcpgw.yaml")
	if err := os.WriteFile(p, []byte("listen: 127.0.0.1:9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := Load(p)
	if err != nil || cfg.Path != p {
		t.Fatalf("Load: %v, path %q", err, cfg.Path)
	}
	_, _, err = Load(filepath.Join(t.TempDir(), "missing.yaml"))
	if err == nil || !regexp.MustCompile(`missing\.yaml`).MatchString(err.Error()) {
		t.Fatalf("missing file: %v", err)
	}
}

// TestArchitectureDocShowsTheExample keeps docs/architecture.md's config example the one
// TestDesignExampleParses parses.
func TestArchitectureDocShowsTheExample(t *testing.T) {
	b, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/architecture.md has no ```yaml block")
	}
	if block != designExample {
		t.Fatalf("docs/architecture.md's example differs from designExample:\n%s", block)
	}
}

// TestRunExampleHasThePlugin: the config `make run` serves loads from the repository root
// (where make runs it: its paths are relative to it), with its sql plugin and the seed.
func TestRunExampleHasThePlugin(t *testing.T) {
	t.Setenv("MCPGW_STATE_DIR", t.TempDir())
	t.Chdir("..")
	cfg, _, err := Load("examples/mcpgw.yaml")
	if err != nil {
		t.Fatal(err)
	}
	shop := cfg.Plugins["shop"]
	if shop == nil || shop.Type != "sql" || len(shop.Connections) != 1 {
		t.Fatalf("examples/mcpgw.yaml: plugin shop %+v", shop)
	}
	for id, c := range shop.Connections {
		if c.Seed == "" {
			t.Errorf("connection %s has no seed: the first start would serve an empty database", id)
		}
	}
}

// TestUpstreamVersion: protocol_version auto (the default) asks HTTP upstreams, and the
// instances of stateless callers, for the stateless revision first; a set version wins.
func TestUpstreamVersion(t *testing.T) {
	for _, tc := range []struct {
		typ, set  string
		stateless bool
		want      string
	}{
		{"stdio", "", false, "2025-11-25"},
		{"stdio", "", true, ProtocolAuto},
		{"streamable_http", "", false, ProtocolAuto},
		{"sse", ProtocolAuto, false, "2025-11-25"},
		{"stdio", "2025-06-18", true, "2025-06-18"},
		{"streamable_http", "2025-11-25", false, "2025-11-25"},
	} {
		d := ServerDef{Type: tc.typ, ProtocolVer: tc.set}
		if got := d.UpstreamVersion(tc.stateless); got != tc.want {
			t.Errorf("%s, protocol_version %q, stateless owner %v: %q, want %q", tc.typ, tc.set, tc.stateless, got, tc.want)
		}
	}
}
