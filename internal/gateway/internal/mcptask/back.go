package mcptask

import (
	"sync"
	"time"
)

// The way back: an upstream's notifications/tasks/status names the task by the
// upstream's id, and reaches the client under the gateway's id. The index is this
// process's, keyed by the upstream connection that created the task as well as the
// upstream's id: two instances of one server (two agents' per_agent instances, two
// sessions' own) may both number their tasks "1", and one instance's notification must
// not reach the session of the other's task.

// backKey names one task of one upstream connection. conn is a comparable value naming
// the connection; the dispatcher gives a weak pointer, so that the index never keeps a
// closed connection alive.
type backKey struct {
	conn any
	up   string
}

// backEntry is where a status notification for the key goes; id is empty when two tasks
// of the connection had the key (an upstream that gave one id twice): then nobody gets it.
type backEntry struct {
	id, session string
	expires     time.Time
}

// backIndex is the bounded reverse index of the tasks this process created.
type backIndex struct {
	mu sync.Mutex
	m  map[backKey]backEntry
}

// backCap bounds the reverse index; past it, expired entries go, then the whole index
// (it is a cache: a miss only drops a status notification).
const backCap = 1 << 16

// Bind records that the task the upstream connection conn knows as upstreamID is the
// gateway's id, created by session, for ttl (cut to MaxTTL). conn must be comparable.
// An upstream that gives one id to two live tasks of the connection loses the
// notifications of both: whose they are is no longer certain.
func (t *Table) Bind(conn any, upstreamID, id, session string, ttl time.Duration) {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	now := time.Now()
	exp := now.Add(min(ttl, MaxTTL))
	b := &t.back
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) >= backCap {
		for k, e := range b.m {
			if now.After(e.expires) {
				delete(b.m, k)
			}
		}
		if len(b.m) >= backCap {
			clear(b.m)
		}
	}
	k := backKey{conn: conn, up: upstreamID}
	if old, ok := b.m[k]; ok && now.Before(old.expires) && (old.id != id || old.session != session) {
		if old.expires.After(exp) {
			exp = old.expires
		}
		b.m[k] = backEntry{expires: exp}
		return
	}
	b.m[k] = backEntry{id: id, session: session, expires: exp}
}

// Back is the gateway id and the creating session of the task the connection conn knows
// as upstreamID, when this process created it there; ok is false otherwise (unknown,
// expired, or given twice by the upstream).
func (t *Table) Back(conn any, upstreamID string) (id, session string, ok bool) {
	b := &t.back
	b.mu.Lock()
	defer b.mu.Unlock()
	k := backKey{conn: conn, up: upstreamID}
	e, ok := b.m[k]
	if !ok {
		return "", "", false
	}
	if time.Now().After(e.expires) {
		delete(b.m, k)
		return "", "", false
	}
	return e.id, e.session, e.id != ""
}
