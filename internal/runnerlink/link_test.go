package runnerlink

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// echo is a Process that answers each message with itself, prefixed by its spec's name,
// and exits on "exit".
type echo struct {
	name string
	out  Outputs
	once sync.Once
}

func (e *echo) Write(m []byte) error {
	if string(m) == "exit" {
		e.once.Do(func() { e.out.Exited(errors.New("exit status 3")) })
		return nil
	}
	e.out.Stderr("got " + string(m))
	e.out.Message(append([]byte(e.name+":"), m...))
	return nil
}

func (e *echo) Stop() {}

func echoStarter(spec Spec, out Outputs) (Process, error) {
	if spec.Command == "missing" {
		return nil, errors.New("exec: \"missing\": executable file not found")
	}
	return &echo{name: spec.Name, out: out}, nil
}

// pair is a Link and a runner serving it over a loopback TCP connection.
func pair(t *testing.T, start Starter, max int) (*Link, chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			served <- err
			return
		}
		served <- Serve(c, start, max)
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	l := NewLink(c, max)
	go l.Run()
	t.Cleanup(func() { l.Close(errors.New("test over")) })
	return l, served
}

func recv(t *testing.T, ch chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("no message within 5s")
		return ""
	}
}

func TestStreamsRelayBothWays(t *testing.T) {
	l, _ := pair(t, echoStarter, 0)
	ctx := context.Background()
	got := make(chan string, 8)
	errs := make(chan string, 8)
	a, err := l.Open(ctx, Spec{Name: "a", Command: "x"}, func(p []byte) { got <- string(p) }, func(s string) { errs <- s })
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Open(ctx, Spec{Name: "b", Command: "x"}, func(p []byte) { got <- string(p) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Send(ctx, []byte(`{"id":1}`)); err != nil {
		t.Fatal(err)
	}
	if s := recv(t, got); s != `b:{"id":1}` {
		t.Fatalf("b answered %q", s)
	}
	if err := a.Send(ctx, []byte(`{"id":2}`)); err != nil {
		t.Fatal(err)
	}
	if s := recv(t, got); s != `a:{"id":2}` {
		t.Fatalf("a answered %q", s)
	}
	if s := recv(t, errs); s != `got {"id":2}` {
		t.Fatalf("a's stderr %q", s)
	}
	if n := len(l.Streams()); n != 2 {
		t.Fatalf("%d streams, want 2", n)
	}
	// The process exits: its stream ends saying why, the other lives on.
	_ = a.Send(ctx, []byte("exit"))
	select {
	case <-a.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("stream of an exited process did not end")
	}
	if err := a.Err(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("exited stream's error %v", err)
	}
	if err := b.Send(ctx, []byte("2")); err != nil {
		t.Fatal(err)
	}
	if s := recv(t, got); s != "b:2" {
		t.Fatalf("b answered %q", s)
	}
}

func TestOpenFailureSaysWhy(t *testing.T) {
	l, _ := pair(t, echoStarter, 0)
	_, err := l.Open(context.Background(), Spec{Name: "fs", Command: "missing"}, func([]byte) {}, nil)
	if err == nil || !strings.Contains(err.Error(), "could not start fs") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("open of a missing command: %v", err)
	}
	_, err = l.Open(context.Background(), Spec{Name: "nocmd"}, func([]byte) {}, nil)
	if err == nil || !strings.Contains(err.Error(), "no command") {
		t.Fatalf("open without a command: %v", err)
	}
}

func TestLinkLossEndsEveryStream(t *testing.T) {
	l, served := pair(t, echoStarter, 0)
	s, err := l.Open(context.Background(), Spec{Name: "a", Command: "x"}, func([]byte) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Close(errors.New("runner of executor box revoked"))
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("stream outlived its link")
	}
	if !errors.Is(s.Err(), ErrLinkClosed) || !strings.Contains(s.Err().Error(), "executor box") {
		t.Fatalf("stream error %v", s.Err())
	}
	if err := s.Send(context.Background(), []byte("x")); err == nil {
		t.Fatal("send on a dead stream succeeded")
	}
	if _, err := l.Open(context.Background(), Spec{Name: "b", Command: "x"}, func([]byte) {}, nil); !errors.Is(err, ErrLinkClosed) {
		t.Fatalf("open on a closed link: %v", err)
	}
	select {
	case <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("runner side did not end with its connection")
	}
}

// A runner that sends a frame over the bound ends the link instead of reading it.
func TestOversizedFrameEndsLink(t *testing.T) {
	c1, c2 := net.Pipe()
	l := NewLink(c1, 1024)
	go l.Run()
	defer l.Close(nil)
	var h [headerLen]byte
	binary.BigEndian.PutUint32(h[0:4], 1<<30)
	h[4] = frameData
	go func() { _, _ = c2.Write(h[:]) }()
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("link did not end on an oversized frame")
	}
	if !strings.Contains(l.Err().Error(), "larger than the bound") {
		t.Fatalf("link error %v", l.Err())
	}
}

