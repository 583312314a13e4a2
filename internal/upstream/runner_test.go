package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeRunner answers every request on its streams with an empty result (initialize with
// a minimal one), and remembers what it was asked to start.
type fakeRunner struct {
	mu      sync.Mutex
	started []RunnerServer
	streams []*fakeStream
}

type fakeStream struct {
	deliver func([]byte)
	done    chan struct{}
	once    sync.Once
	err     error
}

func (f *fakeRunner) OpenOnRunner(_ context.Context, executor string, sp RunnerServer, deliver func([]byte), _ func(string)) (RunnerStream, error) {
	if executor != "box" {
		return nil, errors.New(`executor "` + executor + `": no runner has connected`)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, sp)
	s := &fakeStream{deliver: deliver, done: make(chan struct{})}
	f.streams = append(f.streams, s)
	return s, nil
}

func (s *fakeStream) Send(_ context.Context, msg []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(msg, &m)
	if len(m.ID) == 0 {
		return nil
	}
	result := `{}`
	if m.Method == "initialize" {
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`
	}
	if m.Method == "server/discover" {
		s.deliver([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`))
		return nil
	}
	s.deliver([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":` + result + `}`))
	return nil
}

func (s *fakeStream) end(err error) {
	s.once.Do(func() { s.err = err; close(s.done) })
}
func (s *fakeStream) Close() error          { s.end(errors.New("closed")); return nil }
func (s *fakeStream) Done() <-chan struct{} { return s.done }
func (s *fakeStream) Err() error            { return s.err }

// A stdio server with a Runner is started through the Dialer's runners with the server's
// own env only, and its connection ends naming the executor when the runner's stream ends.
func TestRunnerTransport(t *testing.T) {
	d := NewDialer()
	fr := &fakeRunner{}
	d.Runners = fr
	ctx := context.Background()
	c, err := d.Dial(ctx, Options{Name: "fs", Transport: "stdio", Command: "node", Args: []string{"fs.js", "/w"},
		Env: map[string]string{"A": "1"}, Runner: "box", ConnectTimeout: 5 * time.Second, ProtocolVersion: SessionVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Request(ctx, "ping", nil); err != nil {
		t.Fatalf("ping through the runner: %v", err)
	}
	fr.mu.Lock()
	sp := fr.started[0]
	st := fr.streams[0]
	fr.mu.Unlock()
	if sp.Command != "node" || len(sp.Env) != 1 || sp.Env["A"] != "1" {
		t.Fatalf("runner asked to start %+v (want the server's env alone, not the gateway's)", sp)
	}
	st.end(errors.New("runner link closed: runner connection lost: EOF"))
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection outlived its runner stream")
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), `executor "box"`) {
		t.Fatalf("connection's error %v", err)
	}

	if _, err := d.Dial(ctx, Options{Name: "fs", Transport: "stdio", Command: "node", Runner: "box2", ConnectTimeout: time.Second}); err == nil || !strings.Contains(err.Error(), `"box2"`) {
		t.Fatalf("dial on an executor without a runner: %v", err)
	}
	if _, err := NewDialer().Dial(ctx, Options{Name: "fs", Transport: "stdio", Command: "node", Runner: "box", ConnectTimeout: time.Second}); err == nil || !strings.Contains(err.Error(), "no runner service") {
		t.Fatalf("dial with no runner service: %v", err)
	}
}

// A runner-hosted server's message over the server's bound ends its instance as a restart.
func TestRunnerTransportOversized(t *testing.T) {
	d := NewDialer()
	fr := &fakeRunner{}
	d.Runners = fr
	c, err := d.Dial(context.Background(), Options{Name: "fs", Transport: "stdio", Command: "node", Runner: "box",
		ConnectTimeout: 5 * time.Second, ProtocolVersion: SessionVersion, MaxMessageBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fr.mu.Lock()
	st := fr.streams[0]
	fr.mu.Unlock()
	st.deliver([]byte(`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 8192) + `"}`))
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("an oversized message did not end the instance")
	}
	var re *RestartError
	if !errors.As(c.Err(), &re) {
		t.Fatalf("error %v, want a RestartError", c.Err())
	}
}
