package gatewaytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// InitializeAs opens a session as agent (X-Agent-ID) and returns its id.
func (g *GW) InitializeAs(t *testing.T, agent string) string {
	t.Helper()
	r := g.Do(t, Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		Header: map[string]string{"X-Agent-ID": agent}})
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize as %s: HTTP %d %s", agent, r.Status, r.Body)
	}
	return sid
}

// InitializeWith opens a session with the given headers and returns its id.
func (g *GW) InitializeWith(t *testing.T, hdr map[string]string) string {
	t.Helper()
	r := g.Do(t, Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		Header: hdr})
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize with %v: HTTP %d %s", hdr, r.Status, r.Body)
	}
	return sid
}

// MetricValue reads one sample of the gateway's /metrics (-1 when absent).
func (g *GW) MetricValue(t *testing.T, series string) float64 {
	t.Helper()
	r := g.Do(t, Req{Method: http.MethodGet, Path: "/metrics"})
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindSubmatch(r.Body)
	if m == nil {
		return -1
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatalf("%s: %v", series, err)
	}
	return v
}

// Req is one HTTP request to the gateway.
type Req struct {
	Method string // default POST
	Path   string // default /mcp
	Body   string
	Header map[string]string // "Host" sets the Host header
}

// Resp is the gateway's answer to a Req.
type Resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends r to the gateway (a POST gets the JSON and event-stream Accept headers; a
// header with an empty value is removed) and reads the whole answer.
func (g *GW) Do(t *testing.T, r Req) Resp {
	t.Helper()
	if r.Method == "" {
		r.Method = http.MethodPost
	}
	if r.Path == "" {
		r.Path = "/mcp"
	}
	hr, err := http.NewRequest(r.Method, g.Base+r.Path, strings.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	if r.Method == http.MethodPost {
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range r.Header {
		if k == "Host" {
			hr.Host = v
			continue
		}
		if v == "" {
			hr.Header.Del(k)
			continue
		}
		hr.Header.Set(k, v)
	}
	hresp, err := Client().Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer hresp.Body.Close()
	b, err := io.ReadAll(hresp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", r.Method, r.Path, err)
	}
	return Resp{Status: hresp.StatusCode, Header: hresp.Header, Body: b}
}

// Message returns the JSON-RPC response in a reply: the body itself, or for an event
// stream the event that carries a response.
func (r Resp) Message(t *testing.T) *wire.Msg {
	t.Helper()
	msgs := r.Messages(t)
	for _, m := range msgs {
		if m.IsResponse() {
			return m
		}
	}
	t.Fatalf("no JSON-RPC response in HTTP %d reply %q", r.Status, r.Body)
	return nil
}

// Messages are every JSON-RPC message of a reply, in order.
func (r Resp) Messages(t *testing.T) []*wire.Msg {
	t.Helper()
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		m, err := wire.Parse(r.Body)
		if err != nil {
			t.Fatalf("HTTP %d body is not a JSON-RPC message: %v\n%s", r.Status, err, r.Body)
		}
		return []*wire.Msg{m}
	}
	var out []*wire.Msg
	sr := wire.NewSSEReader(bytes.NewReader(r.Body), 1<<20)
	for {
		ev, err := sr.Next()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // priming event
		}
		m, err := wire.Parse(ev.Data)
		if err != nil {
			t.Fatalf("event data is not JSON-RPC: %v\n%s", err, ev.Data)
		}
		out = append(out, m)
	}
	return out
}

// RPCError asserts the reply is a JSON-RPC error with code and returns it.
func (r Resp) RPCError(t *testing.T, code int) wire.ErrorObject {
	t.Helper()
	m := r.Message(t)
	if m.JSONRPC != "2.0" || m.Error == nil {
		t.Fatalf("want a JSON-RPC error %d, got HTTP %d %s", code, r.Status, r.Body)
	}
	e := wire.ParseError(m.Error)
	if e.Code != code {
		t.Fatalf("JSON-RPC error code %d (%q), want %d; body %s", e.Code, e.Message, code, r.Body)
	}
	return e
}

// Initialize opens a session and returns its id.
func (g *GW) Initialize(t *testing.T, version, caps string) string {
	t.Helper()
	if caps == "" {
		caps = "{}"
	}
	r := g.Do(t, Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"errors_test","version":"1"}}}`})
	if r.Status != http.StatusOK {
		t.Fatalf("initialize: HTTP %d %s", r.Status, r.Body)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: no Mcp-Session-Id; body %s", r.Body)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if m := r.Message(t); m.Error != nil || json.Unmarshal(m.Result, &res) != nil || res.ProtocolVersion != version {
		t.Fatalf("initialize result %s, want protocolVersion %s", r.Body, version)
	}
	if n := g.Do(t, Req{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Header: SessionHeaders(sid, version)}); n.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d %s", n.Status, n.Body)
	}
	return sid
}

// SessionHeaders are the headers of a request on session sid of protocol version.
func SessionHeaders(sid, version string) map[string]string {
	return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
}

// Call sends one request on a session.
func (g *GW) Call(t *testing.T, sid string, id int, method, params string) Resp {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, id, method)
	if params != "" {
		body += `,"params":` + params
	}
	return g.Do(t, Req{Body: body + "}", Header: SessionHeaders(sid, "2025-11-25")})
}

// ToolNames lists every tool of a session, following nextCursor.
func (g *GW) ToolNames(t *testing.T, sid string) []string {
	t.Helper()
	names, err := g.TryToolNames(t, sid)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TryToolNames is toolNames that returns a JSON-RPC error (an invalid cursor, when the
// view changed between pages) instead of failing.
func (g *GW) TryToolNames(t *testing.T, sid string) ([]string, error) {
	t.Helper()
	var names []string
	cursor := ""
	for i := 0; i < 100; i++ {
		params := "{}"
		if cursor != "" {
			params = `{"cursor":` + string(wire.Quote(cursor)) + `}`
		}
		r := g.Call(t, sid, 100+i, "tools/list", params)
		m := r.Message(t)
		if r.Status != http.StatusOK {
			t.Fatalf("tools/list: HTTP %d %s", r.Status, r.Body)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("tools/list page %d: %s", i, m.Error)
		}
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			names = append(names, tl.Name)
		}
		if res.NextCursor == "" {
			return names, nil
		}
		cursor = res.NextCursor
	}
	t.Fatal("tools/list pagination does not end")
	return nil, nil
}

// WaitFor polls cond every 10 ms for at most d.
func WaitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// OpenAs opens a session as agent (X-Agent-ID) and lists its tools once; it returns the
// session id and the list's answer.
func OpenAs(t *testing.T, g *GW, agent string) (string, Resp) {
	t.Helper()
	h := map[string]string{"X-Agent-ID": agent}
	r := g.Do(t, Req{Body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, Header: h})
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		t.Fatalf("initialize as %s: HTTP %d %s", agent, r.Status, r.Body)
	}
	h["Mcp-Session-Id"], h["MCP-Protocol-Version"] = sid, "2025-11-25"
	g.Do(t, Req{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Header: h})
	l := g.Do(t, Req{Body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, Header: h})
	if l.Status != http.StatusOK || l.Message(t).Error != nil {
		t.Fatalf("tools/list as %s: HTTP %d %s", agent, l.Status, l.Body)
	}
	return sid, l
}

// GrepLines is the lines of b that contain sub.
func GrepLines(b []byte, sub string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// StatelessMeta is the _meta member of a request of the stateless revision (2026-07-28):
// its protocol version, client info and capabilities (sampling).
const StatelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`

// StatelessReq is a request of the stateless revision, with no session: method with params
// (a JSON object; StatelessMeta goes in it) and the revision's MCP-Protocol-Version and
// Mcp-Method headers, plus hdr.
func StatelessReq(method, params string, hdr map[string]string) Req {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	for k, v := range hdr {
		h[k] = v
	}
	return Req{Body: `{"jsonrpc":"2.0","id":5,"method":"` + method + `","params":` + params + `}`, Header: h}
}

// StatelessResult asserts r is a stateless revision's success answer and returns its result's
// members.
func StatelessResult(t *testing.T, r Resp) map[string]json.RawMessage {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Fatalf("HTTP %d %s", r.Status, r.Body)
	}
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		t.Errorf("a stateless answer carries Mcp-Session-Id %q", sid)
	}
	m := r.Message(t)
	if m.Error != nil {
		t.Fatalf("error %s", m.Error)
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatalf("result %s: %v", m.Result, err)
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(res["_meta"], &meta)
	if !strings.Contains(string(meta["io.modelcontextprotocol/serverInfo"]), `"mcpgw"`) {
		t.Errorf("result _meta %s lacks the gateway's serverInfo", res["_meta"])
	}
	return res
}
