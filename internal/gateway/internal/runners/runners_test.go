package runners

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/runnerlink"
	"github.com/mcpgw/mcpgw/internal/upstream"
)

func digest(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:])
}

// hubFixture is a hub behind an httptest server, with a config the test may swap.
type hubFixture struct {
	hub *Hub
	srv *httptest.Server
	cfg atomic.Pointer[config.Config]
}

func newHub(t *testing.T) *hubFixture {
	t.Helper()
	f := &hubFixture{}
	f.cfg.Store(&config.Config{Executors: map[string]*config.ExecutorConfig{
		"box":   {Type: "local_docker", Runner: &config.RunnerConfig{Keys: []string{digest("key-box")}}},
		"box2":  {Type: "local_docker", Runner: &config.RunnerConfig{Keys: []string{digest("key-box2")}}},
		"plain": {Type: "local_pc"},
	}})
	f.hub = New(f.cfg.Load, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.srv = httptest.NewServer(f.hub)
	t.Cleanup(func() { f.hub.Close(); f.srv.Close() })
	return f
}

// dial upgrades a connection as executor with key; it returns the connection, or the
// refusal's status.
func (f *hubFixture) dial(t *testing.T, executor, key string) (net.Conn, int) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(f.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
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
	if resp.StatusCode != http.StatusSwitchingProtocols {
		c.Close()
		return nil, resp.StatusCode
	}
	return c, resp.StatusCode
}

func (f *hubFixture) state(executor string) State {
	for _, s := range f.hub.States() {
		if s.Executor == executor {
			return s
		}
	}
	return State{Executor: executor, State: "absent"}
}

func waitState(t *testing.T, f *hubFixture, executor, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if f.state(executor).State == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("runner of %s is %+v, want %s", executor, f.state(executor), want)
}

// A key opens its own executor's runner only; the rest get the same 401.
func TestRunnerAdmission(t *testing.T) {
	f := newHub(t)
	cases := []struct{ executor, key string }{
		{"box", "wrong"}, {"box2", "key-box"}, {"plain", "key-box"}, {"nosuch", "key-box"}, {"", "key-box"}, {"box", ""},
	}
	for _, c := range cases {
		if _, st := f.dial(t, c.executor, c.key); st != http.StatusUnauthorized {
			t.Errorf("executor %q key %q: HTTP %d, want 401", c.executor, c.key, st)
		}
	}
	resp, err := http.Post(f.srv.URL+Path, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /runner: HTTP %d", resp.StatusCode)
	}
	resp, err = http.Get(f.srv.URL + Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("GET /runner without Upgrade: HTTP %d", resp.StatusCode)
	}
	if st := f.state("box"); st.State != "disconnected" || st.Error != "no runner has connected" {
		t.Errorf("box before any runner: %+v", st)
	}
}

// Opening on an executor without a runner fails at once, naming it; a runner connected
// for one executor serves none of another's.
func TestOpenOnRunnerNamesTheExecutor(t *testing.T) {
	f := newHub(t)
	c, st := f.dial(t, "box", "key-box")
	if c == nil {
		t.Fatalf("box's key: HTTP %d", st)
	}
	go func() {
		_ = runnerlink.Serve(c, func(runnerlink.Spec, runnerlink.Outputs) (runnerlink.Process, error) {
			return nil, io.ErrUnexpectedEOF
		}, 0)
	}()
	waitState(t, f, "box", "connected")
	_, err := f.hub.OpenOnRunner(context.Background(), "box2", upstream.RunnerServer{Name: "fs", Command: "x"}, func([]byte) {}, nil)
	if err == nil || !strings.Contains(err.Error(), `executor "box2"`) || !strings.Contains(err.Error(), "no runner has connected") {
		t.Fatalf("open on box2 with only box's runner: %v", err)
	}
	_, err = f.hub.OpenOnRunner(context.Background(), "box", upstream.RunnerServer{Name: "fs", Command: "x"}, func([]byte) {}, nil)
	if err == nil || !strings.Contains(err.Error(), "could not start fs") {
		t.Fatalf("open on box whose runner cannot start it: %v", err)
	}
}

// A reload that drops the key a runner presented cuts it off; the state says why.
func TestRevokedKeyCutsRunnerOff(t *testing.T) {
	f := newHub(t)
	c, st := f.dial(t, "box", "key-box")
	if c == nil {
		t.Fatalf("box's key: HTTP %d", st)
	}
	served := make(chan error, 1)
	go func() {
		served <- runnerlink.Serve(c, func(runnerlink.Spec, runnerlink.Outputs) (runnerlink.Process, error) { return nil, io.EOF }, 0)
	}()
	waitState(t, f, "box", "connected")
	// The same config again keeps it.
	f.hub.Revalidate(f.cfg.Load())
	if st := f.state("box"); st.State != "connected" {
		t.Fatalf("after a reload that kept the key: %+v", st)
	}
	next := &config.Config{Executors: map[string]*config.ExecutorConfig{
		"box": {Type: "local_docker", Runner: &config.RunnerConfig{Keys: []string{digest("another")}}},
	}}
	f.cfg.Store(next)
	f.hub.Revalidate(next)
	waitState(t, f, "box", "disconnected")
	if st := f.state("box"); !strings.Contains(st.Error, "revoked") {
		t.Errorf("cut-off runner's state: %+v", st)
	}
	select {
	case <-served:
	case <-time.After(5 * time.Second):
		t.Fatal("the runner's side outlived the cut")
	}
	if _, st := f.dial(t, "box", "key-box"); st != http.StatusUnauthorized {
		t.Errorf("revoked key: HTTP %d", st)
	}
}

// A second connection for an executor replaces the first.
func TestNewConnectionReplacesOld(t *testing.T) {
	f := newHub(t)
	start := func() chan error {
		c, st := f.dial(t, "box", "key-box")
		if c == nil {
			t.Fatalf("box's key: HTTP %d", st)
		}
		done := make(chan error, 1)
		go func() {
			done <- runnerlink.Serve(c, func(runnerlink.Spec, runnerlink.Outputs) (runnerlink.Process, error) { return nil, io.EOF }, 0)
		}()
		return done
	}
	connects := make(chan string, 2)
	f.hub.OnConnect = func(ex string) { connects <- ex }
	first := start()
	waitState(t, f, "box", "connected")
	<-connects
	start()
	select {
	case <-first:
	case <-time.After(5 * time.Second):
		t.Fatal("the first connection was not cut when a second came")
	}
	select {
	case ex := <-connects:
		if ex != "box" {
			t.Errorf("OnConnect(%q)", ex)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnConnect was not called")
	}
	if st := f.state("box"); st.State != "connected" {
		t.Errorf("after the replacement: %+v", st)
	}
}
