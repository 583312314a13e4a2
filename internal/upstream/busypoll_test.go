package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/busywait"
	"github.com/mcpgw/mcpgw/internal/httpclient"
	"github.com/mcpgw/mcpgw/internal/httpclient/httpclienttest"
)

// busyPollFor is busy polling for d, for one test, or skips the test where the process
// never busy-polls. The test's servers count as other processes.
func busyPollFor(t *testing.T, d time.Duration) *BusyPoll {
	t.Helper()
	if !busywait.Supported || runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skipf("busy polling needs Linux and two CPUs (have %s, %d CPUs, GOMAXPROCS %d)", runtime.GOOS, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	}
	b := NewBusyPoll(d)
	return b
}

// busyEndpoint is newTestEndpoint polling with b.
func busyEndpoint(t *testing.T, b *BusyPoll, rawURL string) *httpclient.Endpoint {
	t.Helper()
	return newTestEndpoint(t, rawURL, httpclient.Options{Busy: busyWaiter{b}})
}

func (b *BusyPoll) stats() (caught, gaveWay, timedOut int64) {
	s := b.Stats()
	return s.Caught, s.GaveWay, s.TimedOut
}

// TestBusyPollCatchesAnswer: the only waiting call polls and reads the answer that comes
// while it polls; answers that come at once, later than the poll lasts, or in two parts,
// and a connection closed without an answer, read exactly as without polling.
func TestBusyPollCatchesAnswer(t *testing.T) {
	b := busyPollFor(t, 2*time.Second)
	delays := []time.Duration{time.Millisecond, 0, 10 * time.Millisecond}
	srv := httpclienttest.NewRawServer(t, func(s *httpclienttest.RawServer, i int, c net.Conn, br *bufio.Reader) {
		for k := 0; ; k++ {
			if _, _, err := httpclienttest.ReadReq(br); err != nil {
				return
			}
			if k < len(delays) && !s.Sleep(delays[k]) {
				return
			}
			if k == len(delays) { // the head in two parts
				_, _ = io.WriteString(c, okJSON[:20])
				s.Sleep(5 * time.Millisecond)
				_, _ = io.WriteString(c, okJSON[20:])
				continue
			}
			if k > len(delays) {
				return // closed without an answer
			}
			_, _ = io.WriteString(c, okJSON)
		}
	})
	ep := busyEndpoint(t, b, srv.URL("/mcp"))
	tr := &testTracker{}
	c0, _, _ := b.stats()
	for i := 0; i <= len(delays); i++ {
		mustReadBody(t, mustPost(t, ep, tr, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), `{"ok":true}`)
	}
	if c1, _, _ := b.stats(); c1-c0 < 2 {
		t.Errorf("%d of the answers that came while the only call waited were caught by polling, want at least the delayed ones", c1-c0)
	}
	if _, err := doPost(httpclienttest.Ctx(t), ep, tr, []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)); err == nil {
		t.Fatal("a connection closed without an answer gave no error")
	}
	b.SetDuration(time.Millisecond) // shorter than the 10 ms answer: the poll times out, the call still gets it
	_, _, t0 := b.stats()
	srv2 := httpclienttest.NewRawServer(t, func(s *httpclienttest.RawServer, _ int, c net.Conn, br *bufio.Reader) {
		if _, _, err := httpclienttest.ReadReq(br); err == nil && s.Sleep(10*time.Millisecond) {
			_, _ = io.WriteString(c, okJSON)
		}
	})
	mustReadBody(t, mustPost(t, busyEndpoint(t, b, srv2.URL("/mcp")), tr, `{}`), `{"ok":true}`)
	if _, _, t1 := b.stats(); t1 == t0 {
		t.Error("a poll shorter than the upstream's answer did not end by time")
	}
}

// TestBusyPollGivesWay: a call polls only while it is the only one waiting; once a
// second call waits, the first goes back to the poller and both get their answers.
func TestBusyPollGivesWay(t *testing.T) {
	b := busyPollFor(t, 5*time.Second)
	second := make(chan struct{})
	srv := httpclienttest.NewRawServer(t, func(s *httpclienttest.RawServer, i int, c net.Conn, br *bufio.Reader) {
		if _, _, err := httpclienttest.ReadReq(br); err != nil {
			return
		}
		if i == 0 {
			select { // the first call's answer waits for the second call's request
			case <-second:
			case <-s.Quit:
				return
			}
			s.Sleep(50 * time.Millisecond)
		} else {
			close(second)
			s.Sleep(100 * time.Millisecond)
		}
		_, _ = io.WriteString(c, okJSON)
	})
	ep := busyEndpoint(t, b, srv.URL("/mcp"))
	_, g0, _ := b.stats()
	errc := make(chan error, 2)
	post := func() {
		r, err := doPost(httpclienttest.Ctx(t), ep, &testTracker{}, []byte(`{}`))
		if err == nil {
			_, err = r.ReadBody(1 << 10)
		}
		errc <- err
	}
	go post()
	deadline := time.Now().Add(5 * time.Second)
	for srv.Accepted.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	go post()
	for range 2 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if _, g1, _ := b.stats(); g1 == g0 {
		t.Error("the first call went on polling while a second call waited")
	}
}

