package dispatch_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// statelessUpstream speaks only the stateless revision: initialize is an unknown method, and
// every request must carry the revision's headers and _meta. Tool "ask" needs a
// confirmation, asked as an input_required result.
type statelessUpstream struct {
	mu       sync.Mutex
	problems []string
	retries  int
	// callCaps are the clientCapabilities of each tools/call, in order.
	callCaps []string
}

func (u *statelessUpstream) problem(s string) {
	u.mu.Lock()
	u.problems = append(u.problems, s)
	u.mu.Unlock()
}

func (u *statelessUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name           string                     `json:"name"`
			Meta           map[string]json.RawMessage `json:"_meta"`
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			RequestState   string                     `json:"requestState"`
		} `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	reply := func(status int, body string) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + body + `}`))
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if m.Method == "initialize" {
		reply(http.StatusNotFound, `"error":{"code":-32601,"message":"Method not found: initialize"}`)
		return
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "2026-07-28" || r.Header.Get("Mcp-Method") != m.Method ||
		string(m.Params.Meta["io.modelcontextprotocol/protocolVersion"]) != `"2026-07-28"` || m.Params.Meta["io.modelcontextprotocol/clientCapabilities"] == nil {
		u.problem(m.Method + ": headers or _meta missing")
		reply(http.StatusBadRequest, `"error":{"code":-32020,"message":"Header mismatch"}`)
		return
	}
	if r.Header.Get("Mcp-Session-Id") != "" {
		u.problem("a session id was sent")
	}
	switch m.Method {
	case "server/discover":
		reply(200, `"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":"stateless upstream"}`)
	case "tools/list":
		reply(200, `"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[{"name":"ask","inputSchema":{"type":"object"}},{"name":"where","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]}`)
	case "prompts/list", "resources/list", "resources/templates/list":
		reply(200, `"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","prompts":[],"resources":[],"resourceTemplates":[]}`)
	case "tools/call":
		u.mu.Lock()
		u.callCaps = append(u.callCaps, string(m.Params.Meta["io.modelcontextprotocol/clientCapabilities"]))
		u.mu.Unlock()
		if r.Header.Get("Mcp-Name") != m.Params.Name {
			u.problem("Mcp-Name missing")
		}
		if m.Params.Name == "where" {
			// SEP-2243: the argument the schema mirrors comes as Mcp-Param-Region too.
			reply(200, `"result":{"resultType":"complete","content":[{"type":"text","text":"region header `+r.Header.Get("Mcp-Param-Region")+`"}]}`)
			return
		}
		if resp, ok := m.Params.InputResponses["q"]; ok {
			u.mu.Lock()
			u.retries++
			u.mu.Unlock()
			if m.Params.RequestState != "st-1" {
				u.problem("requestState " + m.Params.RequestState + " came back instead of st-1")
			}
			text, _ := json.Marshal("answer: " + string(resp))
			reply(200, `"result":{"resultType":"complete","content":[{"type":"text","text":`+string(text)+`}]}`)
			return
		}
		reply(200, `"result":{"resultType":"input_required","requestState":"st-1","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"Proceed?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}}`)
	default:
		reply(http.StatusNotFound, `"error":{"code":-32601,"message":"Method not found"}`)
	}
}

func statelessUpConfig(url string) string {
	return `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
naming: {prefix: always}
servers:
  statelessup:
    type: streamable_http
    url: ` + url + `
`
}

// TestSessionClientStatelessUpstream: a 2025-11-25 session client in front of an upstream of
// the stateless revision: the gateway discovers it, sends the revision's headers and
// _meta, and turns its input_required result into an elicitation request to the client,
// whose answer goes back with the upstream's requestState.
func TestSessionClientStatelessUpstream(t *testing.T) {
	u := &statelessUpstream{}
	up := httptest.NewServer(u)
	t.Cleanup(up.Close)
	g := gatewaytest.Start(t, statelessUpConfig(up.URL))
	sid := g.Initialize(t, "2025-11-25", `{"elicitation":{}}`)
	r := g.Call(t, sid, 2, "tools/list", "{}")
	if !strings.Contains(string(r.Body), `"statelessup__ask"`) {
		t.Fatalf("tools/list: %s", r.Body)
	}
	next := streamCall(g, t, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"statelessup__ask","arguments":{}}}`)
	el := elicitationOf(t, next)
	if !strings.Contains(string(el.Params), "Proceed?") {
		t.Errorf("elicitation params %s", el.Params)
	}
	a := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":` + string(el.ID) + `,"result":{"action":"accept","content":{"ok":true}}}`, Header: gatewaytest.SessionHeaders(sid, "2025-11-25")})
	if a.Status != http.StatusAccepted {
		t.Fatalf("answering: HTTP %d %s", a.Status, a.Body)
	}
	m := responseOf(t, next)
	if !strings.Contains(string(m.Result), `answer: {\"action\":\"accept\",\"content\":{\"ok\":true}}`) {
		t.Errorf("result %s, want the upstream's answer built from the client's", m.Result)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.retries != 1 || len(u.problems) > 0 {
		t.Errorf("upstream saw %d retries, problems %v", u.retries, u.problems)
	}
}

