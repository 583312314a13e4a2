package dispatch_test

// An upstream's tool schemas are untrusted input: a thin session's call is validated
// against the tool's full schema (schema-on-error), and a schema that cannot be validated
// within bounds (a $ref cycle at one instance location, an exponential $ref fan) must be
// served and its calls forwarded unvalidated, never crash or stall the daemon.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// hostileSchemas are tool input schemas that cannot be validated within bounds, by tool
// name. Before the bound, the first two overflowed the stack (a fatal error: the test
// binary died) and the third ran for minutes while the heap grew past 8 GB. The fourth,
// 40 patterns of 2.7 KB in 120 KB, took 6.4 s of CPU to compile at the first call and
// kept 606 MB of compiled regular expressions on the tool (attack round, 2026-11-29).
var hostileSchemas = map[string]string{
	"selfref":  `{"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"object"}]}},"$ref":"#/$defs/a","type":"object"}`,
	"loop":     `{"type":"object","properties":{"n":{"$ref":"#/$defs/a"}},"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
	"fan":      exponentialSchema(30),
	"patterns": patternsSchema(40),
}

// patternsSchema is n string properties, each with a pattern of 300 \pL{1000}: a few
// kilobytes of pattern that compile to 300,000 instructions each.
func patternsSchema(n int) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string","pattern":"%d%s"}`, i, i, strings.Repeat(`\\pL{1000}`, 300))
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
}

