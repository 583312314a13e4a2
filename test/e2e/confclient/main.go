// size: being split (issue 41)

// Command confclient is the client that the MCP conformance suite's client scenarios run
// (`conformance client --command confclient --scenario NAME`): it starts mcpgw with the
// scenario server as its one streamable HTTP upstream, connects to the gateway with the
// go-sdk client and makes the calls the scenario expects. The suite's checks then judge
// mcpgw as the client of that upstream (test/e2e/conformance_client_test.go).
//
// The suite appends the scenario server's URL as the last argument and names the
// scenario in MCP_CONFORMANCE_SCENARIO, the revision in MCP_CONFORMANCE_PROTOCOL_VERSION
// and any fixed inputs in MCP_CONFORMANCE_CONTEXT (a JSON object). The gateway binary is
// $MCPGW_BIN; its config, state and log go to $MCPGW_CONFCLIENT_DIR (a temporary
// directory, removed at exit, when unset). The gateway listens on 127.0.0.1 only and is
// stopped by its pid (SIGTERM, SIGKILL after 5 s) before the driver exits, also when the
// driver fails or is told to stop. The driver exits 1 when a call through the gateway
// fails or answers something other than the scenario server sent, 2 on bad usage.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// runLimit bounds the whole run; the suite's own timeout (the test passes --timeout)
	// is longer, so the driver stops its gateway itself rather than being killed.
	runLimit = 45 * time.Second
	// readyLimit bounds the wait for the gateway's health and for the upstream to be up.
	readyLimit = 20 * time.Second
	// stopGrace is how long the gateway gets after SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// upstreamName is the scenario server's name in the gateway's config.
	upstreamName = "scenario"
)

// upstreamSettings are how the gateway's config names the scenario server.
type upstreamSettings struct {
	// mode is servers.scenario.mode ("": the default, shared for HTTP).
	mode string
	// version is servers.scenario.protocol_version ("": the gateway's default, which
	// falls back to the stateless revision when the server refuses initialize).
	version string
	// clientVersion is the revision the driver's own session asks the gateway for ("":
	// the go-sdk client's latest, 2026-07-28).
	clientVersion string
	// auth is the servers.scenario.auth section ("": none).
	auth string
	// bearer is the token the driver presents to the gateway as its caller's own ("":
	// none): what a token exchange upstream's grant is exchanged from.
	bearer string
}

func main() {
	var up upstreamSettings
	flag.StringVar(&up.mode, "mode", "", "the upstream's instance mode (shared, per_session; default: the gateway's)")
	flag.StringVar(&up.clientVersion, "client-version", "", "the revision the driver's session with the gateway asks for (default: the go-sdk client's latest)")
	negotiate := flag.Bool("negotiate", false, "leave protocol_version unset: the gateway picks the revision, not MCP_CONFORMANCE_PROTOCOL_VERSION")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: confclient [-mode M] [-client-version V] [-negotiate] SCENARIO_SERVER_URL (run by `conformance client --command`)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if !*negotiate {
		up.version = os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	}
	os.Exit(run(flag.Arg(0), up))
}

