package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// Stateless (2026-07-28) requests: discovery, lists with caching hints, calls without a
// session, the header and _meta checks with their error codes, and input requests of an
// upstream delivered as a multi round-trip result.

func TestStatelessDiscoverListCall(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)

	res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("server/discover", "{"+gatewaytest.StatelessMeta+"}", nil)))
	var versions []string
	_ = json.Unmarshal(res["supportedVersions"], &versions)
	if len(versions) == 0 || versions[0] != "2026-07-28" || !slices.Contains(versions, "2025-11-25") {
		t.Errorf("supportedVersions %v", versions)
	}
	if !strings.Contains(string(res["capabilities"]), `"tools":{"listChanged":true}`) || string(res["resultType"]) != `"complete"` {
		t.Errorf("discover result %v", res)
	}

	res = gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/list", "{"+gatewaytest.StatelessMeta+"}", nil)))
	if string(res["ttlMs"]) != "60000" || string(res["cacheScope"]) != `"public"` {
		t.Errorf("caching hints ttlMs=%s cacheScope=%s", res["ttlMs"], res["cacheScope"])
	}
	var tools []struct{ Name string }
	_ = json.Unmarshal(res["tools"], &tools)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if len(names) == 0 || !slices.IsSorted(names) {
		t.Errorf("tools not in a deterministic (sorted) order: %v", names)
	}

	res = gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"everything__test_simple_text","arguments":{},`+gatewaytest.StatelessMeta+"}",
		map[string]string{"Mcp-Name": "everything__test_simple_text"})))
	if !strings.Contains(string(res["content"]), "text") || string(res["resultType"]) != `"complete"` {
		t.Errorf("call result %v", res)
	}
}

func TestStatelessRefusals(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	call := `{"name":"everything__test_simple_text","arguments":{},` + gatewaytest.StatelessMeta + `}`
	for _, tc := range []struct {
		name       string
		r          gatewaytest.Req
		wantStatus int
		wantCode   int
	}{
		{"Mcp-Method differs from the body", gatewaytest.StatelessReq("tools/list", "{"+gatewaytest.StatelessMeta+"}", map[string]string{"Mcp-Method": "prompts/list"}), 400, -32020},
		{"Mcp-Method value is case-sensitive", gatewaytest.StatelessReq("tools/list", "{"+gatewaytest.StatelessMeta+"}", map[string]string{"Mcp-Method": "TOOLS/LIST"}), 400, -32020},
		{"Mcp-Name missing", gatewaytest.StatelessReq("tools/call", call, nil), 400, -32020},
		{"Mcp-Name differs", gatewaytest.StatelessReq("tools/call", call, map[string]string{"Mcp-Name": "other"}), 400, -32020},
		{"_meta missing", gatewaytest.StatelessReq("tools/list", `{}`, nil), 400, wire.CodeInvalidParams},
		{"_meta without protocolVersion", gatewaytest.StatelessReq("tools/list", `{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}`, nil), 400, wire.CodeInvalidParams},
		{"_meta without clientCapabilities", gatewaytest.StatelessReq("tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, nil), 400, wire.CodeInvalidParams},
		{"_meta version differs from the header", gatewaytest.StatelessReq("tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}`, nil), 400, -32020},
		{"initialize was removed", gatewaytest.StatelessReq("initialize", "{"+gatewaytest.StatelessMeta+"}", nil), 404, wire.CodeMethodNotFound},
		{"ping was removed", gatewaytest.StatelessReq("ping", "{"+gatewaytest.StatelessMeta+"}", nil), 404, wire.CodeMethodNotFound},
		{"logging/setLevel was removed", gatewaytest.StatelessReq("logging/setLevel", `{"level":"info",`+gatewaytest.StatelessMeta+"}", nil), 404, wire.CodeMethodNotFound},
		{"resources/subscribe was removed", gatewaytest.StatelessReq("resources/subscribe", `{"uri":"x:y",`+gatewaytest.StatelessMeta+"}", nil), 404, wire.CodeMethodNotFound},
		{"tasks/result is removed", gatewaytest.StatelessReq("tasks/result", `{"taskId":"1",`+gatewaytest.StatelessMeta+"}", nil), 404, wire.CodeMethodNotFound},
		{"tasks/list is removed", gatewaytest.StatelessReq("tasks/list", `{`+gatewaytest.StatelessMeta+"}", nil), 404, wire.CodeMethodNotFound},
		{"tasks/get without the Tasks extension", gatewaytest.StatelessReq("tasks/get", `{"taskId":"1",`+gatewaytest.StatelessMeta+"}", map[string]string{"Mcp-Name": "1"}), 400, -32021},
		{"tasks/get with another Mcp-Name", gatewaytest.StatelessReq("tasks/get", `{"taskId":"1",`+gatewaytest.StatelessMeta+"}", map[string]string{"Mcp-Name": "2"}), 400, -32020},
		{"unknown method", gatewaytest.StatelessReq("made/up", "{"+gatewaytest.StatelessMeta+"}", nil), 404, wire.CodeMethodNotFound},
		{"unknown resource is -32602", gatewaytest.StatelessReq("resources/read", `{"uri":"nope://x",`+gatewaytest.StatelessMeta+"}", map[string]string{"Mcp-Name": "nope://x"}), 200, wire.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := g.Do(t, tc.r)
			if r.Status != tc.wantStatus {
				t.Errorf("HTTP %d, want %d: %s", r.Status, tc.wantStatus, r.Body)
			}
			e := r.RPCError(t, tc.wantCode)
			_ = e
			if m := r.Message(t); string(m.ID) != "5" {
				t.Errorf("error id %s, want the request's 5", m.ID)
			}
		})
	}
}

