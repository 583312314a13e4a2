package store

import (
	"errors"
	"testing"
)

// TestWriteWatch: a failed write is remembered until a write succeeds; a conflict is an
// answer, not a failure of the store.
func TestWriteWatch(t *testing.T) {
	w := WatchWrites(NewMemory())
	if err := w.Put(&Record{ID: "a"}); err != nil || w.WriteError() != nil {
		t.Fatalf("a good write: %v, remembered %v", err, w.WriteError())
	}
	w.note(errors.New("no space left on device"))
	if w.WriteError() == nil {
		t.Fatal("a failed write was not remembered")
	}
	if _, err := w.PutCredential(&Credential{Kind: "k", Server: "s", Subject: "u"}, 5); !errors.Is(err, ErrConflict) {
		t.Fatalf("PutCredential of a wrong rev: %v, want a conflict", err)
	}
	if w.WriteError() == nil || errors.Is(w.WriteError(), ErrConflict) {
		t.Errorf("a conflict replaced the failure: %v", w.WriteError())
	}
	if err := w.Put(&Record{ID: "b"}); err != nil || w.WriteError() != nil {
		t.Errorf("after a good write: %v, remembered %v", err, w.WriteError())
	}
	if w.Unwrap() == nil {
		t.Error("no store behind the watch")
	}
}