func run(serverURL string, up upstreamSettings) int {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	act, ok := scenarios[scenario]
	authScenario := strings.HasPrefix(scenario, "auth/")
	if authScenario {
		var err error
		if up.auth, up.bearer, err = authSettings(scenario); err != nil {
			logf("%v", err)
			return 2
		}
		ok = true
	}
	if !ok {
		logf("unknown scenario %q (MCP_CONFORMANCE_SCENARIO); known: %s", scenario, strings.Join(scenarioNames(), ", "))
		return 2
	}
	bin := os.Getenv("MCPGW_BIN")
	if bin == "" {
		logf("MCPGW_BIN is not set: it names the mcpgw binary under test")
		return 2
	}
	var scenarioCtx scenarioContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &scenarioCtx); err != nil {
			logf("MCP_CONFORMANCE_CONTEXT: %v", err)
			return 2
		}
	}
	dir := os.Getenv("MCPGW_CONFCLIENT_DIR")
	if dir == "" {
		d, err := os.MkdirTemp("", "confclient-")
		if err != nil {
			logf("%v", err)
			return 1
		}
		defer os.RemoveAll(d)
		dir = d
	}

	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	ctx, stopSignals := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()

	g, err := startGateway(ctx, bin, dir, serverURL, up)
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer g.stop()
	logf("scenario %s (upstream revision %q, mode %q; client revision %q): mcpgw pid %d on %s, upstream %s, log %s",
		scenario, up.version, up.mode, up.clientVersion, g.pid(), g.base, serverURL, g.logPath)
	wait := g.waitUpstream
	if authScenario && up.bearer == "" {
		wait = g.waitGranted
	}
	if up.bearer != "" {
		// The upstream's catalogue waits for a caller's token to exchange: the driver's
		// first request brings it.
		if _, err := g.rawToolNames(ctx); err != nil {
			logf("%v", err)
			return 1
		}
	}
	if err := wait(ctx); err != nil {
		logf("%v", err)
		return 1
	}
	s, err := connect(ctx, g, up.clientVersion)
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer s.cs.Close()
	logf("connected to mcpgw on %s; %d tools", s.cs.InitializeResult().ProtocolVersion, len(s.tools))
	if authScenario {
		err = authCalls(ctx, g, s)
	} else {
		err = act(ctx, s, scenarioCtx)
	}
	if err != nil {
		logf("scenario %s: %v", scenario, err)
		return 1
	}
	logf("scenario %s: every call through mcpgw answered as expected", scenario)
	return 0
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "confclient: "+format+"\n", args...)
}

// gateway is the mcpgw process the driver started.
type gateway struct {
	cmd      *exec.Cmd
	done     chan struct{}
	base     string // http://127.0.0.1:PORT
	stateDir string
	logPath  string
	// http makes the driver's own requests to the gateway (health, readiness, raw
	// listing), each bounded.
	http *http.Client
	// bearer is presented on every request to the gateway ("": none).
	bearer string
	// consents counts the authorizations given (auth.go).
	consents int
}

func (g *gateway) pid() int { return g.cmd.Process.Pid }

// startGateway writes a config whose one upstream is serverURL (streamable HTTP, with
// up's settings) and starts bin with it on a free loopback port, retrying on another port
// when the one picked was taken meanwhile.
func startGateway(ctx context.Context, bin, dir, serverURL string, up upstreamSettings) (*gateway, error) {
	var lastErr error
	for attempt := 1; attempt <= 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		stateDir := filepath.Join(dir, fmt.Sprintf("state-%d", attempt))
		cfg := fmt.Sprintf(`listen: 127.0.0.1:%d
state_dir: %s
naming: {prefix: never}
log: {level: debug, format: text}
servers:
  %s:
    type: streamable_http
    url: %q
`, port, stateDir, upstreamName, serverURL)
		if up.version != "" {
			cfg += fmt.Sprintf("    protocol_version: %q\n", up.version)
		}
		if up.mode != "" {
			cfg += fmt.Sprintf("    mode: %s\n", up.mode)
		}
		cfg += up.auth
		cfgPath := filepath.Join(dir, fmt.Sprintf("mcpgw-%d.yaml", attempt))
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			return nil, err
		}
		logPath := filepath.Join(dir, fmt.Sprintf("mcpgw-%d.log", attempt))
		logFile, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		// The gateway stays in the driver's process group: whoever runs the suite can end
		// the whole group even if the driver itself is killed.
		cmd := exec.Command(bin, "serve", "--config", cfgPath)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			logFile.Close()
			return nil, fmt.Errorf("start %s: %w", bin, err)
		}
		logFile.Close()
		g := &gateway{cmd: cmd, done: make(chan struct{}), base: fmt.Sprintf("http://127.0.0.1:%d", port),
			stateDir: stateDir, logPath: logPath, http: &http.Client{Timeout: 5 * time.Second}, bearer: up.bearer}
		if up.bearer != "" {
			g.http.Transport = bearerTransport{up.bearer}
		}
		go func() {
			_ = cmd.Wait()
			close(g.done)
		}()
		lastErr = g.waitHealthy(ctx)
		if lastErr == nil {
			return g, nil
		}
		g.stop()
		log, _ := os.ReadFile(logPath)
		if !strings.Contains(strings.ToLower(string(log)), "address already in use") {
			return nil, fmt.Errorf("%w; mcpgw log:\n%s", lastErr, log)
		}
	}
	return nil, lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// stop ends the gateway by its pid: SIGTERM, SIGKILL after stopGrace.
