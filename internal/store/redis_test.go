package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/peers"
)

// redisServer is a redis-server child process for one test, on a loopback port, with no
// persistence. It is killed (by its pid) in Cleanup, whether the test passed or not.
type redisServer struct {
	t      *testing.T
	bin    string
	dir    string
	port   int
	sock   string
	log    lockedBuffer
	cmd    *exec.Cmd
	exited chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	bin := peers.Command(t, "redis-server")
	s := &redisServer{t: t, bin: bin, dir: t.TempDir()}
	s.sock = filepath.Join(s.dir, "redis.sock")
	t.Cleanup(func() {
		s.kill()
		if t.Failed() {
			t.Logf("redis-server output:\n%s", s.log.String())
		}
	})
	for attempt := 0; ; attempt++ {
		s.port = freePort(t)
		err := s.start()
		if err == nil {
			return s
		}
		if attempt == 2 {
			t.Fatalf("redis-server: %v\n%s", err, s.log.String())
		}
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs redis-server on s.port and waits (at most 5 s) until it answers PING.
func (s *redisServer) start() error {
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--unixsocket", s.sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--daemonize", "no")
	cmd.Stdout, cmd.Stderr = &s.log, &s.log
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(exited chan struct{}) { _ = cmd.Wait(); close(exited) }(s.exited)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("redis-server exited at start")
		default:
		}
		if pingRaw(s.addr()) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	return errors.New("redis-server did not answer PING within 5s")
}

func (s *redisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

func (s *redisServer) url() string { return "redis://" + s.addr() + "/0" }

// kill stops the server by its pid and waits for it to exit.
func (s *redisServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	s.cmd = nil
}

func (s *redisServer) open(t *testing.T) *Redis {
	t.Helper()
	r, err := OpenRedis(s.url())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func pingRaw(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// eventually retries f every 50 ms until it succeeds or d has passed.
func eventually(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRedisUnavailableAndRecovers(t *testing.T) {
	srv := startRedis(t)
	s := srv.open(t)
	if err := s.Put(record("s1")); err != nil {
		t.Fatal(err)
	}
	srv.kill()

	calls := map[string]func() error{
		"Get":             func() error { _, err := s.Get("s1"); return err },
		"Put":             func() error { return s.Put(record("s2")) },
		"Delete":          func() error { return s.Delete("s1") },
		"List":            func() error { _, err := s.List(); return err },
		"GetTask":         func() error { _, err := s.GetTask("t"); return err },
		"ListTasks":       func() error { _, err := s.ListTasks(); return err },
		"GetConversation": func() error { _, err := s.GetConversation("a", "c"); return err },
		"PutConversation": func() error { return s.PutConversation(&Conversation{Agent: "a", ID: "c"}) },
		"Publish":         func() error { return s.Publish(context.Background(), []byte("x")) },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		took := time.Since(start)
		t.Logf("%s with Redis down: %v after %v", name, err, took.Round(time.Millisecond))
		if !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrNotFound) {
			t.Errorf("%s with Redis down = %v; want ErrUnavailable", name, err)
		}
		if took > opTimeout+500*time.Millisecond {
			t.Errorf("%s with Redis down took %v; want at most %v", name, took, opTimeout)
		}
		if err != nil && strings.Contains(err.Error(), "session not found") {
			t.Errorf("%s: unavailable reads as not found: %v", name, err)
		}
	}

	// Back on the same port (the data is gone: no persistence): calls succeed again.
	if err := srv.start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	eventually(t, 10*time.Second, "store recovers after Redis restarts", func() error {
		return s.Put(record("s3"))
	})
	t.Logf("recovered %v after Redis restarted", time.Since(start).Round(time.Millisecond))
	if _, err := s.Get("s3"); err != nil {
		t.Fatalf("Get after recovery: %v", err)
	}
	if _, err := s.Get("s1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(missing) after recovery = %v; want ErrNotFound", err)
	}
}

func TestRedisBus(t *testing.T) {
	srv := startRedis(t)
	a, b := srv.open(t), srv.open(t)
	if BusOf(a) != Bus(a) || BusOf(NewCached(b, 10)) != Bus(b) {
		t.Fatal("BusOf does not return the Redis bus (through NewCached)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan string, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		BusOf(b).Subscribe(ctx, func(msg []byte) { got <- string(msg) })
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Subscribe did not return after its context ended")
		}
	}()

	// The subscription starts asynchronously: publish until one arrives.
	receive := func(got <-chan string, what, msg string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			_ = a.Publish(context.Background(), []byte(msg))
			timeout := time.After(100 * time.Millisecond)
		drain:
			for {
				select {
				case m := <-got:
					if m == msg {
						return
					}
				case <-timeout:
					break drain
				}
			}
		}
		t.Fatalf("%s: message not received within 10s", what)
	}
	receive(got, "first publish", "hello")

	// Loss of the connection: Subscribe subscribes again once Redis is back.
	srv.kill()
	if err := srv.start(); err != nil {
		t.Fatal(err)
	}
	receive(got, "publish after Redis restarted", "again")

	// Closing the store ends its Subscribe, once that is subscribed (a's own message
	// arrived through it).
	ended := make(chan struct{})
	gotA := make(chan string, 100)
	go func() {
		defer close(ended)
		a.Subscribe(context.Background(), func(msg []byte) { gotA <- string(msg) })
	}()
	receive(gotA, "publish to a's own Subscribe", "third")
	a.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("Subscribe did not return after the store was closed")
	}
}

