package gateway

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
	"github.com/mcpgw/mcpgw/registry"
)

// OpenTelemetry tracing (docs/tracing.md). Off unless tracing.otlp_endpoint is set: then
// g.tracing is nil, the observer's hooks (observer.go) are nil, and the request path pays
// a nil check per hook (and an empty-string check for extra headers), nothing else. On, every client request gets a server span (from the client's trace
// context: the _meta traceparent of the request, else the HTTP traceparent header) and
// every upstream call a client span under it, whose context goes to the upstream in
// params._meta (every transport) and, for streamable HTTP upstreams, in the traceparent
// and tracestate headers.
//
// The gateway's own tracer provider and propagator are used, never the process-wide
// globals: an embedding host's OpenTelemetry setup is left alone.

type tracing struct {
	tp   *sdktrace.TracerProvider
	tr   trace.Tracer
	prop propagation.TraceContext
}

const tracerName = "github.com/mcpgw/mcpgw/gateway"

// newTracing starts the exporter of cfg; nil when tracing is off.
func newTracing(cfg config.TracingConfig, version string, log *slog.Logger) (*tracing, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(cfg.TracesURL())}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
	}
	exp, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, err
	}
	name := cfg.ServiceName
	if name == "" {
		name = "mcpgw"
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName(name), semconv.ServiceVersion(version))
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		// A request with a sampled parent is traced whatever the ratio: the caller decided.
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.Ratio()))),
	)
	log.Info("tracing on", "otlp", cfg.TracesURL(), "sample_ratio", cfg.Ratio(), "service", name)
	return &tracing{tp: tp, tr: tp.Tracer(tracerName, trace.WithInstrumentationVersion(version))}, nil
}

// shutdown exports the spans still buffered, for at most 5 seconds.
func (t *tracing) shutdown(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		log.Warn("tracing: spans not exported at shutdown", "err", err)
	}
}

// httpContext wraps a client endpoint: the request's traceparent and tracestate headers
// become its context's remote parent.
func (t *tracing) httpContext(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") != "" {
			r = r.WithContext(t.prop.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		h(w, r)
	}
}

// metaCarrier reads traceparent and tracestate from a request's params._meta.
type metaCarrier struct{ traceparent, tracestate string }

func (c metaCarrier) Get(k string) string {
	switch k {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	}
	return ""
}
func (c metaCarrier) Set(string, string) {}
func (c metaCarrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

// hooks are the observer hooks that trace the request path.
func (t *tracing) hooks() observer {
	return observer{request: t.request, tool: traceTool, called: traceOutcome, upstream: t.upstream}
}

// request starts a client request's server span.
func (t *tracing) request(ctx context.Context, s *Session, m *wire.Msg) (context.Context, func()) {
	var p struct {
		Meta struct {
			Traceparent string `json:"traceparent"`
			Tracestate  string `json:"tracestate"`
		} `json:"_meta"`
	}
	if bytes.Contains(m.Params, traceparentKey) && json.Unmarshal(m.Params, &p) == nil && p.Meta.Traceparent != "" {
		// The request's own context wins over its HTTP request's: a client that batches or
		// multiplexes requests on one connection can only say so per message.
		if c := t.prop.Extract(context.Background(), metaCarrier{p.Meta.Traceparent, p.Meta.Tracestate}); trace.SpanContextFromContext(c).IsValid() {
			ctx = trace.ContextWithRemoteSpanContext(ctx, trace.SpanContextFromContext(c))
		}
	}
	ctx, span := t.tr.Start(ctx, m.Method, trace.WithSpanKind(trace.SpanKindServer))
	if span.IsRecording() { // an unsampled span keeps nothing: its attributes are not built
		span.SetAttributes(
			attribute.String("mcp.method.name", m.Method),
			attribute.String("mcp.session.id", s.ID),
			attribute.String("mcpgw.agent", s.rec.Agent),
			attribute.String("mcpgw.transport", s.Transport),
			attribute.String("jsonrpc.request.id", string(m.ID)),
		)
	}
	return ctx, func() { span.End() }
}

// traceTool names the request's span after the tool and records where it goes.
func traceTool(ctx context.Context, t *registry.Tool) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetName("tools/call " + t.Exposed)
	span.SetAttributes(attribute.String("gen_ai.tool.name", t.Exposed),
		attribute.String("mcpgw.upstream.server", t.Server), attribute.String("mcpgw.upstream.tool", t.Name))
}

// traceOutcome records a call's outcome on the request's span; anything but ok and
// tool_error (the tool's own answer) is an error of the path.
func traceOutcome(ctx context.Context, outcome string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("mcpgw.outcome", outcome))
	if outcome != "ok" && outcome != "tool_error" {
		span.SetStatus(codes.Error, outcome)
	}
}

// upstream starts a client span around an upstream call, whose context the upstream
// receives in params._meta and, over streamable HTTP, in headers.
func (t *tracing) upstream(ctx context.Context, c upstreamCall) (context.Context, upstreamCall, func(string)) {
	ctx, span := t.tr.Start(ctx, c.method+" "+c.server, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("mcp.method.name", c.method),
			attribute.String("mcpgw.upstream.server", c.server),
			attribute.String("mcp.session.id", c.s.ID),
		)
	}
	if sc := span.SpanContext(); sc.IsValid() {
		// Unsampled spans are passed on too (flags 00): the upstream then knows not to
		// sample either.
		tp := traceparent(sc)
		ts := ""
		if sc.TraceState().Len() > 0 {
			ts = sc.TraceState().String()
		}
		c.header = []upstream.Header{{Name: "traceparent", Value: tp}}
		if ts != "" {
			c.header = append(c.header, upstream.Header{Name: "tracestate", Value: ts})
		}
		if p, err := withTraceMeta(c.params, tp, ts); err == nil {
			c.params = p
		}
	}
	return ctx, c, func(outcome string) {
		traceOutcome(ctx, outcome)
		span.End()
	}
}

var traceparentKey = []byte(`"traceparent"`)

// traceparent is sc as a W3C traceparent value (version 00), built in one allocation.
func traceparent(sc trace.SpanContext) string {
	var b [55]byte
	tid, sid := sc.TraceID(), sc.SpanID()
	b[0], b[1], b[2] = '0', '0', '-'
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:55], []byte{byte(sc.TraceFlags())})
	return string(b[:])
}

// withTraceMeta returns params (a JSON object) with _meta.traceparent (and tracestate when
// given) set, replacing the client's: the upstream's parent is the gateway's span.
func withTraceMeta(params []byte, traceparent, tracestate string) ([]byte, error) {
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	var out objBuf
	hadMeta := false
	setMeta := func(meta []byte) error {
		var mo objBuf
		if len(meta) > 0 && string(meta) != "null" {
			if err := wire.StrictMembers(meta, func(k, v []byte) error {
				if string(k) != "traceparent" && string(k) != "tracestate" {
					mo.raw(string(k), v)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		mo.str("traceparent", traceparent)
		if tracestate != "" {
			mo.str("tracestate", tracestate)
		}
		out.raw("_meta", mo.bytes())
		return nil
	}
	err := wire.StrictMembers(params, func(k, v []byte) error {
		if string(k) == "_meta" {
			hadMeta = true
			return setMeta(v)
		}
		out.raw(string(k), v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !hadMeta {
		if err := setMeta(nil); err != nil {
			return nil, err
		}
	}
	return out.bytes(), nil
}
