package e2e

// Real clients against one mcpgw: the TypeScript SDK client (js/aggregate-client.mjs)
// over streamable HTTP and legacy SSE, the Inspector CLI, and the go-sdk v1.8.0 client.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// aggregateServers are the upstream names of TestAggregateTSClient's gateway.
var aggregateServers = []string{"ev-stdio", "ev-http", "ev-sse", "filesystem", "memory"}

// TestAggregateTSClient: one gateway over the npm server-everything by stdio,
// streamable HTTP and SSE, plus server-filesystem and server-memory (stdio), driven by the
// TypeScript SDK client. Names are prefixed and valid, a call works on each transport,
// progress comes through, and an aborted call puts notifications/cancelled on the wire of
// the upstream that ran it (observed with tee on stdio and a recording proxy on HTTP).
func TestAggregateTSClient(t *testing.T) {
	needGatewayBin(t)
	nodeBinPath := node(t)
	everything := serverEverythingScript(t)
	fsScript := npmServerScript(t, "server-filesystem")
	memScript := npmServerScript(t, "server-memory")

	httpUp := startServerEverythingNode(t, "streamableHttp")
	sseUp := startServerEverythingNode(t, "sse")
	// Recording proxies in front of the HTTP upstreams: they see what the gateway sends.
	httpRec := newRecorder(t, httpUp)
	sseRec := newRecorder(t, sseUp)
	hu, _ := url.Parse(httpUp)
	su, _ := url.Parse(sseUp)

	work := t.TempDir()
	inLog := filepath.Join(work, "ev-stdio-in.log")
	allowed := filepath.Join(work, "allowed")
	if err := os.MkdirAll(allowed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(allowed, "hello.txt"), []byte("hello from mcpgw e2e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	memFile := filepath.Join(work, "memory.jsonl")
	// The stdio server-everything reads its stdin through tee, so the test sees every
	// message the gateway wrote to it.
	teeCmd := fmt.Sprintf("tee -a '%s' | exec '%s' '%s'", inLog, nodeBinPath, everything)

	g := startGatewayChecked(t, `
log: {level: debug, format: text}
upstream: {call_timeout: 60s}
servers:
  ev-stdio:
    type: stdio
    command: sh
    args: ["-c", `+yamlQuote(teeCmd)+`]
  ev-http:
    type: streamable_http
    url: `+httpRec.URL+hu.Path+`
  ev-sse:
    type: sse
    url: `+sseRec.URL+su.Path+`
  filesystem:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(fsScript)+`, `+yamlQuote(allowed)+`]
  memory:
    type: stdio
    command: `+yamlQuote(nodeBinPath)+`
    args: [`+yamlQuote(memScript)+`]
    env: {MEMORY_FILE_PATH: `+yamlQuote(memFile)+`}
`)
	rz, err := getReadyz(g)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range aggregateServers {
		if u := rz.upstream(name); u == nil || u.State != "up" || u.Tools == 0 {
			t.Fatalf("upstream %s not up: %+v (all: %+v)", name, u, rz.Upstreams)
		}
	}

	// The listing through the legacy SSE front first (before any session has started a
	// per-session instance), to compare with the streamable HTTP listing below.
	legacy := runAggregateClient(t, g.Base+"/sse", []Step{
		{"op": "call", "name": "ev-http__echo", "args": map[string]any{"message": "via legacy front"}},
	}, ClientOptions{Transport: "sse", Timeout: 60 * time.Second})
	if !legacy.OK {
		t.Fatalf("TS client over /sse failed: %+v", legacy.Error)
	}
	if len(legacy.Results) != 1 || !legacy.Results[0].OK || !strings.Contains(string(legacy.Results[0].Result), "Echo: via legacy front") {
		t.Errorf("echo over /sse: %+v", legacy.Results)
	}

	const longArgsDuration = 20 // seconds: the aborted calls' duration, to find them on the wire
	long := map[string]any{"duration": longArgsDuration, "steps": longArgsDuration}
	steps := []Step{
		{"op": "call", "name": "ev-stdio__echo", "args": map[string]any{"message": "via stdio"}},
		{"op": "call", "name": "ev-http__echo", "args": map[string]any{"message": "via streamable http"}},
		{"op": "call", "name": "ev-sse__echo", "args": map[string]any{"message": "via sse"}},
		{"op": "call", "name": "filesystem__list_allowed_directories", "args": map[string]any{}},
		{"op": "call", "name": "filesystem__read_text_file", "args": map[string]any{"path": filepath.Join(allowed, "hello.txt")}},
		{"op": "call", "name": "memory__read_graph", "args": map[string]any{}},
		{"op": "call", "name": "ev-stdio__trigger-long-running-operation", "args": map[string]any{"duration": 1, "steps": 4}, "progress": true},
		{"op": "call", "name": "ev-http__trigger-long-running-operation", "args": map[string]any{"duration": 1, "steps": 4}, "progress": true},
		{"op": "call", "name": "ev-sse__trigger-long-running-operation", "args": map[string]any{"duration": 1, "steps": 4}, "progress": true},
		{"op": "call", "name": "ev-stdio__trigger-long-running-operation", "args": long, "progress": true, "abortAfterMs": 1500},
		{"op": "call", "name": "ev-http__trigger-long-running-operation", "args": long, "progress": true, "abortAfterMs": 1500},
		{"op": "call", "name": "ev-sse__trigger-long-running-operation", "args": long, "progress": true, "abortAfterMs": 1500},
		{"op": "ping"},
		{"op": "sleep", "ms": 300}, // lets the last cancellation travel before the client closes
	}
	rep := runAggregateClient(t, g.URL, steps, ClientOptions{Timeout: 90 * time.Second})
	if !rep.OK {
		t.Fatalf("TS client failed: %+v (transport errors %v)", rep.Error, rep.TransportErrors)
	}
	t.Logf("TS client: protocol %s, %d tools in %d page(s), notifications %v", rep.ProtocolVersion, len(rep.Tools), rep.ToolPages, rep.Notifications)
	if !slices.Equal(legacy.Tools, rep.Tools) {
		t.Errorf("tools over /sse differ from /mcp:\n sse: %v\n mcp: %v", legacy.Tools, rep.Tools)
	}

	// Names: every tool is SERVER__tool, valid, unique; each server contributes.
	perServer := map[string][]string{}
	seen := map[string]bool{}
	for _, name := range rep.Tools {
		if !exposedNameRE.MatchString(name) {
			t.Errorf("tool name %q does not match %s", name, exposedNameRE)
		}
		if seen[name] {
			t.Errorf("tool %q listed twice", name)
		}
		seen[name] = true
		if gatewayOwnTool(name) {
			continue // auto served this view thin: its describe tool is the gateway's
		}
		server, tool, ok := strings.Cut(name, "__")
		if !ok || !slices.Contains(aggregateServers, server) {
			t.Errorf("tool %q is not prefixed with a server name and __", name)
			continue
		}
		perServer[server] = append(perServer[server], tool)
	}
	for _, server := range aggregateServers {
		if server == "ev-stdio" {
			// /readyz counts the catalogue probe's tools, read with every capability the
			// gateway relays; this session's own instance serves a client that declared
			// none of them (compared with ev-http's below).
			continue
		}
		if u := rz.upstream(server); u != nil && len(perServer[server]) != u.Tools {
			t.Errorf("%s: tools/list shows %d tools, /readyz says %d", server, len(perServer[server]), u.Tools)
		}
	}
	for server, want := range map[string][]string{
		"ev-stdio":   {"echo", "trigger-long-running-operation", "get-sum"},
		"ev-http":    {"echo", "trigger-long-running-operation", "get-sum"},
		"ev-sse":     {"echo", "trigger-long-running-operation", "get-sum"},
		"filesystem": {"list_allowed_directories", "read_text_file", "write_file"},
		"memory":     {"read_graph", "create_entities", "search_nodes"},
	} {
		for _, w := range want {
			if !slices.Contains(perServer[server], w) {
				t.Errorf("%s lacks %s__%s; it has %v", server, server, w, perServer[server])
			}
		}
	}
	if n := len(perServer["filesystem"]); n != 14 {
		t.Errorf("filesystem: %d tools, want 14: %v", n, perServer["filesystem"])
	}
	if n := len(perServer["memory"]); n != 9 {
		t.Errorf("memory: %d tools, want 9: %v", n, perServer["memory"])
	}
	ref := sortedCopy(perServer["ev-http"])
	if got := sortedCopy(perServer["ev-sse"]); !slices.Equal(got, ref) {
		t.Errorf("ev-sse exposes %v, ev-http %v: the same server should expose the same tools on every transport", got, ref)
	}
	// ev-stdio is per_session: the session is listed its own instance's tools, started
	// with the client's capabilities ({}), so the shared connections' tools less those the
	// server registers only for roots, sampling or elicitation (docs/sessions.md).
	var own []string
	for _, name := range ref {
		if !slices.Contains(capGated, "ev__"+name) {
			own = append(own, name)
		}
	}
	if got := sortedCopy(perServer["ev-stdio"]); !slices.Equal(got, own) {
		t.Errorf("ev-stdio (per_session, a client of no capabilities) exposes %v, want ev-http's less the capability-gated ones %v", got, own)
	}

	if len(rep.Results) != len(steps) {
		t.Fatalf("got %d results for %d steps", len(rep.Results), len(steps))
	}
	res := func(i int) StepResult { return rep.Results[i] }
	for i, want := range []string{"Echo: via stdio", "Echo: via streamable http", "Echo: via sse"} {
		if r := res(i); !r.OK || !strings.Contains(string(r.Result), want) || isErrorJSON(r.Result) {
			t.Errorf("step %d (%s): ok=%v error=%+v result=%s", i, steps[i]["name"], r.OK, r.Error, r.Result)
		}
	}
	if r := res(3); !r.OK || isErrorJSON(r.Result) || !strings.Contains(string(r.Result), filepath.Base(allowed)) {
		t.Errorf("list_allowed_directories: ok=%v error=%+v result=%s", r.OK, r.Error, r.Result)
	}
	if r := res(4); !r.OK || isErrorJSON(r.Result) || !strings.Contains(string(r.Result), "hello from mcpgw e2e") {
		t.Errorf("read_text_file: ok=%v error=%+v result=%s", r.OK, r.Error, r.Result)
	}
	if r := res(5); !r.OK || isErrorJSON(r.Result) || !strings.Contains(string(r.Result), "entities") {
		t.Errorf("read_graph: ok=%v error=%+v result=%s", r.OK, r.Error, r.Result)
	}
	for i := 6; i <= 8; i++ {
		r := res(i)
		// Over SSE the last progress notification may trail the result, so ask for most.
		if !r.OK || isErrorJSON(r.Result) || !strings.Contains(string(r.Result), "Long running operation completed") || len(r.Progress) < 3 {
			t.Errorf("step %d (%s with progress): ok=%v error=%+v progress=%d (want >= 3) result=%s",
				i, steps[i]["name"], r.OK, r.Error, len(r.Progress), r.Result)
		}
		checkProgressShape(t, steps[i]["name"].(string), r.Progress)
	}
	for i := 9; i <= 11; i++ {
		if r := res(i); r.OK || !r.Aborted {
			t.Errorf("step %d (%s aborted): ok=%v aborted=%v error=%+v", i, steps[i]["name"], r.OK, r.Aborted, r.Error)
		}
	}
	if r := res(12); !r.OK {
		t.Errorf("ping after the aborts: %+v", r.Error)
	}

	// notifications/cancelled reached each upstream that ran an aborted call.
	for _, c := range []struct {
		name string
		rec  *recorder
	}{{"ev-http", httpRec}, {"ev-sse", sseRec}} {
		if desc, ok := waitFor(5*time.Second, func() (bool, string) {
			return c.rec.saw("notifications/cancelled"), fmt.Sprint(c.rec.seen())
		}); !ok {
			t.Errorf("%s: no notifications/cancelled reached the upstream; gateway sent it: %s", c.name, desc)
		}
	}
	callID := ""
	desc, ok := waitFor(5*time.Second, func() (bool, string) {
		id, found, d := cancelledOnStdin(inLog, longArgsDuration)
		callID = id
		return found, d
	})
	if !ok {
		t.Errorf("ev-stdio: no notifications/cancelled for the aborted call on the upstream's stdin: %s\n--- %s ---\n%s",
			desc, inLog, tailFile(inLog, 4000))
	} else {
		t.Logf("ev-stdio: upstream call id %s was cancelled on the upstream's stdin", callID)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	sort.Strings(c)
	return c
}

// isErrorJSON reports whether a raw tool result says isError: true.
func isErrorJSON(raw json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.IsError
}

// checkProgressShape checks that relayed progress carries increasing progress values and
// the client's own token shape (the TS SDK matches by token, so it must be the client's).
func checkProgressShape(t *testing.T, label string, progress []json.RawMessage) {
	t.Helper()
	last := -1.0
	for _, raw := range progress {
		var p struct {
			Progress float64 `json:"progress"`
			Total    float64 `json:"total"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Errorf("%s: bad progress %s: %v", label, raw, err)
			continue
		}
		if p.Progress <= last {
			t.Errorf("%s: progress not increasing: %s after %v", label, raw, last)
		}
		last = p.Progress
	}
}