// A gateway's open that the runner never answers waits only as long as its context.
func TestOpenBoundedByContext(t *testing.T) {
	c1, c2 := net.Pipe()
	defer c2.Close()
	go func() { // reads and never answers
		b := make([]byte, 4096)
		for {
			if _, err := c2.Read(b); err != nil {
				return
			}
		}
	}()
	l := NewLink(c1, 0)
	go l.Run()
	defer l.Close(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := l.Open(ctx, Spec{Name: "a", Command: "x"}, func([]byte) {}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("open error %v", err)
	}
	if n := len(l.Streams()); n != 0 {
		t.Fatalf("%d streams left after a timed-out open", n)
	}
}

// stuck is a Process that never takes its input: its Write blocks until Stop.
type stuck struct {
	stop chan struct{}
	once sync.Once
	out  Outputs
}

func (s *stuck) Write([]byte) error { <-s.stop; return errors.New("stopped") }
func (s *stuck) Stop() {
	s.once.Do(func() { close(s.stop); s.out.Exited(errors.New("killed")) })
}

// A server that stops reading its input is stopped once its queue is full, saying why;
// the link and its other streams go on.
func TestStalledProcessIsStoppedNotTheLink(t *testing.T) {
	start := func(spec Spec, out Outputs) (Process, error) {
		if spec.Name == "stuck" {
			return &stuck{stop: make(chan struct{}), out: out}, nil
		}
		return echoStarter(spec, out)
	}
	l, _ := pair(t, start, 0)
	ctx := context.Background()
	s, err := l.Open(ctx, Spec{Name: "stuck", Command: "x"}, func([]byte) {}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	ok, err := l.Open(ctx, Spec{Name: "ok", Command: "x"}, func(p []byte) { got <- string(p) }, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < inputQueue+10; i++ {
		if s.Send(ctx, []byte(`{"id":1}`)) != nil {
			break
		}
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a server that does not read its input was not stopped")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "not reading its input") {
		t.Fatalf("stalled stream's error: %v", err)
	}
	if err := ok.Send(ctx, []byte("still")); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, got); m != "ok:still" {
		t.Fatalf("the other stream answered %q", m)
	}
}

// Frames a runner sends for streams that are not open, and frames of unknown types, are
// ignored.
func TestStrayFramesIgnored(t *testing.T) {
	c1, c2 := net.Pipe()
	l := NewLink(c1, 0)
	go l.Run()
	defer l.Close(nil)
	var b []byte
	b = appendFrame(b, frameData, 77, []byte(`{"id":1}`))
	b = appendFrame(b, frameOpened, 78, nil)
	b = appendFrame(b, 200, 0, []byte("?"))
	b = appendFrame(b, frameClose, 79, []byte("x"))
	go func() { _, _ = c2.Write(b) }()
	got := make(chan string, 1)
	go func() {
		// Answer the open that follows with opened, as a runner would.
		fr := frameReader{r: c2, max: 1 << 20}
		for {
			f, err := fr.next()
			if err != nil {
				return
			}
			if f.typ == frameOpen {
				_, _ = c2.Write(appendFrame(nil, frameOpened, f.stream, nil))
				_, _ = c2.Write(appendFrame(nil, frameData, f.stream, []byte("hello")))
			}
		}
	}()
	if _, err := l.Open(context.Background(), Spec{Name: "a", Command: "x"}, func(p []byte) { got <- string(p) }, nil); err != nil {
		t.Fatal(err)
	}
	if m := recv(t, got); m != "hello" {
		t.Fatalf("got %q", m)
	}
	select {
	case <-l.Done():
		t.Fatalf("link ended on stray frames: %v", l.Err())
	default:
	}
}
