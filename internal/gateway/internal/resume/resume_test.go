package resume

// The replay buffers' limits, driven directly: filling a stream past
// http.resume_buffer_bytes through a real server would need a tool with large output.

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/wire"
)

// counts counts the store's drops by reason.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counts) drop(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[reason]++
}

func (c *counts) get(reason string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[reason]
}

func eventOf(stream string, seq int, size int) []byte {
	data := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":` + strconv.Itoa(seq) + `,"pad":"` + strings.Repeat("x", size) + `"}}`
	return wire.AppendEvent(nil, stream+"-"+strconv.Itoa(seq), "message", []byte(data))
}

// resumeOnce resumes from last as a GET would, answering 400 with the refusal.
func resumeOnce(s *Set, last string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	rd, err := s.Resume(last)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return w
	}
	rd.Serve(w, httptest.NewRequest(http.MethodGet, "/mcp", nil), time.Second, nil)
	return w
}

// TestBufferDropsOldest: past the buffer's limit the oldest events go, counted once.
func TestBufferDropsOldest(t *testing.T) {
	var c counts
	st := NewStore(Limits{BufferBytes: 4096, MaxBytes: 1 << 20, For: time.Minute}, c.drop)
	var s Set
	b := s.New(st, "s1")
	for seq := 1; seq <= 10; seq++ {
		b.Add(seq, eventOf("s1", seq, 1000), false)
	}
	if b.bytes > 4096 || st.Bytes() != int64(b.bytes) {
		t.Fatalf("buffer holds %d bytes (store counts %d), limit 4096", b.bytes, st.Bytes())
	}
	if c.get("size") != 1 {
		t.Errorf("size drops counted %d, want 1 (once per stream)", c.get("size"))
	}
}

// TestLostResponseRefused: a response larger than the buffer cannot be kept; a resume that
// would need it is refused naming the limit.
func TestLostResponseRefused(t *testing.T) {
	st := NewStore(Limits{BufferBytes: 4096, MaxBytes: 1 << 20, For: time.Minute}, nil)
	var s Set
	b := s.New(st, "s2")
	b.Add(1, eventOf("s2", 1, 10), false)
	b.Add(2, eventOf("s2", 2, 5000), true)
	b.Finish()
	w := resumeOnce(&s, "s2-1")
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "http.resume_buffer_bytes") {
		t.Fatalf("resume with the response lost: HTTP %d %s, want 400 naming the limit", w.Code, w.Body)
	}
	if st.Bytes() != 0 {
		t.Errorf("%d bytes still counted after the buffer let go of everything", st.Bytes())
	}
}

// TestMemoryBounds: the overall cap keeps new events out, the per-session count evicts
// the oldest stream, age discards a finished one, and the session's end all.
func TestMemoryBounds(t *testing.T) {
	var c counts
	st := NewStore(Limits{BufferBytes: 4096, MaxBytes: 8192, For: 50 * time.Millisecond}, c.drop)
	var s Set
	a := s.New(st, "s1")
	for seq := 1; seq <= 3; seq++ {
		a.Add(seq, eventOf("s1", seq, 3000), false)
	}
	if n := st.Bytes(); n > 8192 {
		t.Fatalf("%d bytes held, overall limit 8192", n)
	}
	for _, id := range []string{"s2", "s3"} { // one ~3 KiB event each: the third is over 8192
		s.New(st, id).Add(1, eventOf(id, 1, 3000), false)
	}
	if n := st.Bytes(); n > 8192 || c.get("memory") != 1 {
		t.Fatalf("%d bytes held, %d events kept out; want at most 8192 and one", n, c.get("memory"))
	}
	for i := 0; i < MaxStreams; i++ {
		s.New(st, "s"+strconv.Itoa(100+i))
	}
	if s.Get("s1") != nil || s.Get("s3") != nil || s.Len() != MaxStreams {
		t.Errorf("session keeps %d buffers (s1 kept: %v), want %d without the oldest", s.Len(), s.Get("s1") != nil, MaxStreams)
	}
	if c.get("streams") != 3 {
		t.Errorf("evictions counted %d, want 3", c.get("streams"))
	}
	if st.Bytes() != 0 {
		t.Errorf("%d bytes counted after every full buffer was evicted", st.Bytes())
	}
	last := s.Get("s131")
	last.Add(1, eventOf("s131", 1, 10), true)
	last.Finish()
	deadline := time.Now().Add(5 * time.Second)
	for s.Get("s131") != nil {
		if time.Now().After(deadline) {
			t.Fatal("a finished buffer outlived http.resume_for by 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c.get("age") != 1 {
		t.Errorf("age discards counted %d, want 1", c.get("age"))
	}
	if w := resumeOnce(&s, "s131-0"); w.Code != http.StatusBadRequest {
		t.Errorf("resume of an expired stream: HTTP %d, want 400", w.Code)
	}
	s.Close()
	if s.Len() != 0 {
		t.Errorf("%d buffers after the session ended", s.Len())
	}
	if b := s.New(st, "s200"); !b.gone {
		t.Errorf("a closed set made a buffer that keeps events")
	}
}

// TestNewerResumeTakesOver: a second resume of a stream ends the first one's hold; the
// POST's connection is no longer written once a GET has the stream.
func TestNewerResumeTakesOver(t *testing.T) {
	st := NewStore(Limits{BufferBytes: 4096, MaxBytes: 1 << 20, For: time.Minute}, nil)
	var s Set
	b := s.New(st, "s3")
	b.Add(1, eventOf("s3", 1, 10), false)
	if b.TakenOver() {
		t.Fatal("taken over before any resume")
	}
	first, err := s.Resume("s3-0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	w := httptest.NewRecorder()
	go func() {
		first.Serve(w, httptest.NewRequest(http.MethodGet, "/mcp", nil), time.Second, nil)
		close(done)
	}()
	if !b.TakenOver() {
		t.Fatal("a resumed stream is not taken over")
	}
	if _, err := s.Resume("s3-1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the first resume still holds the stream after a newer one")
	}
}

func TestParseEventID(t *testing.T) {
	for in, want := range map[string]string{"s12-3": "s12/3", "s1-0": "s1/0", "g-3": "", "s-1": "", "s12-": "", "s1x-2": "", "s12-99999999999": "", "": ""} {
		st, seq, ok := ParseEventID(in)
		got := ""
		if ok {
			got = st + "/" + strconv.Itoa(seq)
		}
		if got != want {
			t.Errorf("ParseEventID(%q) = %q, want %q", in, got, want)
		}
	}
}
