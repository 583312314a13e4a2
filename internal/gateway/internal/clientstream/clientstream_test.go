package clientstream

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSlot: messages sent with no stream open wait, bounded and whole, for the next one;
// a second stream is refused while one is open; Close closes it.
func TestSlot(t *testing.T) {
	var sl Slot
	if sl.Open() {
		t.Fatal("an empty slot is open")
	}
	if err := sl.Send([]byte("a")); !errors.Is(err, ErrNoStream) {
		t.Errorf("send with no stream: %v", err)
	}
	big := bytes.Repeat([]byte("x"), PendingMax)
	_ = sl.Send(big) // over the bound with "a": dropped whole
	_ = sl.Send([]byte("b"))
	st := New("", 4)
	if !sl.Attach(st) || !sl.Open() {
		t.Fatal("attach")
	}
	var got []string
	for range 2 {
		got = append(got, string(<-st.ch))
	}
	if strings.Join(got, ",") != "a,b" || len(st.ch) != 0 {
		t.Errorf("what waited: %v (+%d)", got, len(st.ch))
	}
	if sl.Attach(New("", 4)) {
		t.Error("a second stream attached while one is open")
	}
	sl.Close()
	if !st.Closed() || sl.Open() {
		t.Error("Close left the stream open")
	}
	sl.Detach(st)
	if !sl.Attach(New("", 4)) {
		t.Error("attach after detach")
	}
}

// TestStreamSlowClientClosed: a stream whose queue is full is closed rather than waited on.
func TestStreamSlowClientClosed(t *testing.T) {
	st := New("", 2)
	for range 2 {
		if err := st.Send([]byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Send([]byte("m")); !errors.Is(err, ErrSlow) || !st.Closed() {
		t.Errorf("send on a full queue: %v, closed %v", err, st.Closed())
	}
	if err := st.Send([]byte("m")); !errors.Is(err, ErrNoStream) {
		t.Errorf("send on a closed stream: %v", err)
	}
}

// flushRecorder is a ResponseWriter whose body may be read while Pump writes, and that
// says when Pump flushed a write.
type flushRecorder struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	header  http.Header
	flushed chan struct{}
}

func (f *flushRecorder) Header() http.Header { return f.header }
func (f *flushRecorder) WriteHeader(int)     {}
func (f *flushRecorder) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buf.Write(b)
}
func (f *flushRecorder) Flush() { f.flushed <- struct{}{} }
func (f *flushRecorder) body() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buf.String()
}

// TestPumpAndRelay: Pump writes queued messages as events with ids under the prefix and
// returns when the stream closes; Relay hands them on and says why it stopped.
func TestPumpAndRelay(t *testing.T) {
	st := New("g", 8)
	_ = st.Send([]byte(`{"a":1}`))
	_ = st.Send([]byte(`{"b":2}`))
	rec := &flushRecorder{header: http.Header{}, flushed: make(chan struct{}, 8)}
	r := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(context.Background())
	done := make(chan struct{})
	go func() { st.Pump(rec, r); close(done) }()
	// Close only once both messages are written (a close first could end Pump before it
	// writes them), and only while Pump still runs (a Pump that returned by itself must fail).
	for timeout := time.After(5 * time.Second); !strings.Contains(rec.body(), `data: {"b":2}`); {
		select {
		case <-rec.flushed:
		case <-done:
			t.Fatalf("Pump returned before the stream closed; pumped:\n%s", rec.body())
		case <-timeout:
			t.Fatal("Pump did not write the queued messages within 5s")
		}
	}
	select {
	case <-done:
		t.Fatal("Pump returned before the stream closed")
	default:
	}
	st.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Pump did not return after Close")
	}
	if body := rec.body(); !strings.Contains(body, "id: g-1\n") || !strings.Contains(body, "id: g-2\n") || !strings.Contains(body, `data: {"b":2}`) {
		t.Errorf("pumped:\n%s", body)
	}

	st = New("", 8)
	_ = st.Send([]byte("one"))
	_ = st.Send([]byte("two"))
	var lines []string
	if st.Relay(func(b []byte) error {
		lines = append(lines, string(b))
		if len(lines) == 2 {
			return errors.New("gone")
		}
		return nil
	}) {
		t.Error("Relay reported a closed stream after a failed write")
	}
	st.Close()
	if !st.Relay(func([]byte) error { return nil }) || strings.Join(lines, ",") != "one,two" {
		t.Errorf("Relay: %v", lines)
	}
}
