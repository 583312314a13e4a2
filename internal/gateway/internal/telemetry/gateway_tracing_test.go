package telemetry_test

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/mcpgw/mcpgw/internal/gateway/gatewaytest"
)

// otlpReceiver is an OTLP/HTTP traces endpoint on 127.0.0.1 that decodes each export with
// the OpenTelemetry protocol's own protobuf types.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	service string
	bad     []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	o.mu.Lock()
	defer o.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
		o.bad = append(o.bad, fmt.Sprintf("%s %s %s %v", r.Method, r.URL.Path, r.Header.Get("Content-Type"), err))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		o.bad = append(o.bad, "undecodable export: "+err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, rs := range req.GetResourceSpans() {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				o.service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			o.spans = append(o.spans, ss.GetSpans()...)
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(b)
}

func (o *otlpReceiver) snapshot() ([]*tracepb.Span, string, []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*tracepb.Span(nil), o.spans...), o.service, append([]string(nil), o.bad...)
}

// traceUpstream is a streamable HTTP MCP server (JSON answers) with one tool, "work", that
// records the traceparent header and params._meta of each tools/call.
type traceUpstream struct {
	mu    sync.Mutex
	calls []tracedCall
}

type tracedCall struct {
	header, meta, metaState string
}

func (u *traceUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta struct {
				Traceparent string `json:"traceparent"`
				Tracestate  string `json:"tracestate"`
			} `json:"_meta"`
		} `json:"params"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil || len(m.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := `{}`
	switch m.Method {
	case "initialize":
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"traced","version":"1"}}`
	case "tools/list":
		result = `{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}`
	case "tools/call":
		u.mu.Lock()
		u.calls = append(u.calls, tracedCall{r.Header.Get("traceparent"), m.Params.Meta.Traceparent, m.Params.Meta.Tracestate})
		u.mu.Unlock()
		result = `{"content":[{"type":"text","text":"worked"}]}`
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.GetAttributes() {
		if a.GetKey() == key {
			return anyString(a.GetValue())
		}
	}
	return ""
}

func anyString(v *commonpb.AnyValue) string { return v.GetStringValue() }

// TestTracingSpans: with tracing on, a tools/call from a client that sends a W3C
// traceparent header gives a server span in the client's trace, under the client's span,
// carrying agent, session, tool and upstream; and a client span under it for the upstream
// call, whose context the HTTP upstream receives both as the traceparent header and as
// params._meta.traceparent. A _meta traceparent in the request wins over the header. The
// spans reach an OTLP/HTTP receiver the test runs and are decoded with the OTLP protobuf
// types.
func TestTracingSpans(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)
	up := &traceUpstream{}
	upSrv := httptest.NewServer(up)
	t.Cleanup(upSrv.Close)

	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
auth: {audit: {path: "off"}}
tracing: {otlp_endpoint: "`+collector.URL+`", service_name: mcpgw-test}
servers:
  up: {type: streamable_http, url: "`+upSrv.URL+`/mcp"}
agents:
  tracer: {servers: [up]}
`)
	sid, _ := gatewaytest.OpenAs(t, g, "tracer")
	const clientTrace, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	h := map[string]string{"X-Agent-ID": "tracer", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25",
		"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01", "tracestate": "vendor=abc"}
	if r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"up__work","arguments":{}}}`, Header: h}); r.Status != http.StatusOK || !strings.Contains(string(r.Body), "worked") {
		t.Fatalf("call with a traceparent header: HTTP %d %s", r.Status, r.Body)
	}
	// The second call names another trace in _meta (and keeps the header): _meta wins.
	const metaTrace, metaSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	if r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"up__work","arguments":{},"_meta":{"traceparent":"00-` + metaTrace + `-` + metaSpan + `-01","keep":"me"}}}`, Header: h}); r.Status != http.StatusOK {
		t.Fatalf("call with a _meta traceparent: HTTP %d %s", r.Status, r.Body)
	}
	g.Gateway.Close() // exports the buffered spans

	spans, service, bad := recv.snapshot()
	if len(bad) > 0 {
		t.Fatalf("the receiver refused exports: %v", bad)
	}
	if service != "mcpgw-test" {
		t.Errorf("service.name %q, want mcpgw-test", service)
	}
	byID := map[string]*tracepb.Span{}
	var servers []*tracepb.Span
	for _, s := range spans {
		byID[hex.EncodeToString(s.GetSpanId())] = s
		if s.GetKind() == tracepb.Span_SPAN_KIND_SERVER && attr(s, "mcp.method.name") == "tools/call" {
			servers = append(servers, s)
		}
	}
	if len(servers) != 2 {
		t.Fatalf("%d tools/call server spans, want 2; spans: %v", len(servers), spans)
	}
	up.mu.Lock()
	calls := append([]tracedCall(nil), up.calls...)
	up.mu.Unlock()
	if len(calls) != 2 {
		t.Fatalf("the upstream saw %d calls, want 2", len(calls))
	}
	for i, want := range []struct{ trace, parent string }{{clientTrace, clientSpan}, {metaTrace, metaSpan}} {
		var srv *tracepb.Span
		for _, s := range servers {
			if hex.EncodeToString(s.GetTraceId()) == want.trace {
				srv = s
			}
		}
		if srv == nil {
			t.Errorf("call %d: no server span in trace %s", i, want.trace)
			continue
		}
		if got := hex.EncodeToString(srv.GetParentSpanId()); got != want.parent {
			t.Errorf("call %d: server span's parent %s, want the client's span %s", i, got, want.parent)
		}
		for k, v := range map[string]string{"mcpgw.agent": "tracer", "mcp.session.id": sid, "gen_ai.tool.name": "up__work",
			"mcpgw.upstream.server": "up", "mcpgw.upstream.tool": "work", "mcpgw.outcome": "ok"} {
			if got := attr(srv, k); got != v {
				t.Errorf("call %d: server span %s = %q, want %q", i, k, got, v)
			}
		}
		if srv.GetName() != "tools/call up__work" {
			t.Errorf("call %d: server span named %q", i, srv.GetName())
		}
		// The child: a client span for the upstream call, parented by the server span.
		var child *tracepb.Span
		for _, s := range spans {
			if s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT && string(s.GetParentSpanId()) == string(srv.GetSpanId()) {
				child = s
			}
		}
		if child == nil {
			t.Errorf("call %d: no upstream span under the server span", i)
			continue
		}
		if string(child.GetTraceId()) != string(srv.GetTraceId()) || attr(child, "mcpgw.upstream.server") != "up" || child.GetStartTimeUnixNano() < srv.GetStartTimeUnixNano() || child.GetEndTimeUnixNano() > srv.GetEndTimeUnixNano() {
			t.Errorf("call %d: upstream span %v does not sit inside server span %v", i, child, srv)
		}
		// The upstream received the child's context: header and _meta.
		wantTP := "00-" + want.trace + "-" + hex.EncodeToString(child.GetSpanId()) + "-01"
		if calls[i].header != wantTP || calls[i].meta != wantTP {
			t.Errorf("call %d: upstream got traceparent header %q and _meta %q, want %q", i, calls[i].header, calls[i].meta, wantTP)
		}
	}
	if calls[0].metaState != "vendor=abc" {
		t.Errorf("tracestate from the client's header did not reach the upstream's _meta: %q", calls[0].metaState)
	}
}

// TestTracingOffForwardsMetaUntouched: with tracing off the gateway adds no trace context
// of its own: a client's _meta traceparent reaches the upstream as sent, and no header is
// added.
func TestTracingOffForwardsMetaUntouched(t *testing.T) {
	up := &traceUpstream{}
	upSrv := httptest.NewServer(up)
	t.Cleanup(upSrv.Close)
	g := gatewaytest.Start(t, `