// fakeTransport hands each request to the test, which answers through deliver.
type fakeTransport struct {
	deliver func(raw []byte, rel *Call)
	sent    chan []byte
	ended   chan struct{}
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{sent: make(chan []byte, 4), ended: make(chan struct{})}
}

func (f *fakeTransport) start(d func(raw []byte, rel *Call)) error { f.deliver = d; return nil }
func (f *fakeTransport) send(_ context.Context, msg []byte, _ *Call) error {
	f.sent <- msg
	return nil
}
func (f *fakeTransport) afterInit(string)      {}
func (f *fakeTransport) interrupt(*Call)       {}
func (f *fakeTransport) close() error          { close(f.ended); return nil }
func (f *fakeTransport) done() <-chan struct{} { return f.ended }
func (f *fakeTransport) err() error            { return nil }
func (f *fakeTransport) busyOK() bool          { return true }

// answer answers the request msg after d.
func (f *fakeTransport) answer(t *testing.T, msg []byte, d time.Duration) {
	var req struct{ ID int64 }
	if err := json.Unmarshal(msg, &req); err != nil {
		t.Errorf("request %s: %v", msg, err)
		return
	}
	time.Sleep(d)
	f.deliver([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, req.ID)), nil)
}

// TestBusyWaitForDeliveredAnswer: a call on a connection whose reader delivers the answer
// (stdio, SSE) waits for it busily while it is the only call waiting: the answer that
// comes meanwhile is caught; one that comes later than the wait lasts still arrives.
func TestBusyWaitForDeliveredAnswer(t *testing.T) {
	b := busyPollFor(t, 2*time.Second)
	f := newFakeTransport()
	c := newConn("fake", f, nil, slog.New(slog.DiscardHandler))
	c.busy = b
	if err := c.start(); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(delay time.Duration) {
		t.Helper()
		k, err := c.Begin(httpclienttest.Ctx(t), "tools/call", json.RawMessage(`{}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		go f.answer(t, <-f.sent, delay)
		raw, final, err := k.Next(httpclienttest.Ctx(t))
		if err != nil || !final || !strings.Contains(string(raw), `"result"`) {
			t.Fatalf("Next: %s %v %v", raw, final, err)
		}
	}
	c0, _, _ := b.stats()
	call(time.Millisecond)
	if c1, _, _ := b.stats(); c1 == c0 {
		t.Error("the answer that came while the only call waited busily was not caught")
	}
	b.SetDuration(time.Millisecond)
	_, _, t0 := b.stats()
	call(20 * time.Millisecond)
	if _, _, t1 := b.stats(); t1 == t0 {
		t.Error("a busy wait shorter than the answer's delay did not end by time")
	}
}

// TestBusyPollQuietAndPaused: polling needs the gateway to handle one request at most, and
// stops for a while after it gave way to another.
func TestBusyPollQuietAndPaused(t *testing.T) {
	b := busyPollFor(t, time.Second)
	b.waiting.Add(1) // this test is the one waiting call
	defer b.waiting.Add(-1)
	ready := func() bool { return true }
	if !b.spin(ready) {
		t.Fatal("no poll with one waiting call and no other request")
	}
	b.RequestStarted()
	b.RequestStarted()
	if b.spin(ready) {
		t.Error("polled while the gateway handled two requests")
	}
	b.RequestEnded()
	b.RequestEnded()
	b.s.PauseFor(time.Hour)
	if b.spin(ready) {
		t.Error("polled during the pause after giving way")
	}
	b.s.PauseFor(0)
	// Giving way starts the pause: a second request arrives while polling.
	_, g0, _ := b.stats()
	calls := 0
	if b.spin(func() bool {
		if calls++; calls == 3 {
			b.RequestStarted()
			b.RequestStarted()
		}
		return false
	}) {
		t.Fatal("spin reported an answer that never came")
	}
	if calls < 3 {
		t.Fatalf("spin stopped after %d polls, before the second request came", calls)
	}
	b.RequestEnded()
	b.RequestEnded()
	if _, g1, _ := b.stats(); g1 == g0 || !b.s.Paused() {
		t.Errorf("a poll interrupted by a second request did not give way and pause (gave way %d, paused %v)", g1-g0, b.s.Paused())
	}
	if b.spin(ready) {
		t.Error("polled right after giving way")
	}
}
