package upstream

import "testing"

// TestWellFormedHeaders: only whole "Name: value\r\n" lines pass, so extra headers cannot
// end the request head early or smuggle a second request.
func TestWellFormedHeaders(t *testing.T) {
	good := []string{"traceparent: 00-a-b-01\r\n", "traceparent: x\r\ntracestate: k=v\r\n"}
	bad := []string{"traceparent: x", "traceparent: x\r\n\r\nGET / HTTP/1.1\r\n", "traceparent: x\ny: z\r\n", "novalue\r\n", "\r\n", "a: b\rc\r\n"}
	for _, h := range good {
		if !wellFormedHeaders(h) {
			t.Errorf("%q refused", h)
		}
	}
	for _, h := range bad {
		if wellFormedHeaders(h) {
			t.Errorf("%q accepted", h)
		}
	}
}
