package gateway

import "testing"

func TestWantsSSE(t *testing.T) {
	for accept, want := range map[string]bool{
		"application/json, text/event-stream": false, // every SDK
		"text/event-stream, application/json": true,  // SSE named first
		"text/event-stream":                   true,
		"application/json":                    false,
		"":                                    false,
		"text/event-stream;q=0.5, application/json":        false, // lower q loses although first
		"application/json;q=0.4, text/event-stream":        true,  // higher q wins although second
		"text/event-stream; q=0.9, application/json;q=0.9": true,
		"application/json;q=bogus, text/event-stream":      false, // unreadable q counts as 1
	} {
		if got := wantsSSE(accept); got != want {
			t.Errorf("wantsSSE(%q) = %v, want %v", accept, got, want)
		}
	}
}
