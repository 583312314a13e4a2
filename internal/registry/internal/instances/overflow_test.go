package instances

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpgw/mcpgw/config"
	"github.com/mcpgw/mcpgw/internal/upstream"
	"github.com/mcpgw/mcpgw/internal/wire"
)

// testOwner is an owner (a client session) of a stateless or session client, of agent a.
type testOwner struct {
	stateless bool
	agent     string
	started   atomic.Int64
}

func (o *testOwner) InstanceSpec(string) OwnerSpec {
	return OwnerSpec{Session: "s-" + o.agent, Agent: o.agent, Stateless: o.stateless}
}
func (o *testOwner) Ended() bool { return false }
func (o *testOwner) HandleUpstream(*upstream.Conn, *wire.Msg, []byte, *upstream.Call) {
}
func (o *testOwner) HandleShared(*upstream.Conn, *wire.Msg, []byte, *upstream.Call) {}
func (o *testOwner) InstanceCatalog(string, *Catalog, bool)                         {}
func (o *testOwner) InstanceUp(string, *upstream.Conn)                              {}
func (o *testOwner) InstanceDown(string)                                            {}
func (o *testOwner) InstanceStarted(string)                                         { o.started.Add(1) }

// overflowRegistry is a registry of one per_session server ev (a go-sdk streamable HTTP
// server) whose instances take one request at once, with the given extra keys.
func overflowRegistry(t *testing.T, extra string) *testRegistry {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "overflow-test", Version: "1"}, nil)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	// Connections still open at the end (a test that failed half-way) are cut, not
	// waited for.
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	url := srv.URL
	cfg, _, err := config.Parse([]byte(fmt.Sprintf(`
servers:
  ev:
    type: streamable_http
    url: %q
    mode: per_session
    max_concurrency: 1
    timeouts: {connect: 5s}
%s`, url, extra)))
	if err != nil {
		t.Fatal(err)
	}
	r := newTestRegistry(t, cfg)
	t.Cleanup(r.Close)
	return r
}

// newOwner is an owner of agent a on r whose instances are stopped at cleanup (before the
// upstream is: it waits for their connections).
func newOwner(t *testing.T, r *testRegistry, stateless bool) *testOwner {
	o := &testOwner{stateless: stateless, agent: "a"}
	t.Cleanup(func() {
		own := r.Instances().OwnConns(o)
		r.Instances().ReleaseOwner(o, nil)
		for _, c := range own {
			select {
			case <-c.Done():
			case <-time.After(5 * time.Second):
				t.Error("an owner's instance did not stop")
			}
		}
	})
	return o
}

// acquired is one Acquire's answer.
type acquired struct {
	c    *upstream.Conn
	done func()
}

func acquire(t *testing.T, r *testRegistry, o Owner) acquired {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, done, err := r.Instances().Acquire(ctx, "ev", o)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return acquired{c, done}
}

