package config

import (
	"fmt"
	"net/url"
)

// TracingConfig turns on OpenTelemetry tracing (docs/tracing.md): a span per client
// request and one per upstream call, exported over OTLP/HTTP. Without OTLPEndpoint
// tracing is off and costs the request path nothing.
type TracingConfig struct {
	// OTLPEndpoint is the collector's OTLP/HTTP base URL (http://collector:4318, to which
	// /v1/traces is added) or, with a path, the full traces URL.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// SampleRatio is the share of new traces sampled (0 to 1; nil: 1). A request that
	// carries a trace context follows its caller's sampling decision.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// ServiceName is the service.name resource attribute (default mcpgw).
	ServiceName string `yaml:"service_name"`
	// Headers are sent with every export (an API key of a hosted collector, say).
	Headers map[string]string `yaml:"headers"`
}

// Enabled reports whether traces are exported.
func (t TracingConfig) Enabled() bool { return t.OTLPEndpoint != "" }

// Ratio is the sampling ratio in force.
func (t TracingConfig) Ratio() float64 {
	if t.SampleRatio == nil {
		return 1
	}
	return *t.SampleRatio
}

// TracesURL is the URL spans are POSTed to.
func (t TracingConfig) TracesURL() string {
	u, err := url.Parse(t.OTLPEndpoint)
	if err != nil {
		return t.OTLPEndpoint
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String()
}

func (t TracingConfig) problems() Problems {
	var ps Problems
	add := func(where, format string, a ...any) {
		ps = append(ps, Problem{Where: "tracing." + where, Text: fmt.Sprintf(format, a...)})
	}
	if t.OTLPEndpoint != "" {
		u, err := url.Parse(t.OTLPEndpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("otlp_endpoint", "%q is not an http:// or https:// URL", t.OTLPEndpoint)
		}
	} else if t.SampleRatio != nil || t.ServiceName != "" || len(t.Headers) > 0 {
		ps = append(ps, Problem{Warning: true, Where: "tracing", Text: "set without otlp_endpoint: tracing stays off"})
	}
	if r := t.SampleRatio; r != nil && (*r < 0 || *r > 1) {
		add("sample_ratio", "%v is not between 0 and 1", *r)
	}
	return ps
}