listen: {{listen}}
state_dir: {{state_dir}}
store: memory
servers:
  up: {type: streamable_http, url: "`+upSrv.URL+`/mcp"}
`)
	sid := g.Initialize(t, "2025-11-25", "")
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	h := gatewaytest.SessionHeaders(sid, "2025-11-25")
	h["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if r := g.Do(t, gatewaytest.Req{Body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"up__work","_meta":{"traceparent":"` + tp + `"}}}`, Header: h}); r.Status != http.StatusOK {
		t.Fatalf("call: HTTP %d %s", r.Status, r.Body)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.calls) != 1 || up.calls[0].meta != tp || up.calls[0].header != "" {
		t.Errorf("upstream saw %+v; want the client's _meta traceparent untouched and no header", up.calls)
	}
}

// TestTracingStdioMeta: a stdio upstream, which has no headers, receives the upstream
// span's context in params._meta, next to the progress token the gateway put there; the
// request's own span is in the trace the client's _meta named.
func TestTracingStdioMeta(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close)
	yaml, dir := gatewaytest.LimitedConfig(t, "auth: {audit: {path: \"off\"}}\ntracing: {otlp_endpoint: \""+collector.URL+"\"}\n")
	g := gatewaytest.Start(t, yaml)
	sid := g.Initialize(t, "2025-11-25", "")
	const clientTrace = "0af7651916cd43dd8448eb211c80319c"
	r := g.Call(t, sid, 5, "tools/call", `{"name":"slow__test_simple_text","_meta":{"progressToken":"p5","traceparent":"00-`+clientTrace+`-b7ad6b7169203331-01"}}`)
	if r.Status != http.StatusOK || r.Message(t).Error != nil {
		t.Fatalf("call: HTTP %d %s", r.Status, r.Body)
	}
	var sent struct {
		Params struct {
			Meta map[string]string `json:"_meta"`
		} `json:"params"`
	}
	for _, l := range gatewaytest.UpstreamLinesWith(t, dir, "in", `"tools/call"`) {
		if strings.Contains(l, `"tools/call"`) {
			if err := json.Unmarshal([]byte(l), &sent); err != nil {
				t.Fatalf("upstream line %s: %v", l, err)
			}
		}
	}
	tp := sent.Params.Meta["traceparent"]
	if !strings.HasPrefix(tp, "00-"+clientTrace+"-") || strings.HasSuffix(tp, "-b7ad6b7169203331-01") || !strings.HasPrefix(sent.Params.Meta["progressToken"], "mcpgw-p") {
		t.Fatalf("the stdio upstream got _meta %v; want the client's trace with the gateway's span, and the gateway's progress token", sent.Params.Meta)
	}
	g.Gateway.Close()
	spans, _, _ := recv.snapshot()
	for _, s := range spans {
		if s.GetKind() == tracepb.Span_SPAN_KIND_CLIENT && "00-"+hex.EncodeToString(s.GetTraceId())+"-"+hex.EncodeToString(s.GetSpanId())+"-01" == tp {
			return
		}
	}
	t.Errorf("no exported upstream span matches the traceparent %s the upstream got (%d spans)", tp, len(spans))
}
