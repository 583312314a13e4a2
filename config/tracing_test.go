package config

import (
	"fmt"
	"strings"
	"testing"
)

// TestTracingConfig: tracing is off without an endpoint; a base URL gets /v1/traces, a
// full one is kept; a bad URL or ratio is refused naming the field, and settings without
// an endpoint warn that tracing stays off.
func TestTracingConfig(t *testing.T) {
	parse := func(y string) (*Config, Problems) {
		t.Helper()
		c, ps, err := Parse([]byte(y))
		if err != nil && c == nil {
			return nil, ps
		}
		return c, ps
	}
	c, _ := parse("listen: 127.0.0.1:1\n")
	if c == nil || c.Tracing.Enabled() {
		t.Fatal("tracing on without configuration")
	}
	c, ps := parse("listen: 127.0.0.1:1\ntracing: {otlp_endpoint: http://127.0.0.1:4318}\n")
	if c == nil || !c.Tracing.Enabled() || c.Tracing.TracesURL() != "http://127.0.0.1:4318/v1/traces" || c.Tracing.Ratio() != 1 {
		t.Fatalf("base endpoint: %+v %v", c, ps)
	}
	c, _ = parse("listen: 127.0.0.1:1\ntracing: {otlp_endpoint: 'https://otel.example/custom/traces', sample_ratio: 0.25}\n")
	if c == nil || c.Tracing.TracesURL() != "https://otel.example/custom/traces" || c.Tracing.Ratio() != 0.25 {
		t.Fatalf("full endpoint: %+v", c)
	}
	for y, want := range map[string]string{
		"tracing: {otlp_endpoint: 'collector:4318'}":                    "tracing.otlp_endpoint",
		"tracing: {otlp_endpoint: 'http://c:4318', sample_ratio: 1.5}":  "tracing.sample_ratio",
		"tracing: {otlp_endpoint: 'http://c:4318', sample_ratio: -0.1}": "tracing.sample_ratio",
	} {
		_, ps, err := Parse([]byte("listen: 127.0.0.1:1\n" + y + "\n"))
		msg := fmt.Sprint(ps)
		if err != nil {
			msg += err.Error()
		}
		if !strings.Contains(msg, want) {
			t.Errorf("%s: problems %q, want one naming %s", y, msg, want)
		}
	}
	_, ps = parse("listen: 127.0.0.1:1\ntracing: {sample_ratio: 0.5}\n")
	if !strings.Contains(fmt.Sprint(ps), "tracing stays off") {
		t.Errorf("settings without an endpoint: %q, want a warning", fmt.Sprint(ps))
	}
}
