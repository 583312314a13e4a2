package telemetry

import "testing"

// TestWithTraceMeta: the trace context replaces the client's in params._meta, other _meta
// members and params stay as they were, a missing _meta is added, and params that are not
// an object are refused rather than mangled.
func TestWithTraceMeta(t *testing.T) {
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, c := range []struct{ in, state, want string }{
		{`{"name":"x","arguments":{"a":1}}`, "", `{"name":"x","arguments":{"a":1},"_meta":{"traceparent":"` + tp + `"}}`},
		{`{"name":"x","_meta":{"progressToken":"p1","traceparent":"00-old-old-01","tracestate":"old=1"},"task":{}}`, "k=v",
			`{"name":"x","_meta":{"progressToken":"p1","traceparent":"` + tp + `","tracestate":"k=v"},"task":{}}`},
		{``, "", `{"_meta":{"traceparent":"` + tp + `"}}`},
	} {
		got, err := withTraceMeta([]byte(c.in), tp, c.state)
		if err != nil || string(got) != c.want {
			t.Errorf("withTraceMeta(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`[1]`, `{"_meta":[1]}`, `{"a":1,"a":2}`} {
		if got, err := withTraceMeta([]byte(bad), tp, ""); err == nil {
			t.Errorf("withTraceMeta(%s) = %s, want an error", bad, got)
		}
	}
}