// TestStatelessSamplingAsInputRequest: an upstream on a session revision asks for sampling
// during a call; the stateless client gets it as inputRequests, answers on a retry, and
// the upstream's call completes with the answer.
func TestStatelessSamplingAsInputRequest(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	params := `{"name":"everything__test_sampling","arguments":{"prompt":"capital of France?"},` + gatewaytest.StatelessMeta + `}`
	name := map[string]string{"Mcp-Name": "everything__test_sampling"}
	res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", params, name)))
	if string(res["resultType"]) != `"input_required"` {
		t.Fatalf("want an input_required result, got %v", res)
	}
	var reqs map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(res["inputRequests"], &reqs)
	var state string
	_ = json.Unmarshal(res["requestState"], &state)
	if len(reqs) != 1 || state == "" {
		t.Fatalf("inputRequests %s requestState %q", res["inputRequests"], state)
	}
	var key string
	for k, ir := range reqs {
		key = k
		if ir.Method != "sampling/createMessage" || !strings.Contains(string(ir.Params), "capital of France?") {
			t.Errorf("input request %s %s", ir.Method, ir.Params)
		}
	}
	// A state that is not the gateway's is refused, and leaves the call parked.
	r := g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"everything__test_sampling","arguments":{},"requestState":"mcpgw-sforged","inputResponses":{},`+gatewaytest.StatelessMeta+`}`, name))
	r.RPCError(t, wire.CodeInvalidParams)
	answer := `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"test-model"}`
	retry := `{"name":"everything__test_sampling","arguments":{"prompt":"capital of France?"},"requestState":"` + state + `","inputResponses":{"` + key + `":` + answer + `},` + gatewaytest.StatelessMeta + `}`
	res = gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", retry, name)))
	if string(res["resultType"]) != `"complete"` || !strings.Contains(string(res["content"]), "Paris") {
		t.Errorf("final result %v, want the upstream's result built from the answer (Paris)", res)
	}
	// The same state cannot be used twice.
	r = g.Do(t, gatewaytest.StatelessReq("tools/call", retry, name))
	r.RPCError(t, wire.CodeInvalidParams)
}

// extUpstream is a session-era upstream that declares a server extension.
type extUpstream struct{}

func (extUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := `{}`
	switch m.Method {
	case "initialize":
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},"extensions":{"com.example/notes":{"v":1}}},"serverInfo":{"name":"ext-up","version":"1"}}`
	case "tools/list":
		result = `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`
	case "resources/list":
		result = `{"resources":[{"uri":"skill://demo/SKILL.md","name":"demo"}]}`
	case "resources/templates/list", "prompts/list":
		result = `{"resourceTemplates":[],"prompts":[]}`
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
}

