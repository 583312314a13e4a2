package backroutes

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// TestRequestIDsAreNotGuessable: the ids of server-to-client requests carry 96 random bits
// (no counter another session could count along with), and stay short.
func TestRequestIDsAreNotGuessable(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newRequestID()
		rest, ok := strings.CutPrefix(id, "mcpgw-r")
		if !ok {
			t.Fatalf("id %q lacks the mcpgw-r prefix", id)
		}
		raw, err := base64.RawURLEncoding.DecodeString(rest)
		if err != nil || len(raw) != 12 {
			t.Fatalf("id %q: want 12 random bytes in unpadded base64url after the prefix (%v)", id, err)
		}
		if seen[id] {
			t.Fatalf("id %q issued twice", id)
		}
		seen[id] = true
	}
}

// TestAnsweredOnlyByItsSession: a request waits for the session it was asked of; another
// session's answer leaves it, its own takes it.
func TestAnsweredOnlyByItsSession(t *testing.T) {
	tb := New[string]("p-")
	wait := make(chan Answer, 1)
	id := tb.Ask(Request[string]{Session: "owner", Wait: wait})
	if pr, ok := tb.Answered(id, "other"); !ok || pr.Session != "owner" || !tb.Pending(id) {
		t.Fatalf("another session's answer: ok=%v session=%q pending=%v", ok, pr.Session, tb.Pending(id))
	}
	if _, ok := tb.Answered(id, "owner"); !ok || tb.Pending(id) {
		t.Fatalf("the owner's answer did not take the request (pending %v)", tb.Pending(id))
	}
}

// TestForgetSessionAnswersWaiters: a session that ends has its waiting requests answered
// with an error, not left in the table.
func TestForgetSessionAnswersWaiters(t *testing.T) {
	tb := New[string]("p-")
	wait := make(chan Answer, 1)
	id := tb.Ask(Request[string]{Session: "gone", Wait: wait})
	tb.ForgetSession("gone")
	select {
	case a := <-wait:
		if a.Err == nil || !strings.Contains(a.Err.Message, "ended") {
			t.Fatalf("answer %+v, want an error saying the session ended", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting request got no answer")
	}
	if tb.Pending(id) {
		t.Fatal("the request is still in the table")
	}
}

// TestProgressTokens: tokens carry the prefix and are unique; a route is found until dropped.
func TestProgressTokens(t *testing.T) {
	tb := New[string]("mcpgw-p")
	a, b := tb.ProgressToken(), tb.ProgressToken()
	if a == b || !strings.HasPrefix(a, "mcpgw-p") {
		t.Fatalf("tokens %q, %q", a, b)
	}
	tb.RouteProgress(a, Progress[string]{Session: "s"})
	if r, ok := tb.ProgressRoute(a); !ok || r.Session != "s" {
		t.Fatalf("route of %q: %+v %v", a, r, ok)
	}
	tb.DropProgress(a)
	if _, ok := tb.ProgressRoute(a); ok {
		t.Fatal("a dropped route is still found")
	}
}
