package stateless

import "sync"

// Variants bounds the gateway-side sessions one caller (principal and agent) holds at
// once: sessions are keyed by the capabilities, conversation, task and executor a request
// names, so a caller that varied them on every request would otherwise open a session
// (and per-session upstream instances) per request. A real client uses a few; beyond this
// many, the oldest session ends.
const Variants = 8

// Table holds the gateway-side sessions of stateless callers by key (Key), at most
// Variants per caller (Caller), oldest first. It knows a session only as S and asks alive
// whether one has ended; ending one is the caller's business.
type Table[S comparable] struct {
	alive    func(S) bool
	mu       sync.Mutex
	sessions map[string]S
	byCaller map[string][]string // a caller's session keys, oldest first
}

// NewTable returns an empty table; alive reports whether a session still runs.
func NewTable[S comparable](alive func(S) bool) *Table[S] {
	return &Table[S]{alive: alive, sessions: map[string]S{}, byCaller: map[string][]string{}}
}

// Get returns the live session under key.
func (t *Table[S]) Get(key string) (S, bool) {
	t.mu.Lock()
	s, ok := t.sessions[key]
	t.mu.Unlock()
	if ok && t.alive(s) {
		return s, true
	}
	var zero S
	return zero, false
}

// Add keeps s under key as the newest session of caller. When another live session holds
// key already (two first requests of one caller raced), that one is the winner and s is
// not kept: the caller ends s. Otherwise winner is s, and evicted are the caller's oldest
// sessions beyond Variants, out of the table: the caller ends them. Entries of sessions
// that ended go at the same time.
func (t *Table[S]) Add(key, caller string, s S) (winner S, evicted []S) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if other, ok := t.sessions[key]; ok && t.alive(other) {
		return other, nil
	}
	for k, old := range t.sessions {
		if !t.alive(old) {
			delete(t.sessions, k)
		}
	}
	t.sessions[key] = s
	keys := t.byCaller[caller][:0:0]
	for _, k := range t.byCaller[caller] {
		if _, ok := t.sessions[k]; ok && k != key {
			keys = append(keys, k)
		}
	}
	keys = append(keys, key)
	for len(keys) > Variants {
		evicted = append(evicted, t.sessions[keys[0]])
		delete(t.sessions, keys[0])
		keys = keys[1:]
	}
	t.byCaller[caller] = keys
	for c, ks := range t.byCaller {
		if len(ks) == 0 {
			delete(t.byCaller, c)
		} else if _, ok := t.sessions[ks[len(ks)-1]]; !ok {
			delete(t.byCaller, c)
		}
	}
	return s, evicted
}

// Len is the number of sessions in the table, ended ones not yet swept included.
func (t *Table[S]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}