// TestStatelessClientStatelessUpstream: a stateless client in front of the same upstream gets
// the upstream's input request under its own key, and its retry reaches the upstream with
// the upstream's own requestState (sealed on the way through the client).
func TestStatelessClientStatelessUpstream(t *testing.T) {
	u := &statelessUpstream{}
	up := httptest.NewServer(u)
	t.Cleanup(up.Close)
	g := gatewaytest.Start(t, statelessUpConfig(up.URL))
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	name := map[string]string{"Mcp-Name": "statelessup__ask"}
	res := gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"statelessup__ask","arguments":{},`+meta+`}`, name)))
	var state string
	_ = json.Unmarshal(res["requestState"], &state)
	if string(res["resultType"]) != `"input_required"` || !strings.Contains(string(res["inputRequests"]), `"q":`) || state == "" || state == "st-1" {
		t.Fatalf("want the upstream's input request (key q) with a sealed state, got %v", res)
	}
	tampered := strings.Replace(state, "mcpgw-u.", "mcpgw-u.x", 1)
	r := g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"statelessup__ask","arguments":{},"requestState":"`+tampered+`","inputResponses":{"q":{"action":"accept"}},`+meta+`}`, name))
	if m := r.Message(t); m.Error == nil {
		t.Errorf("an altered requestState was accepted: %s", r.Body)
	}
	res = gatewaytest.StatelessResult(t, g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"statelessup__ask","arguments":{},"requestState":"`+state+`","inputResponses":{"q":{"action":"accept","content":{"ok":true}}},`+meta+`}`, name)))
	if string(res["resultType"]) != `"complete"` || !strings.Contains(string(res["content"]), "answer:") {
		t.Errorf("retry result %v", res)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.retries != 1 || len(u.problems) > 0 {
		t.Errorf("upstream saw %d retries, problems %v", u.retries, u.problems)
	}
}

// TestStatelessUpstreamGetsCallersCapabilities: a shared connection to an upstream of the
// stateless revision offers the gateway's capabilities (everything it relays), but each
// request carries its caller's own, so the upstream asks no caller for what it did not
// declare, and refuses what needs it (-32021) itself: a stateless caller's of this
// request, a session client's of its initialize.
func TestStatelessUpstreamGetsCallersCapabilities(t *testing.T) {
	u := &statelessUpstream{}
	up := httptest.NewServer(u)
	t.Cleanup(up.Close)
	g := gatewaytest.Start(t, statelessUpConfig(up.URL))
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}`
	g.Do(t, gatewaytest.StatelessReq("tools/call", `{"name":"statelessup__ask","arguments":{},`+meta+`}`, map[string]string{"Mcp-Name": "statelessup__ask"}))
	sid := g.Initialize(t, "2025-11-25", `{"sampling":{}}`)
	g.Call(t, sid, 3, "tools/call", `{"name":"statelessup__ask","arguments":{}}`)
	u.mu.Lock()
	defer u.mu.Unlock()
	if want := []string{`{"roots":{}}`, `{"sampling":{}}`}; !slices.Equal(u.callCaps, want) {
		t.Errorf("the upstream saw clientCapabilities %q, want the callers' own %q", u.callCaps, want)
	}
}

// TestStatelessUpstreamGetsParamHeaders: a tools/call to an HTTP upstream of the stateless
// revision carries Mcp-Param-{Name} for each argument the tool's schema marks with
// x-mcp-header (SEP-2243; the upstream refuses the call without it), a value that is no
// plain ASCII in the Base64 sentinel, also for a session client, which sends no headers.
func TestStatelessUpstreamGetsParamHeaders(t *testing.T) {
	u := &statelessUpstream{}
	up := httptest.NewServer(u)
	t.Cleanup(up.Close)
	g := gatewaytest.Start(t, statelessUpConfig(up.URL))
	sid := g.Initialize(t, "2025-11-25", `{}`)
	for _, tc := range []struct{ arg, want string }{
		{"us-west", "us-west"},
		{"Zürich", "=?base64?WsO8cmljaA==?="},
	} {
		r := g.Call(t, sid, 3, "tools/call", `{"name":"statelessup__where","arguments":{"region":"`+tc.arg+`"}}`)
		if !strings.Contains(string(r.Body), "region header "+tc.want) {
			t.Errorf("region %q: %s, want the upstream to see Mcp-Param-Region: %s", tc.arg, r.Body, tc.want)
		}
	}
}
