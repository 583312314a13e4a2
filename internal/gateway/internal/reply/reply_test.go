package reply

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/gateway/internal/resume"
)

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
		if got := WantsSSE(accept); got != want {
			t.Errorf("WantsSSE(%q) = %v, want %v", accept, got, want)
		}
	}
}

// TestCloseEarlyKeepsAnswerForResume: a primed answer closed early (the upstream ended the
// call's stream) has written its priming event alone; the answer written after it goes
// only to the replay buffer, and a resume from the priming event's id gets it. An answer
// the client cannot resume (no event stream accepted) is not closed early.
func TestCloseEarlyKeepsAnswerForResume(t *testing.T) {
	store := resume.NewStore(resume.Limits{BufferBytes: 4096, MaxBytes: 1 << 20, For: time.Minute}, nil)
	var set resume.Set
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Accept", "application/json, text/event-stream")
	p := NewPost(w, r)
	p.Prime(7, &set, store)
	if !p.CloseEarly() {
		t.Fatal("a primed answer was not closed early")
	}
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"lost"}]}}`)
	if err := p.Reply(answer); err != nil {
		t.Fatal(err)
	}
	p.Finish()
	if body := w.Body.String(); !strings.Contains(body, "id: s7-0") || strings.Contains(body, `"lost"`) {
		t.Fatalf("the closed stream carries %q, want the priming event alone", body)
	}
	rd, err := set.Resume("s7-0")
	if err != nil {
		t.Fatal(err)
	}
	res := httptest.NewRecorder()
	rd.Serve(res, httptest.NewRequest(http.MethodGet, "/mcp", nil), time.Second, nil)
	if !strings.Contains(res.Body.String(), `"lost"`) || !strings.Contains(res.Body.String(), "id: s7-1") {
		t.Fatalf("resume: %s, want the answer as event s7-1", res.Body)
	}

	w2 := httptest.NewRecorder()
	r2 := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r2.Header.Set("Accept", "application/json")
	p2 := NewPost(w2, r2)
	p2.Prime(8, &set, store)
	if p2.CloseEarly() {
		t.Fatal("an answer the client cannot resume was closed early")
	}
	_ = p2.Reply(answer)
	if !strings.Contains(w2.Body.String(), `"lost"`) {
		t.Fatalf("the answer %q lacks the failure", w2.Body)
	}
}