// cancelledOnStdin scans a tee'd upstream stdin for the tools/call of
// trigger-long-running-operation with the given duration and a notifications/cancelled
// naming its id after it. It returns that id, whether both were found, and what it saw.
func cancelledOnStdin(path string, duration int) (id string, found bool, desc string) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err.Error()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var cancels []string
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		switch {
		case m.Method == "tools/call" && m.Params.Name == "trigger-long-running-operation":
			var a struct {
				Duration int `json:"duration"`
			}
			_ = json.Unmarshal(m.Params.Arguments, &a)
			if a.Duration == duration {
				id = string(m.ID)
			}
		case m.Method == "notifications/cancelled":
			cancels = append(cancels, string(m.Params.RequestID))
			if id != "" && string(m.Params.RequestID) == id {
				return id, true, ""
			}
		}
	}
	return id, false, fmt.Sprintf("call id %q, cancellations seen for ids %v", id, cancels)
}

// TestInspectorCLI: the Inspector CLI lists and calls tools through the gateway.
func TestInspectorCLI(t *testing.T) {
	needGatewayBin(t)
	nodeBin(t, "mcp-inspector")
	up := startEverythingHTTP(t)
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
servers:
  everything:
    type: streamable_http
    url: `+up+`
`)
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	res := runInspector(t, 90*time.Second, &list, g.URL, "--transport", "http", "--method", "tools/list")
	if res.ExitCode != 0 {
		t.Fatalf("inspector tools/list: exit %d (timed out %v)\nstdout: %s\nstderr: %s", res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if !strings.HasPrefix(tl.Name, "everything__") || !exposedNameRE.MatchString(tl.Name) {
			t.Errorf("tool %q: want prefix everything__ and %s", tl.Name, exposedNameRE)
		}
	}
	if !slices.Contains(names, "everything__test_simple_text") || len(names) < 10 {
		t.Errorf("inspector tools/list through the gateway: %v", names)
	}

	var call struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	res = runInspector(t, 90*time.Second, &call, g.URL, "--transport", "http",
		"--header", "X-Agent-ID: inspector-e2e",
		"--method", "tools/call", "--tool-name", "everything__test_simple_text", "--tool-args-json", "{}")
	if res.ExitCode != 0 {
		t.Fatalf("inspector tools/call: exit %d (timed out %v)\nstdout: %s\nstderr: %s", res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
	}
	if call.IsError || len(call.Content) == 0 || !strings.Contains(call.Content[0].Text, "This is a simple text response") {
		t.Errorf("inspector tools/call result: %s", res.Stdout)
	}

	// An unknown tool is an error, not a hang or a crash.
	res = runInspector(t, 90*time.Second, nil, g.URL, "--transport", "http",
		"--method", "tools/call", "--tool-name", "everything__no_such_tool", "--tool-args-json", "{}")
	t.Logf("inspector, unknown tool: exit %d, stdout %s, stderr %s", res.ExitCode, strings.TrimSpace(res.Stdout), lastLine(res.Stderr))
	if res.TimedOut || res.ExitCode == 0 || !strings.Contains(res.Stdout+res.Stderr, "not found") {
		t.Errorf("inspector call of an unknown tool: exit %d timed out %v stdout %s", res.ExitCode, res.TimedOut, res.Stdout)
	}
}

// TestGoSDKClient: a go-sdk v1.8.0 client with default options (it probes 2026-07-28
// first) connects over streamable HTTP, where it stays on the stateless revision (no
// initialize, no session), and over legacy SSE at /sse and /mcp/sse; it lists and calls.
func TestGoSDKClient(t *testing.T) {
	needGatewayBin(t)
	everythingServer(t)
	g := startGatewayChecked(t, `
log: {level: debug, format: text}
servers:
  everything:
    type: stdio
    command: {{everything_server}}
`)
	// The streamable client goes through a recording proxy, to see its 2026-07-28 probe.
	rec := newRecorder(t, g.URL)
	for _, tc := range []struct {
		name      string
		transport mcp.Transport
		version   string
	}{
		{"streamable", &mcp.StreamableClientTransport{Endpoint: rec.URL + "/mcp"}, "2026-07-28"},
		{"sse", &mcp.SSEClientTransport{Endpoint: g.Base + "/sse"}, ""},
		// The same front under /mcp (GET /mcp/sse, POST /mcp/messages).
		{"sse-under-mcp", &mcp.SSEClientTransport{Endpoint: g.Base + "/mcp/sse"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gc := connectGoClientProbing(t, tc.transport)
			if tc.name == "streamable" {
				seen := rec.seen()
				// go-sdk v1.8.0 asks server/discover (2026-07-28) first, and the gateway
				// answers it: no initialize follows.
				if !slices.Contains(seen, "server/discover") || slices.Contains(seen, "initialize") {
					t.Errorf("want server/discover and no initialize on the wire, saw %v", seen)
				}
			}
			ir := gc.InitializeResult()
			if ir == nil {
				t.Fatal("no initialize result")
			}
			if ir.ServerInfo == nil || ir.ServerInfo.Name != "mcpgw" {
				t.Fatalf("serverInfo: %+v", ir.ServerInfo)
			}
			t.Logf("negotiated %s with %s %s", ir.ProtocolVersion, ir.ServerInfo.Name, ir.ServerInfo.Version)
			if tc.version != "" && ir.ProtocolVersion != tc.version {
				t.Errorf("protocol %q, want %q", ir.ProtocolVersion, tc.version)
			}
			if ir.Capabilities == nil || ir.Capabilities.Tools == nil || !ir.Capabilities.Tools.ListChanged {
				t.Errorf("capabilities lack tools.listChanged: %+v", ir.Capabilities)
			}
			names := gc.toolNames(t)
			if !slices.Contains(names, "everything__test_simple_text") {
				t.Fatalf("tools: %v", names)
			}
			for _, n := range names {
				if !exposedNameRE.MatchString(n) || !strings.HasPrefix(n, "everything__") {
					t.Errorf("tool name %q", n)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "everything__test_simple_text", Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if res.IsError || !strings.Contains(resultText(res), "This is a simple text response") {
				t.Errorf("call result: isError=%v %q", res.IsError, resultText(res))
			}
			// Progress through a per-session stdio instance, with the client's own token.
			pr := gc.callAsync(ctx, "everything__test_tool_with_progress", map[string]any{}, "go-tok-1")
			var cr callResult
			select {
			case cr = <-pr:
			case <-ctx.Done():
				t.Fatal("progress call did not return")
			}
			if cr.err != nil || cr.res.IsError {
				t.Fatalf("progress call: %v %q", cr.err, resultText(cr.res))
			}
			n := 0
			for drained := false; !drained; {
				select {
				case p := <-gc.progress:
					n++
					if p.ProgressToken != "go-tok-1" {
						t.Errorf("progress token %v, want the client's go-tok-1", p.ProgressToken)
					}
				case <-time.After(500 * time.Millisecond):
					drained = true
				}
			}
			if n == 0 {
				t.Errorf("no progress notifications reached the go-sdk client")
			}
			// An unknown tool is a JSON-RPC error (-32602), not a transport failure.
			if _, err := gc.CallTool(ctx, &mcp.CallToolParams{Name: "everything__nope"}); err == nil {
				t.Errorf("call of an unknown tool succeeded")
			}
			if tc.version == "2026-07-28" {
				// The stateless revision has no ping (404, as from any 2026-07-28 server):
				// the next request works.
				if _, err := gc.ListTools(ctx, nil); err != nil {
					t.Errorf("tools/list after the error: %v", err)
				}
			} else if err := gc.Ping(ctx, nil); err != nil {
				t.Errorf("ping after the error: %v", err)
			}
		})
	}
}
