package store

import (
	"errors"
	"sync"
)

// WriteWatch is a Store that remembers whether its last write failed: a store can answer
// reads (the readiness probe's) while every write fails (a full disk: ENOSPC), and a
// gateway that cannot keep its sessions is not ready. A failed write is reported by
// WriteError until a later write succeeds.
type WriteWatch struct {
	Store
	mu  sync.Mutex
	err error
}

// WatchWrites wraps s.
func WatchWrites(s Store) *WriteWatch { return &WriteWatch{Store: s} }

// Unwrap returns the store behind the watch.
func (w *WriteWatch) Unwrap() Store { return w.Store }

// WriteError is the error of the last write, nil when it succeeded (or none was made).
func (w *WriteWatch) WriteError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// note records the outcome of a write; a conflict or a missing record is an answer, not
// a failure of the store.
func (w *WriteWatch) note(err error) error {
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
		return err
	}
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	return err
}

func (w *WriteWatch) Put(r *Record) error        { return w.note(w.Store.Put(r)) }
func (w *WriteWatch) Delete(id string) error     { return w.note(w.Store.Delete(id)) }
func (w *WriteWatch) PutTask(t *Task) error      { return w.note(w.Store.PutTask(t)) }
func (w *WriteWatch) DeleteTask(id string) error { return w.note(w.Store.DeleteTask(id)) }
func (w *WriteWatch) PutConversation(c *Conversation) error {
	return w.note(w.Store.PutConversation(c))
}
func (w *WriteWatch) PutConfig(e *ConfigEntry) error { return w.note(w.Store.PutConfig(e)) }
func (w *WriteWatch) DeleteConfig(kind, name string) error {
	return w.note(w.Store.DeleteConfig(kind, name))
}
func (w *WriteWatch) PutPin(p *Pin) error { return w.note(w.Store.PutPin(p)) }
func (w *WriteWatch) DeletePin(server, kind, name string) error {
	return w.note(w.Store.DeletePin(server, kind, name))
}

func (w *WriteWatch) PutCredential(c *Credential, rev int64) (int64, error) {
	n, err := w.Store.PutCredential(c, rev)
	return n, w.note(err)
}

func (w *WriteWatch) DeleteCredential(kind, server, subject string) error {
	return w.note(w.Store.DeleteCredential(kind, server, subject))
}