func (g *gateway) stop() {
	select {
	case <-g.done:
		return
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(stopGrace):
		_ = g.cmd.Process.Kill()
		select {
		case <-g.done:
		case <-time.After(stopGrace):
			logf("mcpgw pid %d did not exit after SIGKILL", g.pid())
		}
	}
}

// session is the driver's connection to the gateway, with the tools it lists.
type session struct {
	cs    *mcp.ClientSession
	tools []*mcp.Tool
	// elicitations counts the elicitation requests the gateway relayed to the driver.
	elicitations atomic.Int32
}

// connect opens a go-sdk client session to the gateway on revision version ("": the
// client's latest), which answers elicitation requests by accepting the schema's
// defaults, as a user who changes nothing would, and lists its tools.
func connect(ctx context.Context, g *gateway, version string) (*session, error) {
	url := g.base + "/mcp"
	s := &session{}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgw-confclient", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			s.elicitations.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: schemaDefaults(r.Params.RequestedSchema)}, nil
		},
	})
	var hc *http.Client
	if g.bearer != "" {
		hc = &http.Client{Transport: bearerTransport{g.bearer}}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, fmt.Errorf("connect to mcpgw: %w", err)
	}
	s.cs = cs
	raw, err := g.rawToolNames(ctx)
	if err != nil {
		cs.Close()
		return nil, err
	}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			cs.Close()
			return nil, fmt.Errorf("tools/list through mcpgw: %w", err)
		}
		s.tools = append(s.tools, tool)
		if len(s.tools) > 1000 {
			cs.Close()
			return nil, errors.New("tools/list through mcpgw: more than 1000 tools")
		}
	}
	// The go-sdk client leaves out tools a client must not call (invalid x-mcp-header
	// annotations, SEP-2243): the gateway must not show such a tool in the first place.
	if dropped := slices.DeleteFunc(raw, func(n string) bool { return s.tool(n) != nil }); len(dropped) > 0 {
		cs.Close()
		return nil, fmt.Errorf("mcpgw lists tools a client must leave out (the go-sdk client dropped them): %v", dropped)
	}
	return s, nil
}

