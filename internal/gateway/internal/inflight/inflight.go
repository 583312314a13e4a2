// Package inflight keeps a session's requests in flight by the client's request id: its
// upstream calls, those still waiting for an instance's slot, and its plugin calls, so that
// a client's cancellation finds each and the session's end stops them all.
package inflight

import (
	"context"
	"sync"
)

// Table is one session's requests in flight: upstream calls C and plugin calls P. The
// zero value is ready.
type Table[C, P comparable] struct {
	mu      sync.Mutex
	closed  bool
	calls   map[string]C
	waiting map[string]context.CancelFunc
	plugins map[string]P
}

// AddCall keeps c as the upstream call of request id (a later one of the same id
// replaces it).
func (t *Table[C, P]) AddCall(id string, c C) {
	t.mu.Lock()
	if t.calls == nil {
		t.calls = map[string]C{}
	}
	t.calls[id] = c
	t.mu.Unlock()
}

// DropCall forgets the call of id, unless the id was reused by a later call.
func (t *Table[C, P]) DropCall(id string, c C) {
	t.mu.Lock()
	if old, ok := t.calls[id]; ok && old == c {
		delete(t.calls, id)
	}
	t.mu.Unlock()
}

// Wait keeps cancel as what ends request id's wait for an instance's slot; Unwait
// forgets it once the wait is over.
func (t *Table[C, P]) Wait(id string, cancel context.CancelFunc) {
	t.mu.Lock()
	if t.waiting == nil {
		t.waiting = map[string]context.CancelFunc{}
	}
	t.waiting[id] = cancel
	t.mu.Unlock()
}

// Unwait forgets request id's wait.
func (t *Table[C, P]) Unwait(id string) {
	t.mu.Lock()
	delete(t.waiting, id)
	t.mu.Unlock()
}

// AddPlugin keeps p as the plugin call of request id; false once the table is closed (the
// session ended: the call must not start).
func (t *Table[C, P]) AddPlugin(id string, p P) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	if t.plugins == nil {
		t.plugins = map[string]P{}
	}
	t.plugins[id] = p
	return true
}

// DropPlugin forgets the plugin call of id, unless the id was reused by a later call.
func (t *Table[C, P]) DropPlugin(id string, p P) {
	t.mu.Lock()
	if old, ok := t.plugins[id]; ok && old == p {
		delete(t.plugins, id)
	}
	t.mu.Unlock()
}

// Plugin is the plugin call of request id.
func (t *Table[C, P]) Plugin(id string) (P, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.plugins[id]
	return p, ok
}

// Cancelled is what a client's cancellation of request id reaches, in order: its upstream
// call, else the cancel of its wait for a slot (nil: none).
func (t *Table[C, P]) Cancelled(id string) (c C, ok bool, cancelWait context.CancelFunc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.calls[id]; ok {
		return c, true, nil
	}
	return c, false, t.waiting[id]
}

// Close empties the table and returns the calls and plugin calls that were in it, for the
// session's end to stop; no plugin call is added after it.
func (t *Table[C, P]) Close() (calls []C, plugins []P) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for _, c := range t.calls {
		calls = append(calls, c)
	}
	for _, p := range t.plugins {
		plugins = append(plugins, p)
	}
	t.calls, t.plugins = nil, nil
	return calls, plugins
}

// Busy reports whether any request is in flight or waiting.
func (t *Table[C, P]) Busy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls) > 0 || len(t.waiting) > 0 || len(t.plugins) > 0
}
