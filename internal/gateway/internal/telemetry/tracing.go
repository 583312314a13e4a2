package telemetry

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
	"github.com/mcpgw/mcpgw/internal/wire"
)

// OpenTelemetry tracing (docs/tracing.md). Off unless tracing.otlp_endpoint is set: then
// NewTracer returns nil, the gateway's observer hooks are nil, and the request path pays
// a nil check per hook (and an empty-string check for extra headers), nothing else. On,
// every client request gets a server span (from the client's trace context: the _meta
// traceparent of the request, else the HTTP traceparent header) and
// every upstream call a client span under it, whose context goes to the upstream in
// params._meta (every transport) and, for streamable HTTP upstreams, in the traceparent
// and tracestate headers.
//
// The gateway's own tracer provider and propagator are used, never the process-wide
// globals: an embedding host's OpenTelemetry setup is left alone.

// Tracer exports a gateway's spans. What a span records comes in as plain values.
type Tracer struct {
	tp   *sdktrace.TracerProvider
	tr   trace.Tracer
	prop propagation.TraceContext
}

// tracerName is the instrumentation scope of the spans: the gateway's, as before the
// tracer had a package of its own (trace backends group spans by it).
const tracerName = "github.com/mcpgw/mcpgw/internal/gateway"

// NewTracer starts the exporter of cfg; nil when tracing is off.
func NewTracer(cfg config.TracingConfig, version string, log *slog.Logger) (*Tracer, error) {
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
	return &Tracer{tp: tp, tr: tp.Tracer(tracerName, trace.WithInstrumentationVersion(version))}, nil
}

// Shutdown exports the spans still buffered, for at most 5 seconds.
func (t *Tracer) Shutdown(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		log.Warn("tracing: spans not exported at shutdown", "err", err)
	}
}

// HTTPContext wraps a client endpoint: the request's traceparent and tracestate headers
// become its context's remote parent.
func (t *Tracer) HTTPContext(h http.HandlerFunc) http.HandlerFunc {
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

// Request is a client request as its span records it. ID stays the request's raw bytes:
// it becomes a string only for a span that records.
type Request struct {
	Method                    string
	ID                        []byte
	Params                    []byte // the request's params, for a _meta trace context
	Session, Agent, Transport string
}

// StartRequest starts a client request's server span. It returns the context the request
// runs in and what to call when it has been answered.
func (t *Tracer) StartRequest(ctx context.Context, m Request) (context.Context, func()) {
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
			attribute.String("mcp.session.id", m.Session),
			attribute.String("mcpgw.agent", m.Agent),
			attribute.String("mcpgw.transport", m.Transport),
			attribute.String("jsonrpc.request.id", string(m.ID)),
		)
	}
	return ctx, func() { span.End() }
}

// Tool names the request's span after the tool the client called (exposed) and records
// where it goes: the upstream server and the tool's name there.
func Tool(ctx context.Context, exposed, server, name string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetName("tools/call " + exposed)
	span.SetAttributes(attribute.String("gen_ai.tool.name", exposed),
		attribute.String("mcpgw.upstream.server", server), attribute.String("mcpgw.upstream.tool", name))
}

// Outcome records a call's outcome on the request's span; anything but ok and
// tool_error (the tool's own answer) is an error of the path.
func Outcome(ctx context.Context, outcome string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("mcpgw.outcome", outcome))
	if outcome != "ok" && outcome != "tool_error" {
		span.SetStatus(codes.Error, outcome)
	}
}

// Upstream is a request the gateway sends to an upstream, as its span records it, and
// what the upstream receives of the span's context: Params (a JSON object) with
// _meta.traceparent and _meta.tracestate set and, over streamable HTTP, the Traceparent
// and Tracestate header values ("" for none).
type Upstream struct {
	Method, Server, Session string
	Params                  []byte
	Traceparent, Tracestate string
}

// StartUpstream starts a client span around an upstream call and returns the context the
// call runs in, the call with the span's context to send, and what to call with the
// call's outcome.
func (t *Tracer) StartUpstream(ctx context.Context, c Upstream) (context.Context, Upstream, func(string)) {
	ctx, span := t.tr.Start(ctx, c.Method+" "+c.Server, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("mcp.method.name", c.Method),
			attribute.String("mcpgw.upstream.server", c.Server),
			attribute.String("mcp.session.id", c.Session),
		)
	}
	if sc := span.SpanContext(); sc.IsValid() {
		// Unsampled spans are passed on too (flags 00): the upstream then knows not to
		// sample either.
		c.Traceparent = traceparent(sc)
		if sc.TraceState().Len() > 0 {
			c.Tracestate = sc.TraceState().String()
		}
		if p, err := withTraceMeta(c.Params, c.Traceparent, c.Tracestate); err == nil {
			c.Params = p
		}
	}
	return ctx, c, func(outcome string) {
		Outcome(ctx, outcome)
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
	var out wire.Object
	hadMeta := false
	setMeta := func(meta []byte) error {
		var mo wire.Object
		if len(meta) > 0 && string(meta) != "null" {
			if err := wire.StrictMembers(meta, func(k, v []byte) error {
				if string(k) != "traceparent" && string(k) != "tracestate" {
					mo.Raw(string(k), v)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		mo.Str("traceparent", traceparent)
		if tracestate != "" {
			mo.Str("tracestate", tracestate)
		}
		out.Raw("_meta", mo.Bytes())
		return nil
	}
	err := wire.StrictMembers(params, func(k, v []byte) error {
		if string(k) == "_meta" {
			hadMeta = true
			return setMeta(v)
		}
		out.Raw(string(k), v)
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
	return out.Bytes(), nil
}