// rawToolNames lists the gateway's tools with plain 2026-07-28 requests, as the gateway
// sends them, without a client library's filtering.
func (g *gateway) rawToolNames(ctx context.Context) ([]string, error) {
	var names []string
	cursor := ""
	for page := 0; page < 100; page++ {
		params := map[string]any{"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]string{"name": "mcpgw-confclient", "version": "1.0.0"},
		}}
		if cursor != "" {
			params["cursor"] = cursor
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": page + 1, "method": "tools/list", "params": params})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.base+"/mcp", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := g.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("raw tools/list: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("raw tools/list: %w", err)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			// The answer is the last data line of the stream (notifications come first).
			for _, line := range strings.Split(string(b), "\n") {
				if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
					b = []byte(d)
				}
			}
		}
		var r struct {
			Result *struct {
				Tools      []struct{ Name string } `json:"tools"`
				NextCursor string                  `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &r); err != nil || r.Result == nil {
			return nil, fmt.Errorf("raw tools/list: HTTP %d: %.500s", resp.StatusCode, b)
		}
		for _, t := range r.Result.Tools {
			names = append(names, t.Name)
		}
		if r.Result.NextCursor == "" {
			return names, nil
		}
		cursor = r.Result.NextCursor
	}
	return nil, errors.New("raw tools/list: more than 100 pages")
}

// schemaDefaults is the content of an accepted form: each property's default.
func schemaDefaults(schema any) map[string]any {
	b, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(b, &s)
	out := map[string]any{}
	for name, p := range s.Properties {
		if p.Default != nil {
			out[name] = p.Default
		}
	}
	return out
}

func (s *session) tool(name string) *mcp.Tool {
	for _, t := range s.tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func (s *session) toolNames() []string {
	names := make([]string, 0, len(s.tools))
	for _, t := range s.tools {
		names = append(names, t.Name)
	}
	return names
}

// call calls a tool through the gateway and checks the text of its result: want is the
// text the scenario server answers (a prefix of it when it ends in "*").
func (s *session) call(ctx context.Context, name string, args any, want string) error {
	if s.tool(name) == nil {
		return fmt.Errorf("mcpgw does not list the scenario's tool %q (it lists %v)", name, s.toolNames())
	}
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return fmt.Errorf("tools/call %s through mcpgw: %w", name, err)
	}
	got := textOf(res)
	if res.IsError {
		return fmt.Errorf("tools/call %s through mcpgw: error result %q", name, got)
	}
	if prefix, ok := strings.CutSuffix(want, "*"); ok && strings.HasPrefix(got, prefix) || got == want {
		return nil
	}
	return fmt.Errorf("tools/call %s through mcpgw: got %q, the scenario server answers %q", name, got, want)
}

func textOf(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// scenarioContext is MCP_CONFORMANCE_CONTEXT: the tool calls a scenario wants made.
type scenarioContext struct {
	ToolCalls []struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"toolCalls"`
}

// scenarios are the calls each scenario expects of a client, made through the gateway
// (which has listed the upstream's tools, and its resources and prompts when it declares
// them, while connecting).
var scenarios = map[string]func(context.Context, *session, scenarioContext) error{
	// initialize, request-metadata and json-schema-ref-no-deref judge the handshake and the
	// listing, which the gateway did while connecting (the last one: that it fetched no
	// network $ref of a tool's schema).
	"initialize":               listOnly,
	"request-metadata":         listOnly,
	"json-schema-ref-no-deref": listOnly,

	"tools_call": func(ctx context.Context, s *session, _ scenarioContext) error {
		return s.call(ctx, "add_numbers", map[string]any{"a": 5, "b": 3}, "The sum of 5 and 3 is 8")
	},

	// The upstream asks for a form whose every field has a default; the driver accepts
	// the defaults, and the gateway must carry them back unchanged.
	"elicitation-sep1034-client-defaults": func(ctx context.Context, s *session, _ scenarioContext) error {
		if err := s.call(ctx, "test_client_elicitation_defaults", map[string]any{}, "Elicitation completed: *"); err != nil {
			return err
		}
		if n := s.elicitations.Load(); n != 1 {
			return fmt.Errorf("mcpgw relayed %d elicitation requests, want 1", n)
		}
		return nil
	},

	// The upstream ends the call's event stream after a priming event with retry 500 ms;
	// the gateway must resume with GET and Last-Event-ID, where the result comes.
	"sse-retry": func(ctx context.Context, s *session, _ scenarioContext) error {
		return s.call(ctx, "test_reconnection", map[string]any{}, "Reconnection test completed successfully")
	},

	// Multi round-trip requests (SEP-2322): the gateway completes or relays the upstream's
	// input_required results, echoing requestState, and keeps other calls clean of them.
	"sep-2322-client-request-state": func(ctx context.Context, s *session, _ scenarioContext) error {
		for _, c := range []struct{ tool, want string }{
			{"test_mrtr_echo_state", "echo-state-ok"},
			{"test_mrtr_unrelated", "unrelated-ok"},
			{"test_mrtr_no_state", "no-state-ok"},
			{"test_mrtr_no_result_type", "no-result-type-test-ok"},
		} {
			if err := s.call(ctx, c.tool, map[string]any{}, c.want); err != nil {
				return err
			}
		}
		// One form each for the two tools that ask, whichever side completes the round
		// trip (the gateway for a session-era client, the client itself on 2026-07-28).
		if n := s.elicitations.Load(); n != 2 {
			return fmt.Errorf("the driver answered %d elicitation requests, want 2 (test_mrtr_echo_state, test_mrtr_no_state)", n)
		}
		return nil
	},

	// Mcp-Method and Mcp-Name on every kind of request the scenario checks.
	"http-standard-headers": func(ctx context.Context, s *session, _ scenarioContext) error {
		for _, name := range []string{"test_headers", "my-hyphenated-tool"} {
			if err := s.call(ctx, name, map[string]any{}, "Headers test completed"); err != nil {
				return err
			}
		}
		res, err := s.cs.ListResources(ctx, nil)
		if err != nil {
			return fmt.Errorf("resources/list through mcpgw: %w", err)
		}
		if len(res.Resources) == 0 {
			return errors.New("resources/list through mcpgw: no resources, the scenario server lists 2")
		}
		for _, r := range res.Resources {
			if _, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI}); err != nil {
				return fmt.Errorf("resources/read %s through mcpgw: %w", r.URI, err)
			}
		}
		prompts, err := s.cs.ListPrompts(ctx, nil)
		if err != nil {
			return fmt.Errorf("prompts/list through mcpgw: %w", err)
		}
		if len(prompts.Prompts) == 0 {
			return errors.New("prompts/list through mcpgw: no prompts, the scenario server lists 1")
		}
		for _, p := range prompts.Prompts {
			if _, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name}); err != nil {
				return fmt.Errorf("prompts/get %s through mcpgw: %w", p.Name, err)
			}
		}
		return nil
	},

	// The tool calls the scenario names in its context: parameters marked x-mcp-header go
	// out as Mcp-Param-* headers too.
	"http-custom-headers": func(ctx context.Context, s *session, sc scenarioContext) error {
		if len(sc.ToolCalls) == 0 {
			return errors.New("MCP_CONFORMANCE_CONTEXT names no toolCalls")
		}
		for _, c := range sc.ToolCalls {
			if err := s.call(ctx, c.Name, c.Arguments, "Custom headers test completed"); err != nil {
				return err
			}
		}
		return nil
	},

	// A client calls whatever tools it is shown: the gateway must show valid_tool and none
	// of the upstream's tools whose x-mcp-header annotations are invalid (connect checks
	// its raw list against the go-sdk client's, which leaves those out).
	"http-invalid-tool-headers": func(ctx context.Context, s *session, _ scenarioContext) error {
		if s.tool("valid_tool") == nil {
			return fmt.Errorf("mcpgw does not list valid_tool (it lists %v)", s.toolNames())
		}
		for _, t := range s.tools {
			if err := s.call(ctx, t.Name, argsFor(t.InputSchema), "Tool call received"); err != nil {
				return err
			}
		}
		return nil
	},

	// The focal tool's inputSchema, as the gateway lists it, goes back verbatim to the
	// echo tool: the scenario compares it with what it served.
	"json-schema-2020-12-preservation": func(ctx context.Context, s *session, _ scenarioContext) error {
		focal := s.tool("json_schema_2020_12_tool")
		if focal == nil {
			return fmt.Errorf("mcpgw does not list json_schema_2020_12_tool (it lists %v)", s.toolNames())
		}
		return s.call(ctx, "json_schema_echo", map[string]any{"schema": focal.InputSchema}, "echoed")
	},
}

func listOnly(context.Context, *session, scenarioContext) error { return nil }

func scenarioNames() []string {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// argsFor makes arguments that satisfy a schema's required properties.
func argsFor(schema any) map[string]any {
	b, _ := json.Marshal(schema)
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(b, &s)
	args := map[string]any{}
	for _, name := range s.Required {
		switch s.Properties[name].Type {
		case "integer", "number":
			args[name] = 1
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		case "null":
			args[name] = nil
		default:
			args[name] = "us-west1"
		}
	}
	return args
}

// bearerTransport presents the driver's token on its MCP requests to the gateway (not on
// /readyz and the other owner's pages, which a foreign bearer token would close).
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/mcp" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}