// TestExtensionsPassThrough: an upstream's server extension is listed in server/discover
// and in the initialize result of a client that declared it; a client that did not sees
// the capabilities it always saw.
func TestExtensionsPassThrough(t *testing.T) {
	up := httptest.NewServer(extUpstream{})
	t.Cleanup(up.Close)
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
servers:
  ext:
    type: streamable_http
    url: `+up.URL+`
`)
	init := func(caps string) string {
		r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"c","version":"1"}}}`})
		m := r.Message(t)
		var res struct {
			Capabilities json.RawMessage `json:"capabilities"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatalf("initialize: %s", r.Body)
		}
		return string(res.Capabilities)
	}
	if c := init(`{}`); strings.Contains(c, "extensions") {
		t.Errorf("a client that declared no extension sees %s", c)
	}
	// (The skills extension is not passed through: the gateway serves it itself, skills_test.go.)
	if c := init(`{"extensions":{"com.example/notes":{}}}`); !strings.Contains(c, `"extensions":{"com.example/notes":{"v":1}}`) {
		t.Errorf("a client that declared the extension sees %s", c)
	}
	res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("server/discover", "{"+gatewaytest.StatelessMeta+"}", nil)))
	if !strings.Contains(string(res["capabilities"]), `"com.example/notes":{"v":1}`) {
		t.Errorf("discover capabilities %s lack the upstream's extension", res["capabilities"])
	}
	// What the extension serves passes through: the skill resource is listed.
	res = gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("resources/list", "{"+gatewaytest.StatelessMeta+"}", nil)))
	if !strings.Contains(string(res["resources"]), "skill://demo/SKILL.md") {
		t.Errorf("resources %s", res["resources"])
	}
}

// TestStatelessIdentity: a stateless request is resolved from its own headers like an
// initialize: each agent lists and calls its own view, lists say cacheScope private, and
// a tool the agent may not use is refused as unknown.
func TestStatelessIdentity(t *testing.T) {
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
servers:
  everything:
    type: streamable_http
    url: {{everything}}
agents:
  narrow: {servers: [everything], tools: {deny: ["everything__test_simple_text"]}}
  wide: {servers: [everything]}
`)
	list := func(agent string) (names string, scope string) {
		res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/list", "{"+gatewaytest.StatelessMeta+"}", map[string]string{"X-Agent-ID": agent})))
		return string(res["tools"]), string(res["cacheScope"])
	}
	narrow, scope := list("narrow")
	if strings.Contains(narrow, `"everything__test_simple_text"`) || scope != `"private"` {
		t.Errorf("agent narrow: test_simple_text listed %v, cacheScope %s (want hidden, private)", strings.Contains(narrow, "test_simple_text"), scope)
	}
	wide, _ := list("wide")
	if !strings.Contains(wide, `"everything__test_simple_text"`) {
		t.Errorf("agent wide does not list everything__test_simple_text")
	}
	call := `{"name":"everything__test_simple_text","arguments":{},` + gatewaytest.StatelessMeta + `}`
	r := g.Do(t, gatewaytest.StatelessReq("tools/call", call, map[string]string{"X-Agent-ID": "narrow", "Mcp-Name": "everything__test_simple_text"}))
	r.RPCError(t, wire.CodeInvalidParams)
	res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", call, map[string]string{"X-Agent-ID": "wide", "Mcp-Name": "everything__test_simple_text"})))
	if string(res["resultType"]) != `"complete"` {
		t.Errorf("agent wide's call: %v", res)
	}
}

// A stateless caller that changes its declared capabilities on every request would open a
// gateway-side session per request (they are keyed by capabilities) and keep each for the
// idle timeout: one identity holds at most stateless.Variants of them, the least recently
// opened ending first.
func TestStatelessCapabilityVariantsBounded(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	for i := range 20 {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"experimental":{"v` + strconv.Itoa(i) + `":{}}}}`
		gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/list", "{"+meta+"}", nil)))
	}
	if n := g.MetricValue(t, `mcpgw_sessions_active{agent="default",transport="stateless"}`); n < 1 || n > 8 {
		t.Errorf("one caller with 20 capability variants holds %v gateway-side sessions, want 1 to 8", n)
	}
	// The caller's latest variant still works (its session was kept).
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"experimental":{"v19":{}}}}`
	gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/list", "{"+meta+"}", nil)))
}

// TestStatelessCallerOwnUpstreamSession: in front of a shared HTTP upstream on the session
// revision (mode auto), a stateless caller's requests go to an upstream session of its
// own, initialized with its capabilities: the upstream refuses a tool that needs sampling
// from a caller that declared none (-32021, its own decision), and still runs it for a
// caller that declared sampling.
func TestStatelessCallerOwnUpstreamSession(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.BaseConfig)
	name := map[string]string{"Mcp-Name": "everything__test_missing_capability"}
	noCaps := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	r := g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"everything__test_missing_capability",`+noCaps+`}`, name))
	if m := r.Message(t); m.Error == nil || !strings.Contains(string(m.Error), "-32021") {
		t.Errorf("a caller without sampling: HTTP %d %s, want the upstream's -32021", r.Status, r.Body)
	}
	res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"everything__test_missing_capability",`+gatewaytest.StatelessMeta+`}`, name)))
	if !strings.Contains(string(res["content"]), "tool executed") {
		t.Errorf("a caller with sampling: %s", res["content"])
	}
}
