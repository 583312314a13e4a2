package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestPruneConversations: records written before the cut-off go, then the oldest beyond
// keep; the newest stay readable. Both stores of one process, and through the cache.
func TestPruneConversations(t *testing.T) {
	b, err := OpenBolt(filepath.Join(t.TempDir(), "mcpgw.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for name, s := range map[string]Store{"memory": NewMemory(), "bolt": NewCached(b, 16)} {
		t.Run(name, func(t *testing.T) {
			p := PrunerOf(s)
			if p == nil {
				t.Fatal("no pruner behind the store")
			}
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := range 10 {
				if err := s.PutConversation(&Conversation{Agent: "a", ID: fmt.Sprint("c", i), FullViewHash: "h", Updated: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
					t.Fatal(err)
				}
			}
			// c0, c1 are too old; of c2..c9, keep 5 leaves c5..c9.
			n, err := p.PruneConversations(t0.Add(2*time.Minute), 5)
			if err != nil || n != 5 {
				t.Fatalf("pruned %d (%v), want 5", n, err)
			}
			for i := range 10 {
				_, err := s.GetConversation("a", fmt.Sprint("c", i))
				if kept := err == nil; kept != (i >= 5) || (err != nil && !errors.Is(err, ErrNotFound)) {
					t.Errorf("c%d: %v, want kept %v", i, err, i >= 5)
				}
			}
		})
	}
	if PrunerOf(&Redis{}) != nil {
		t.Error("Redis has a pruner: replicas would prune each other's conversations")
	}
}