// exponentialSchema is $defs L0..Ln, each L(i) two allOf branches over L(i-1): validating
// a number against Ln visits 2^n schemas.
func exponentialSchema(n int) string {
	defs := []string{`"L0":{"type":"number"}`}
	for i := 1; i <= n; i++ {
		defs = append(defs, fmt.Sprintf(`"L%d":{"anyOf":[{"allOf":[{"$ref":"#/$defs/L%d"},{"minimum":5}]},{"allOf":[{"$ref":"#/$defs/L%d"},{"maximum":1}]}]}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"type":"object","properties":{"n":{"$ref":"#/$defs/L%d"}},"$defs":{%s}}`, n, strings.Join(defs, ","))
}

// startHostileUpstream serves the hostile tools and two honest tools: "fine" (a required
// string "path") and "tree" (a recursive object, bounded by the arguments); every call
// answers "called NAME", so a test sees it was forwarded.
func startHostileUpstream(t *testing.T) string {
	t.Helper()
	return startSchemaUpstream(t, hostileSchemas)
}

// startSchemaUpstream serves a tool of each schema, by name, and "fine" and "tree"; every call
// answers "called NAME".
func startSchemaUpstream(t *testing.T, schemas map[string]string) string {
	t.Helper()
	tools := []string{`{"name":"fine","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`,
		`{"name":"tree","inputSchema":{"$defs":{"t":{"type":"object","properties":{"n":{"$ref":"#/$defs/t"}}}},"$ref":"#/$defs/t"}}`}
	for name, schema := range schemas {
		tools = append(tools, fmt.Sprintf(`{"name":%q,"description":"A hostile schema.","inputSchema":%s}`, name, schema))
	}
	list := `{"tools":[` + strings.Join(tools, ",") + `]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}`
		case "tools/list":
			result = list
		case "tools/call":
			result = fmt.Sprintf(`{"content":[{"type":"text","text":"called %s"}]}`, m.Params.Name)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL + "/mcp"
}

// TestHostileSchemaCallsForwarded: a thin session lists tools whose schemas cannot be
// validated within bounds and calls each; the gateway answers every call (forwarded as
// is), keeps validating the honest tool, and says which tools go unvalidated in the
// server's problems (/readyz, the admin API's live row).
func TestHostileSchemaCallsForwarded(t *testing.T) {
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.JSONUpstreamConfig, "URL", startHostileUpstream(t), 1)+`
agents:
  at: {servers: [j], handshake: thin}
`)
	sid, list := gatewaytest.OpenAs(t, g, "at")
	var page struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(list.Message(t).Result, &page); err != nil {
		t.Fatalf("thin list: %s", list.Body)
	}
	listed := map[string]bool{}
	for _, tool := range page.Tools {
		listed[tool.Name] = true
	}
	for name := range hostileSchemas {
		if !listed["j__"+name] {
			t.Fatalf("thin list lacks j__%s: %s", name, list.Message(t).Result)
		}
	}
	h := map[string]string{"X-Agent-ID": "at", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	call := func(id int, name, args string) (text string, isError bool) {
		t.Helper()
		r := g.Do(t, gatewaytest.Req{Body: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"j__%s","arguments":%s}}`, id, name, args), Header: h})
		m := r.Message(t)
		if r.Status != http.StatusOK || m.Error != nil {
			t.Fatalf("call %s: HTTP %d %s", name, r.Status, r.Body)
		}
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Content) == 0 {
			t.Fatalf("call %s: %s", name, m.Result)
		}
		return res.Content[0].Text, res.IsError
	}
	id := 10
	for name := range hostileSchemas {
		for _, args := range []string{`{"n":3}`, `{}`, `{"n":{"n":{"n":[1,2,3]}}}`} {
			id++
			if text, isErr := call(id, name, args); isErr || text != "called "+name {
				t.Errorf("call %s %s: %q (isError %v), want it forwarded", name, args, text, isErr)
			}
		}
	}
	// The honest tool is still validated: a call without its required argument is answered
	// with its schema, not forwarded.
	if text, isErr := call(99, "fine", `{}`); !isErr || !strings.Contains(text, "Invalid arguments") {
		t.Errorf("call fine without path: %q (isError %v), want schema-on-error", text, isErr)
	}
	if text, isErr := call(100, "fine", `{"path":"/a"}`); isErr || text != "called fine" {
		t.Errorf("call fine: %q (isError %v)", text, isErr)
	}
	// Arguments nested past the work bound are forwarded unchecked.
	deep := strings.Repeat(`{"n":`, 70) + `{}` + strings.Repeat(`}`, 70)
	if text, isErr := call(101, "tree", deep); isErr || text != "called tree" {
		t.Errorf("call tree 70 levels deep: %q (isError %v), want it forwarded", text, isErr)
	}
	// Every call forwarded unchecked is counted, by why; the validated ones are not.
	if v := g.MetricValue(t, `mcpgw_unvalidated_calls_total{reason="schema",server="j"}`); v != float64(3*len(hostileSchemas)) {
		t.Errorf("unvalidated calls for their schema: %v, want %d", v, 3*len(hostileSchemas))
	}
	if v := g.MetricValue(t, `mcpgw_unvalidated_calls_total{reason="arguments",server="j"}`); v != 1 {
		t.Errorf("unvalidated calls for their arguments: %v, want 1", v)
	}

	var ready struct {
		Upstreams []struct {
			Name     string   `json:"name"`
			Problems []string `json:"problems"`
		} `json:"upstreams"`
	}
	rr := g.Do(t, gatewaytest.Req{Method: http.MethodGet, Path: "/readyz"})
	if json.Unmarshal(rr.Body, &ready) != nil || len(ready.Upstreams) != 1 {
		t.Fatalf("/readyz: %s", rr.Body)
	}
	problems := strings.Join(ready.Upstreams[0].Problems, "\n")
	for name := range hostileSchemas {
		if !strings.Contains(problems, fmt.Sprintf("tool %q", name)) || !strings.Contains(problems, "unvalidated") {
			t.Errorf("/readyz problems of j do not name tool %q as unvalidated: %q", name, problems)
		}
	}
	if strings.Contains(problems, `"fine"`) {
		t.Errorf("/readyz problems name the honest tool: %q", problems)
	}
}

// TestLongArgumentAgainstPatternBounded: a pattern within the schema bound (an anchored
// (a|aa)* repeated 2,800 times) is matched in time proportional to the argument's length
// times the pattern's size; a thin session's call with a 64 KiB string must not be
// validated for seconds. Before, the call was validated for 13.8 s (a 1 MiB string: 3
// minutes) before it was forwarded (attack round, 2026-11-29).
func TestLongArgumentAgainstPatternBounded(t *testing.T) {
	pattern := "^" + strings.Repeat("(a|aa)*", 2800) + "$"
	schema := fmt.Sprintf(`{"type":"object","properties":{"s":{"type":"string","pattern":%q}}}`, pattern)
	g := gatewaytest.Start(t, strings.Replace(gatewaytest.JSONUpstreamConfig, "URL", startSchemaUpstream(t, map[string]string{"pat": schema}), 1)+`
agents:
  at: {servers: [j], handshake: thin}
`)
	sid, _ := gatewaytest.OpenAs(t, g, "at")
	h := map[string]string{"X-Agent-ID": "at", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	args := fmt.Sprintf(`{"s":%q}`, strings.Repeat("a", 64<<10)+"b")
	start := time.Now()
	r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"j__pat","arguments":` + args + `}}`, Header: h})
	took := time.Since(start)
	if m := r.Message(t); r.Status != http.StatusOK || m.Error != nil || !strings.Contains(string(m.Result), "called pat") {
		t.Fatalf("call: HTTP %d %q", r.Status, r.Body)
	}
	if took > 3*time.Second {
		t.Errorf("a call with a 64 KiB string against a pattern of the schema bound took %s, want it forwarded at once (validation passes its work bound)", took.Round(time.Millisecond))
	}
}
