package instances

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSharesTakeGive: an agent takes up to its share, is refused past it (at once, or
// after waiting), and a give lets a waiting take through; other agents are not affected.
func TestSharesTakeGive(t *testing.T) {
	var sh instanceShares
	ctx := context.Background()
	a := shareKey{"ev", "greedy"}
	for i := range 2 {
		if err := sh.take(ctx, a, 2, 0); err != nil {
			t.Fatalf("take %d within the share: %v", i, err)
		}
	}
	err := sh.take(ctx, a, 2, 0)
	var se *ShareError
	if !errors.As(err, &se) || se.Held != 2 || se.Share != 2 || se.Agent != "greedy" || se.Server != "ev" {
		t.Fatalf("take past the share: %v", err)
	}
	const text = `agent "greedy" holds 2 of server "ev"'s instances, its whole share (servers.ev.max_instances_per_agent = 2; raise it, or upstream.max_instances_per_agent for every server)`
	if se.Error() != text {
		t.Fatalf("share error text:\n%s\nwant\n%s", se.Error(), text)
	}
	if err := sh.take(ctx, shareKey{"ev", "other"}, 2, 0); err != nil {
		t.Fatalf("another agent refused: %v", err)
	}
	start := time.Now()
	if err := sh.take(ctx, a, 2, 20*time.Millisecond); !errors.As(err, &se) {
		t.Fatalf("a waiting take past the share: %v", err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("a waiting take gave up after %v", d)
	}
	// The wake-up, on an agent no take has waited for yet (the one that gave up above
	// left its key's channel behind, which would make the wait below see nothing new).
	b := shareKey{"ev", "patient"}
	if err := sh.take(ctx, b, 1, 0); err != nil {
		t.Fatalf("take within the share: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- sh.take(ctx, b, 1, 5*time.Second) }()
	waitTaking(t, &sh, b) // a give before the take waits would not test the wake-up
	sh.give(b)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("a waiting take after a give: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a give did not wake the waiting take")
	}
	if n := sh.held[b]; n != 1 {
		t.Fatalf("held %d after give and take, want 1", n)
	}
}

// waitTaking waits (5 s at most) until a take of key waits at the share: it has left the
// channel a give closes.
func waitTaking(t *testing.T, sh *instanceShares, key shareKey) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		sh.mu.Lock()
		waiting := sh.freed[key] != nil
		sh.mu.Unlock()
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no take waited at the share within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestInstanceLimitErrorText: the refusal at max_instances names the keys to raise.
func TestInstanceLimitErrorText(t *testing.T) {
	const want = `server "ev" runs all 3 of its instances (servers.ev.max_instances, default upstream.max_instances)`
	if got := instanceLimitError("ev", 3).Error(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
