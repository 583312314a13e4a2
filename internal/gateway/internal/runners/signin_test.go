package runners

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgw/mcpgw/internal/auth"
	"github.com/mcpgw/mcpgw/internal/runnerlink"
)

// rawDial is dial for a refusal the test reads whole: its response (headers included).
func (f *hubFixture) rawDial(t *testing.T, executor, key string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+Path, nil)
	req.Header.Set("Upgrade", runnerlink.Protocol)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set(ExecutorHeader, executor)
	req.Header.Set("Authorization", "Bearer "+key)
	if err := req.Write(c); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// fakeSignins slows every source once it has had `free` wrong credentials, and records
// what the hub told it.
type fakeSignins struct {
	free int

	mu                sync.Mutex
	failed, succeeded int
	where             []string
}

func (s *fakeSignins) Slowed(*http.Request) *auth.Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed < s.free {
		return nil
	}
	return &auth.Failure{Status: http.StatusTooManyRequests, RetryAfter: "7", Message: "Too Many Requests: slowed"}
}

func (s *fakeSignins) CredentialFailed(_ *http.Request, where string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed++
	s.where = append(s.where, where)
}

func (s *fakeSignins) CredentialSucceeded(*http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed, s.succeeded = 0, s.succeeded+1
}

func (s *fakeSignins) counts() (failed, succeeded int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed, s.succeeded
}

// TestRunnerKeysSlowed: every wrong runner key (and a key for an unknown executor) counts
// against its source; once the source is slowed, no key is checked, the right one
// neither, and the answer is 429 with Retry-After; a connection without a key guesses
// nothing and counts nothing; the right key, once the source may try again, connects and
// clears the count.
func TestRunnerKeysSlowed(t *testing.T) {
	f := newHub(t)
	s := &fakeSignins{free: 3}
	f.hub.Signins = s
	for i, c := range []struct{ executor, key string }{{"box", "wrong"}, {"nosuch", "key-box"}, {"box2", "key-box"}} {
		if _, st := f.dial(t, c.executor, c.key); st != http.StatusUnauthorized {
			t.Fatalf("wrong try %d: HTTP %d, want 401", i+1, st)
		}
	}
	if failed, _ := s.counts(); failed != 3 || len(s.where) != 3 || s.where[0] != "runner" {
		t.Fatalf("after three wrong keys: %d failures counted at %q, want 3 at \"runner\"", failed, s.where)
	}
	if _, st := f.dial(t, "box", ""); st != http.StatusUnauthorized {
		t.Fatalf("no key: HTTP %d, want 401", st)
	}
	if failed, _ := s.counts(); failed != 3 {
		t.Fatalf("a connection without a key counted as a wrong one (%d failures)", failed)
	}
	// Slowed: the right key is not even checked.
	c, st := f.dial(t, "box", "key-box")
	if c != nil {
		c.Close()
	}
	if st != http.StatusTooManyRequests {
		t.Fatalf("the right key while the source is slowed: HTTP %d, want 429", st)
	}
	if st := f.state("box"); st.State == "connected" {
		t.Fatalf("a slowed source's runner connected: %+v", st)
	}
	resp := f.rawDial(t, "box", "wrong")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "7" {
		t.Fatalf("a wrong key while slowed: HTTP %d Retry-After %q, want 429 and 7", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if failed, succeeded := s.counts(); failed != 3 || succeeded != 0 {
		t.Fatalf("keys checked while slowed: %d failures, %d successes", failed, succeeded)
	}
	// The source may try again: the right key connects and clears it.
	s.mu.Lock()
	s.free = 100
	s.mu.Unlock()
	c, st = f.dial(t, "box", "key-box")
	if c == nil {
		t.Fatalf("the right key once the wait is over: HTTP %d, want 101", st)
	}
	defer c.Close()
	if failed, succeeded := s.counts(); failed != 0 || succeeded != 1 {
		t.Fatalf("after the right key: %d failures, %d successes, want 0 and 1", failed, succeeded)
	}
}
