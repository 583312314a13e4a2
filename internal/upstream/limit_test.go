package upstream

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitQueued waits until n requests wait in l's queue (bounded in time).
func waitQueued(t *testing.T, l *Limiter, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for l.Waiting() != n {
		if time.Now().After(deadline) {
			t.Fatalf("queue holds %d, want %d", l.Waiting(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLimiterUnlimitedIsNil(t *testing.T) {
	if l := NewLimiter(0, 64, time.Second); l != nil {
		t.Fatalf("NewLimiter(0) = %+v, want nil (no limit)", l)
	}
}

func TestLimiterFIFO(t *testing.T) {
	l := NewLimiter(1, 64, 10*time.Second)
	if !l.TryAcquire() {
		t.Fatal("first TryAcquire failed on a free limiter")
	}
	if l.TryAcquire() {
		t.Fatal("second TryAcquire succeeded past the limit")
	}
	const n = 8
	order := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Acquire(context.Background()); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				order <- -1
				return
			}
			order <- i
			l.Release()
		}()
		waitQueued(t, l, i+1) // enqueue in a known order
	}
	l.Release()
	for want := 0; want < n; want++ {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("waiter %d ran in place %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("waiter %d never ran", want)
		}
	}
	wg.Wait() // the last waiter reports its turn before it releases the slot
	if !l.TryAcquire() {
		t.Fatal("slot not free after every waiter released")
	}
}

func TestLimiterTimeoutIsBusy(t *testing.T) {
	l := NewLimiter(1, 64, 50*time.Millisecond)
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := l.Acquire(context.Background())
	var be *BusyError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a BusyError", err)
	}
	if be.Ahead != 1 || be.Waited < 50*time.Millisecond || time.Since(start) > 5*time.Second {
		t.Fatalf("busy = %+v", be)
	}
	if want := "server busy: 1 calls ahead, waited 0."; be.Error()[:len(want)] != want {
		t.Fatalf("message %q", be.Error())
	}
	if l.Waiting() != 0 {
		t.Fatalf("timed-out waiter left in the queue (%d)", l.Waiting())
	}
	l.Release()
	if !l.TryAcquire() {
		t.Fatal("slot lost after a timeout")
	}
}

func TestLimiterFullQueueIsBusy(t *testing.T) {
	l := NewLimiter(1, 2, 10*time.Second)
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() { done <- l.Acquire(ctx) }()
		waitQueued(t, l, i+1)
	}
	err := l.Acquire(context.Background())
	var be *BusyError
	if !errors.As(err, &be) || be.Ahead != 3 || be.Waited != 0 {
		t.Fatalf("err = %v (%+v), want busy with 3 ahead and no wait", err, be)
	}
	cancel()
	for i := 0; i < 2; i++ {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("queued waiter: %v, want context.Canceled", err)
		}
	}
}

// TestLimiterFree: Free says whether a request would get a slot at once, without taking
// one: true below the limit, false at it and while a request waits (a slot handed to a
// waiter stays taken), true again once the slots are back.
func TestLimiterFree(t *testing.T) {
	l := NewLimiter(2, 64, 10*time.Second)
	for i := 0; i < 3; i++ {
		if !l.Free() {
			t.Fatalf("Free() = false on an idle limiter (ask %d)", i)
		}
	}
	if !l.TryAcquire() || !l.Free() {
		t.Fatal("one of two slots taken: want another free (Free must not have taken one)")
	}
	if !l.TryAcquire() {
		t.Fatal("the second slot was not free after Free said so")
	}
	if l.Free() {
		t.Fatal("Free() = true with both slots taken")
	}
	got := make(chan error, 1)
	go func() { got <- l.Acquire(context.Background()) }()
	waitQueued(t, l, 1)
	l.Release() // to the waiter: still full
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if l.Free() {
		t.Fatal("Free() = true after the released slot went to the waiter")
	}
	l.Release()
	if !l.Free() {
		t.Fatal("Free() = false with one of two slots given back")
	}
	l.Release()
	taken := 0
	for range 3 {
		if l.TryAcquire() {
			taken++
		}
	}
	if taken != 2 {
		t.Fatalf("after every release: %d slots taken, want exactly two", taken)
	}
}

// TestLimiterFreeAfterCancelledWaiter: a waiter that leaves the queue (cancelled) frees
// nothing: the running request still holds the only slot until it releases it.
func TestLimiterFreeAfterCancelledWaiter(t *testing.T) {
	l := NewLimiter(1, 64, 10*time.Second)
	if !l.TryAcquire() {
		t.Fatal("the slot was not free")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan error, 1)
	go func() { got <- l.Acquire(ctx) }()
	waitQueued(t, l, 1)
	if l.Free() {
		t.Fatal("Free() = true with the slot taken and a request waiting")
	}
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	if l.Free() {
		t.Fatal("Free() = true with the slot still taken")
	}
	l.Release()
	if !l.Free() {
		t.Fatal("Free() = false on an idle limiter")
	}
}

func TestLimiterCancelWhileQueued(t *testing.T) {
	l := NewLimiter(1, 64, 10*time.Second)
	if err := l.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- l.Acquire(ctx) }()
	waitQueued(t, l, 1)
	second := make(chan error, 1)
	go func() { second <- l.Acquire(context.Background()) }()
	waitQueued(t, l, 2)
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	waitQueued(t, l, 1)
	// The cancelled waiter is gone: the slot goes to the one behind it.
	l.Release()
	select {
	case err := <-second:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter behind a cancelled one never got the slot")
	}
	l.Release()
	if !l.TryAcquire() {
		t.Fatal("slot lost after a cancellation")
	}
}

// TestLimiterQueueShare: with a per-owner share of the queue, one owner that filled its
// share is refused at once, naming itself and the share, while another owner still gets
// a place in the queue and then its slot.
func TestLimiterQueueShare(t *testing.T) {
	l := NewLimiter(1, 4, 5*time.Second)
	l.MaxWaitPerOwner = 2
	if !l.TryAcquire() {
		t.Fatal("the first slot was not free")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	greedy := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func() { greedy <- l.AcquireAs(ctx, "greedy") }()
	}
	waitQueued(t, l, 2)
	err := l.AcquireAs(ctx, "greedy")
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Owner != "greedy" || busy.OwnerWaiting != 2 || busy.OwnerShare != 2 {
		t.Fatalf("third request of the greedy owner: %v (%+v), want a BusyError naming it and its share of 2", err, busy)
	}
	if !strings.Contains(err.Error(), `"greedy"`) || !strings.Contains(err.Error(), "share") {
		t.Errorf("error %q does not name the owner and its share", err)
	}
	other := make(chan error, 1)
	go func() { other <- l.AcquireAs(ctx, "modest") }()
	waitQueued(t, l, 3)
	// FIFO: the greedy owner's two go first, then the other one.
	for i := 0; i < 3; i++ {
		l.Release()
		var err error
		select {
		case err = <-greedy:
		case err = <-other:
			if i != 2 {
				t.Fatalf("the other owner overtook the queue at release %d", i)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("release %d woke nobody", i)
		}
		if err != nil {
			t.Fatalf("release %d: %v", i, err)
		}
	}
	// The owner's count went down as its requests left the queue.
	l.Release()
	if err := l.AcquireAs(ctx, "greedy"); err != nil {
		t.Fatalf("after its requests were served, the greedy owner is refused: %v", err)
	}
}
