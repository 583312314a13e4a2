package pluginproc_test

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/mcpgw/mcpgw/internal/pluginproc"
	"github.com/mcpgw/mcpgw/plugin"
	"github.com/mcpgw/mcpgw/plugin/plugintest"
)

// TestBusyWaitOnlyForTheOnlyCall: a plugin call keeps the host's CPU busy while it is the
// only one in flight, and only as long as it is in flight; a second call meanwhile starts
// no busy wait of its own; with busy polling off nothing spins.
func TestBusyWaitOnlyForTheOnlyCall(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.NumCPU() < 2 || runtime.GOMAXPROCS(0) < 2 {
		t.Skipf("busy waiting needs Linux and two CPUs (have %s, %d CPUs, GOMAXPROCS %d)", runtime.GOOS, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	}
	bw := pluginproc.NewBusyWait(0, nil)
	remote, _ := launchBusy(t, os.Args[0], "fixture", nil, bw)
	get := func(ctx context.Context, id string) plugin.Resource {
		t.Helper()
		r, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: id})
		if err != nil {
			t.Fatalf("Get %s: %v", id, err)
		}
		return r
	}
	quiet := func() { // every busy wait has ended, well before its 5 s limit
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for bw.Spinning() != 0 {
			if time.Now().After(deadline) {
				t.Fatal("a busy wait went on after its call ended")
			}
			time.Sleep(time.Millisecond)
		}
	}

	get(context.Background(), "pid")
	if n := bw.Stats().Waits; n != 0 {
		t.Fatalf("busy polling off: %d busy waits", n)
	}

	bw.SetDuration(5 * time.Second)
	s0 := bw.Stats()
	for range 3 {
		get(context.Background(), "pid")
		quiet()
	}
	if s1 := bw.Stats(); s1.Waits-s0.Waits != 3 || s1.Caught-s0.Caught != 3 {
		t.Fatalf("3 sequential calls started %d busy waits, %d ended by their call; want 3 and 3", s1.Waits-s0.Waits, s1.Caught-s0.Caught)
	}

	n0 := bw.Stats().Waits
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := remote.Get(ctx, "prod", plugintest.Pod, plugin.GetInput{ID: "block"})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for bw.Stats().Waits == n0 { // the blocking call is in flight and spinning
		if time.Now().After(deadline) {
			t.Fatal("the only call in flight did not busy-wait")
		}
		time.Sleep(time.Millisecond)
	}
	if get(context.Background(), "blocked")["started"] == nil {
		t.Fatal("no answer from the second call")
	}
	if n := bw.Stats().Waits - n0; n != 1 {
		t.Errorf("two overlapping calls started %d busy waits, want 1 (the first's)", n)
	}
	cancel()
	<-done
	quiet() // the first call's wait (if the second did not end it) ended with the call
}