func TestRedisUnixSocket(t *testing.T) {
	srv := startRedis(t)
	s, err := Open("unix://"+srv.sock+"?db=2", "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(record("u1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get("u1"); err != nil {
		t.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	s, err := Open("bolt", dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*Bolt); !ok {
		t.Fatalf("Open(bolt) = %T", s)
	}
	s.Close()
	if _, err := OpenBolt(filepath.Join(dir, "mcpgw.db")); err != nil {
		t.Fatalf("Open(bolt) did not use stateDir/mcpgw.db: %v", err)
	}
	if s, err := Open("memory", ""); err != nil {
		t.Fatal(err)
	} else if _, ok := s.(*Memory); !ok {
		t.Fatalf("Open(memory) = %T", s)
	}
	if _, err := Open("etcd://x", dir); err == nil {
		t.Fatal("Open accepted an unknown store")
	}

	// A Redis nobody listens on: an error at once, naming the URL but not its password.
	port := freePort(t)
	for _, u := range []string{
		fmt.Sprintf("redis://mcpgw:s3cret@127.0.0.1:%d/0", port),
		fmt.Sprintf("redis://:s3cret@127.0.0.1:%d/3", port),
	} {
		start := time.Now()
		_, err := Open(u, dir)
		if err == nil {
			t.Fatalf("Open(%s) with nobody listening succeeded", u)
		}
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("unreachable Redis: %v; want ErrUnavailable", err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d", port)) {
			t.Errorf("error does not name the server: %v", err)
		}
		if time.Since(start) > opTimeout+time.Second {
			t.Errorf("Open took %v", time.Since(start))
		}
	}
	// Bad URLs do not show passwords either.
	for _, u := range []string{"redis://u:s3cret@host:notaport/0", "redis://u:s3cret@127.0.0.1:6379/x/y", "redis://u:s3cret@[::1/0"} {
		if _, err := Open(u, dir); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%s) = %v; want an error without the password", u, err)
		}
	}
}

func TestRedisOpenPingsAndWorks(t *testing.T) {
	srv := startRedis(t)
	s, err := Open(srv.url(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*Redis); !ok {
		t.Fatalf("Open(redis://) = %T", s)
	}
	// Keys are namespaced.
	_ = s.Put(record("k1"))
	_ = s.PutTask(&Task{ID: "t1"})
	_ = s.PutConversation(&Conversation{Agent: "a:b", ID: "c"})
	r := s.(*Redis)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	keys, err := r.c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "mcpgw:") {
			t.Errorf("key %q outside the mcpgw: namespace", k)
		}
	}
	for _, k := range []string{"mcpgw:session:k1", "mcpgw:task:t1", "mcpgw:conv:a%3Ab:c"} {
		if n, _ := r.c.Exists(ctx, k).Result(); n != 1 {
			t.Errorf("key %q missing (have %v)", k, keys)
		}
	}
}

func TestNopBus(t *testing.T) {
	for _, s := range []Store{NewMemory(), NewCached(NewMemory(), 10)} {
		bus := BusOf(s)
		if _, ok := bus.(*Redis); ok {
			t.Fatal("memory store has a Redis bus")
		}
		if err := bus.Publish(context.Background(), []byte("x")); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		bus.Subscribe(ctx, func([]byte) { t.Error("no-op bus delivered a message") })
		cancel()
	}
}