// waitCount waits (bounded) until n instances of ev run for owners.
func waitCount(t *testing.T, r *testRegistry, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for r.Instances().Count("ev") != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d instances of ev run, want %d", r.Instances().Count("ev"), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// busyOwn acquires o's own instance and takes its only slot, as a running request does;
// the returned func gives the slot back.
func busyOwn(t *testing.T, r *testRegistry, o Owner) (*upstream.Conn, func()) {
	t.Helper()
	own := acquire(t, r, o)
	if own.c.Limit == nil || !own.c.Limit.TryAcquire() {
		t.Fatal("the own instance has no free slot to take")
	}
	return own.c, own.c.Limit.Release
}

// TestStatelessOverflowBound: a stateless owner's request that finds its own instance
// free is served there; while the instance is busy, each request gets an instance of its
// own (stopped when done) up to maxOverflow at once, and past that waits for the own
// instance as before; an overflow instance that ended makes room for another.
func TestStatelessOverflowBound(t *testing.T) {
	r := overflowRegistry(t, "    max_instances: 16\n")
	o := newOwner(t, r, true)
	own := acquire(t, r, o).c
	if again := acquire(t, r, o).c; again != own {
		t.Fatal("a request that finds the own instance free did not go to it")
	}
	waitCount(t, r, 1)
	_, release := busyOwn(t, r, o)
	var over []acquired
	for i := range maxOverflow {
		a := acquire(t, r, o)
		if a.c == own || slices.ContainsFunc(over, func(x acquired) bool { return x.c == a.c }) {
			t.Fatalf("request %d while the own instance is busy: got an instance already in use", i)
		}
		over = append(over, a)
	}
	waitCount(t, r, 1+maxOverflow)
	if past := acquire(t, r, o); past.c != own {
		t.Fatalf("request past %d overflow instances did not wait for the own instance", maxOverflow)
	}
	if n := r.Instances().Count("ev"); n != 1+maxOverflow {
		t.Fatalf("%d instances after a request past the bound, want %d", n, 1+maxOverflow)
	}
	// Done: the overflow instance stops, and its place is free again.
	over[0].done()
	waitCount(t, r, maxOverflow)
	next := acquire(t, r, o)
	if next.c == own {
		t.Fatal("an ended overflow instance did not make room for another")
	}
	next.done()
	for _, a := range over[1:] {
		a.done()
	}
	waitCount(t, r, 1)
	// The own instance free again: requests go to it.
	release()
	if a := acquire(t, r, o); a.c != own {
		t.Fatal("the own instance free again, a request went elsewhere")
	}
	if got, want := o.started.Load(), int64(1+maxOverflow+1); got != want {
		t.Errorf("InstanceStarted told %d times, want %d (the own, %d overflow, one more)", got, want, maxOverflow)
	}
}

// TestStatelessOverflowFallsBack: when no overflow instance may start (max_instances, the
// agent's share), the request waits for the owner's own instance; no error.
func TestStatelessOverflowFallsBack(t *testing.T) {
	for _, tc := range []struct{ name, keys string }{
		{"max_instances", "    max_instances: 2\n    max_instances_per_agent: 2\n"},
		{"share", "    max_instances: 16\n    max_instances_per_agent: 2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := overflowRegistry(t, tc.keys)
			o := newOwner(t, r, true)
			own, release := busyOwn(t, r, o)
			defer release()
			first := acquire(t, r, o)
			defer first.done()
			if first.c == own {
				t.Fatal("the first request past the busy own instance got no overflow instance")
			}
			for i := range 3 {
				if a := acquire(t, r, o); a.c != own {
					t.Fatalf("request %d at the limit: got another instance, want the own one's queue", i)
				}
			}
			waitCount(t, r, 2)
		})
	}
}

// TestSessionOwnerNoOverflow: a session client's requests keep its one instance and its
// queue, busy or not (its server may keep state across calls).
func TestSessionOwnerNoOverflow(t *testing.T) {
	r := overflowRegistry(t, "    max_instances: 16\n")
	o := newOwner(t, r, false)
	own, release := busyOwn(t, r, o)
	defer release()
	for i := range maxOverflow + 1 {
		if a := acquire(t, r, o); a.c != own {
			t.Fatalf("request %d of a session client went to another instance", i)
		}
	}
	waitCount(t, r, 1)
}

// TestStatelessOverflowBurst: thirty requests at once while the own instance is busy start
// no more than maxOverflow instances; every request gets a connection.
func TestStatelessOverflowBurst(t *testing.T) {
	r := overflowRegistry(t, "    max_instances: 64\n")
	o := newOwner(t, r, true)
	own, release := busyOwn(t, r, o)
	defer release()
	const n = 30
	got := make(chan acquired, n)
	var peak atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, done, err := r.Instances().Acquire(ctx, "ev", o)
			if err != nil {
				t.Errorf("Acquire in a burst: %v", err)
				return
			}
			for k := r.Instances().Count("ev"); ; {
				if p := peak.Load(); k <= p || peak.CompareAndSwap(p, k) {
					break
				}
			}
			got <- acquired{c, done}
		}()
	}
	wg.Wait()
	close(got)
	overflow := map[*upstream.Conn]bool{}
	var done []func()
	defer func() {
		for _, d := range done {
			d()
		}
	}()
	for a := range got {
		if a.c != own {
			overflow[a.c] = true
		}
		done = append(done, a.done)
	}
	if len(overflow) != maxOverflow {
		t.Errorf("%d overflow instances served the burst, want %d", len(overflow), maxOverflow)
	}
	if p := peak.Load(); p > 1+maxOverflow {
		t.Errorf("%d instances ran at once in the burst, want at most %d", p, 1+maxOverflow)
	}
	if k := r.Instances().Count("ev"); k != 1+maxOverflow {
		t.Errorf("%d instances after the burst, want %d", k, 1+maxOverflow)
	}
}
